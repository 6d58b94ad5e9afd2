//! How an A100 question looks in the browser: the outfit with its blank,
//! and the five choices in this worker's order. LAT and AAT look the same.

use super::super::{Aat, Lat};
use crate::core::kind::contract::CampaignRules;
use crate::http::task_pages::{escape_html, TaskPages, TaskView, Thumbnail};
use askama::Template;
use serde_json::Value;

#[derive(Template)]
#[template(path = "kinds/a100/templates/task.html")]
struct A100Task<'a> {
    view: &'a TaskView<'a>,
    outfit: Vec<(String, String)>,
    blank: String,
    choices: Vec<(String, String)>,
    current: String,
}

fn render(view: &TaskView<'_>) -> Result<String, askama::Error> {
    let p = &view.item.payload;
    let pairs = |key: &str, a: &str, b: &str| -> Vec<(String, String)> {
        p[key]
            .as_array()
            .into_iter()
            .flatten()
            .map(|x| (x[a].as_str().unwrap_or_default().to_owned(), x[b].as_str().unwrap_or_default().to_owned()))
            .collect()
    };
    A100Task {
        view,
        outfit: pairs("outfit", "image", "category"),
        blank: p["blank_category"].as_str().unwrap_or_default().to_owned(),
        choices: pairs("choices", "id", "image"),
        current: view.answer.and_then(|a| a["choice"].as_str()).unwrap_or_default().to_owned(),
    }
    .render()
}

/// An answer as an admin or reviewer sees it: the chosen image, small, and
/// which of the question's choices it is, by number and by the id the
/// answer stores.
fn render_answer(payload: &Value, answer: &Value) -> String {
    let Some(chosen) = answer["choice"].as_str() else { return "<code>?</code>".to_owned() };
    let choices = payload["choices"].as_array().map(Vec::as_slice).unwrap_or_default();
    match choices.iter().position(|c| c["id"] == chosen) {
        Some(n) => {
            let image = crate::core::work::handles::admin_address(choices[n]["image"].as_str().unwrap_or_default());
            format!(
                r#"<span class="chosen-answer"><img src="{}" alt="" class="answer-thumb" width="48" height="48"> choice {} of {} (<code>{}</code>)</span>"#,
                escape_html(&image),
                n + 1,
                choices.len(),
                escape_html(chosen)
            )
        }
        None => format!("<code>{}</code> (not one of this question's choices)", escape_html(chosen)),
    }
}

/// A question's images at a glance: the outfit by its categories, then each
/// choice by the id its answers store, so the data browser's answers can be
/// matched to the pictures.
fn thumbnails(payload: &Value) -> Vec<Thumbnail> {
    let list = |key: &str| payload[key].as_array().map(Vec::as_slice).unwrap_or_default().to_vec();
    let outfit = list("outfit").into_iter().filter_map(|o| {
        Some(Thumbnail { url: o["image"].as_str()?.to_owned(), label: format!("outfit: {}", o["category"].as_str()?) })
    });
    let choices = list("choices").into_iter().filter_map(|c| {
        Some(Thumbnail { url: c["image"].as_str()?.to_owned(), label: format!("choice {}", c["id"].as_str()?) })
    });
    outfit.chain(choices).collect()
}

macro_rules! a100_pages {
    ($ty:ty) => {
        impl TaskPages for $ty {
            fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
                render(view)
            }

            fn render_answer(&self, payload: &Value, answer: &Value) -> String {
                render_answer(payload, answer)
            }

            fn thumbnails(&self, _rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail> {
                thumbnails(payload)
            }

            fn admin_page(&self) -> Option<&'static str> {
                Some("a100")
            }
        }
    };
}

a100_pages!(Lat);
a100_pages!(Aat);

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn question() -> Value {
        json!({"outfit": [{"image": "/top.png", "category": "Tops"}],
               "choices": [{"id": "q1c1", "image": "/c1.png"}, {"id": "q1c2", "image": "/c2\"<x>.png"}]})
    }

    #[test]
    fn an_answer_shows_the_chosen_image_and_which_choice_it_is() {
        let html = render_answer(&question(), &json!({"choice": "q1c2"}));
        assert!(html.contains("choice 2 of 2") && html.contains("<code>q1c2</code>"), "{html}");
        assert!(html.contains(r#"src="/c2&quot;&lt;x&gt;.png""#), "the address is escaped: {html}");
        assert!(!html.contains("{\"choice\""), "no raw JSON: {html}");
        let unknown = render_answer(&question(), &json!({"choice": "<b>"}));
        assert!(unknown.contains("&lt;b&gt;") && unknown.contains("not one of"), "{unknown}");
    }

    #[test]
    fn the_images_are_labelled_as_answers_name_them() {
        let labels: Vec<String> = thumbnails(&question()).into_iter().map(|t| t.label).collect();
        assert_eq!(labels, ["outfit: Tops", "choice q1c1", "choice q1c2"]);
    }
}
