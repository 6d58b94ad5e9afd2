//! How an A100 question looks in the browser: the outfit with its blank,
//! and the five choices in this worker's order. LAT and AAT look the same.

use super::super::config::{A100Answer, PublicQuestion};
use super::super::question::Question;
use super::super::{Aat, Lat};
use crate::core::kind::contract::CampaignRules;
use crate::http::task_pages::{escape_html, Task, TaskForm, Thumbnail, TypedTaskPages};
use askama::Template;

#[derive(Template)]
#[template(path = "kinds/a100/templates/task.html")]
struct A100Task<'a> {
    view: &'a TaskForm<'a>,
    outfit: Vec<(String, String)>,
    blank: String,
    choices: Vec<(String, String)>,
    current: String,
}

fn render(
    form: &TaskForm<'_>,
    question: &PublicQuestion,
    answer: Option<&A100Answer>,
) -> Result<String, askama::Error> {
    A100Task {
        view: form,
        outfit: question.outfit.iter().map(|o| (o.image.clone(), o.category.clone())).collect(),
        blank: question.blank_category.clone(),
        choices: question.choices.iter().map(|c| (c.id.clone(), c.image.clone())).collect(),
        current: answer.map(|a| a.choice.clone()).unwrap_or_default(),
    }
    .render()
}

/// An answer as an admin or reviewer sees it: the chosen image, small, and
/// which of the question's choices it is, by number and by the id the
/// answer stores.
fn render_answer(question: &PublicQuestion, answer: &A100Answer) -> String {
    let chosen = &answer.choice;
    let choices = &question.choices;
    match choices.iter().position(|c| c.id == *chosen) {
        Some(n) => {
            let image = crate::core::work::handles::admin_address(&choices[n].image);
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
fn thumbnails(question: &Question) -> Vec<Thumbnail> {
    let outfit =
        question.outfit.iter().map(|o| Thumbnail { url: o.image.clone(), label: format!("outfit: {}", o.category) });
    let choices =
        question.choices.iter().map(|c| Thumbnail { url: c.image.clone(), label: format!("choice {}", c.id) });
    outfit.chain(choices).collect()
}

macro_rules! a100_pages {
    ($ty:ty) => {
        impl TypedTaskPages for $ty {
            type Shown = PublicQuestion;

            fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error> {
                render(&task.form, &task.item, task.answer.as_ref())
            }

            fn render_answer(&self, question: &PublicQuestion, answer: &A100Answer) -> String {
                render_answer(question, answer)
            }

            fn thumbnails(&self, _rules: &dyn CampaignRules, question: &Question) -> Vec<Thumbnail> {
                thumbnails(question)
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
    use super::super::super::config::PublicChoice;
    use super::super::super::question::{Choice, OutfitItem};
    use super::*;

    fn shown() -> PublicQuestion {
        PublicQuestion {
            outfit: vec![OutfitItem { image: "/top.png".into(), category: "Tops".into() }],
            blank_category: "Shoes".into(),
            choices: vec![
                PublicChoice { id: "q1c1".into(), image: "/c1.png".into() },
                PublicChoice { id: "q1c2".into(), image: "/c2\"<x>.png".into() },
            ],
        }
    }

    #[test]
    fn an_answer_shows_the_chosen_image_and_which_choice_it_is() {
        let html = render_answer(&shown(), &A100Answer { choice: "q1c2".into() });
        assert!(html.contains("choice 2 of 2") && html.contains("<code>q1c2</code>"), "{html}");
        assert!(html.contains(r#"src="/c2&quot;&lt;x&gt;.png""#), "the address is escaped: {html}");
        assert!(!html.contains("{\"choice\""), "no raw JSON: {html}");
        let unknown = render_answer(&shown(), &A100Answer { choice: "<b>".into() });
        assert!(unknown.contains("&lt;b&gt;") && unknown.contains("not one of"), "{unknown}");
    }

    #[test]
    fn the_images_are_labelled_as_answers_name_them() {
        let question = Question {
            id: "q1".into(),
            outfit: vec![OutfitItem { image: "/top.png".into(), category: "Tops".into() }],
            blank_category: "Shoes".into(),
            choices: ["q1c1", "q1c2"]
                .map(|id| Choice { id: id.into(), image: format!("/{id}.png"), category: None })
                .to_vec(),
            answer: None,
            dimension: None,
            sub_dimension: None,
            attention_check: false,
            overrides: Vec::new(),
        };
        let labels: Vec<String> = thumbnails(&question).into_iter().map(|t| t.label).collect();
        assert_eq!(labels, ["outfit: Tops", "choice q1c1", "choice q1c2"]);
    }
}
