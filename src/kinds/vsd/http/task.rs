//! How VSD pairs look in the browser: the query beside its candidate, with
//! the next pair's images fetched ahead.

use super::super::config::VsdConfig;
use super::super::pair::{ShownPair, VsdPair};
use super::super::{Label, Vsd, VsdAnswer};
use crate::core::kind::contract::CampaignRules;
use crate::core::kind::typed::config_of;
use crate::http::task_pages::{Task, TaskForm, Thumbnail, TypedTaskPages};
use askama::Template;

#[derive(Template)]
#[template(path = "kinds/vsd/templates/task.html")]
struct VsdTask<'a> {
    view: &'a TaskForm<'a>,
    query: String,
    candidate: String,
    next: Vec<String>,
    current: String,
}

impl TypedTaskPages for Vsd {
    type Shown = ShownPair;

    fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error> {
        let image = |i: &Option<String>| i.clone().unwrap_or_default();
        VsdTask {
            query: image(&task.item.query_image),
            candidate: image(&task.item.candidate_image),
            next: task
                .next
                .as_ref()
                .map(|n| vec![image(&n.query_image), image(&n.candidate_image)])
                .unwrap_or_default(),
            current: task.answer.as_ref().map(|a| a.label.as_str().to_owned()).unwrap_or_default(),
            view: &task.form,
        }
        .render()
    }

    fn thumbnails(&self, rules: &dyn CampaignRules, pair: &VsdPair) -> Vec<Thumbnail> {
        let Some(config) = config_of::<VsdConfig>(rules) else { return Vec::new() };
        [("query", &pair.query), ("candidate", &pair.candidate)]
            .into_iter()
            .map(|(role, id)| Thumbnail { url: config.image_url(id), label: format!("{role} {id}") })
            .collect()
    }

    fn render_answer(&self, _pair: &ShownPair, answer: &VsdAnswer) -> String {
        let text = match answer.label {
            Label::Similar => "Similar",
            Label::NotSimilar => "Not similar",
            Label::Unsure => "Unsure",
            Label::Broken => "Flagged as broken",
        };
        format!("<strong>{text}</strong>")
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("vsd")
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::http::task_pages::TaskPages;
    use serde_json::json;

    #[test]
    fn stored_answers_are_shown_in_words_and_what_does_not_read_as_it_is() {
        let shown = json!({"query_image": "/q.jpg", "candidate_image": null});
        assert_eq!(TaskPages::render_answer(&Vsd, &shown, &json!({"label": "unsure"})), "<strong>Unsure</strong>");
        assert_eq!(
            TaskPages::render_answer(&Vsd, &shown, &json!({"label": "maybe<"})),
            "<code>{&quot;label&quot;:&quot;maybe&lt;&quot;}</code>",
            "an answer this build does not read is shown as stored, escaped"
        );
    }
}
