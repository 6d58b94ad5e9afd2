//! How VSD pairs look in the browser: the query beside its candidate, with
//! the next pair's images fetched ahead.

use super::super::config::VsdConfig;
use super::super::{answer_of, eds, Answer, Vsd};
use crate::core::kind::contract::CampaignRules;
use crate::core::kind::typed::config_of;
use crate::http::task_pages::{TaskPages, TaskView, Thumbnail};
use askama::Template;
use serde_json::Value;

#[derive(Template)]
#[template(path = "kinds/vsd/templates/task.html")]
struct VsdTask<'a> {
    view: &'a TaskView<'a>,
    query: String,
    candidate: String,
    next: Vec<String>,
    current: String,
}

impl TaskPages for Vsd {
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        let image = |p: &Value, f: &str| p.get(f).and_then(Value::as_str).unwrap_or_default().to_owned();
        VsdTask {
            query: image(&view.item.payload, "query_image"),
            candidate: image(&view.item.payload, "candidate_image"),
            next: view
                .next
                .map(|n| vec![image(&n.payload, "query_image"), image(&n.payload, "candidate_image")])
                .unwrap_or_default(),
            current: view.answer.and_then(|a| a.get("label")).and_then(Value::as_str).unwrap_or_default().to_owned(),
            view,
        }
        .render()
    }

    fn thumbnails(&self, rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail> {
        let Some(config) = config_of::<VsdConfig>(rules) else { return Vec::new() };
        ["query", "candidate"]
            .into_iter()
            .filter_map(|role| {
                let id = payload[role].as_str()?;
                Some(Thumbnail { url: config.image_url(id), label: format!("{role} {id}") })
            })
            .collect()
    }

    fn render_answer(&self, _payload: &Value, answer: &Value) -> String {
        let text = match answer_of(answer) {
            Some(Answer::Vote(eds::Vote::Similar)) => "Similar",
            Some(Answer::Vote(eds::Vote::NotSimilar)) => "Not similar",
            Some(Answer::Vote(eds::Vote::Unsure)) => "Unsure",
            Some(Answer::Broken) => "Flagged as broken",
            None => "?",
        };
        format!("<strong>{text}</strong>")
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("vsd")
    }
}
