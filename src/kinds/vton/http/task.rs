//! How VTON tasks look in the browser: the try-on beside its garment,
//! person and reference, rated on the three-level scale.

use super::super::config::IMAGE_FIELDS;
use super::super::{rating, Vton, LABELS};
use crate::core::kind::contract::CampaignRules;
use crate::http::task_pages::{TaskPages, TaskView, Thumbnail};
use askama::Template;
use serde_json::Value;

#[derive(Template)]
#[template(path = "kinds/vton/templates/task.html")]
struct VtonTask<'a> {
    view: &'a TaskView<'a>,
    tryon: String,
    garment: String,
    person: String,
    reference: String,
    labels: [&'static str; 3],
    current: u8,
}

impl TaskPages for Vton {
    fn instructions(&self) -> Option<&'static str> {
        Some(include_str!("../templates/instructions.html"))
    }

    fn demo_picture(&self, role: &str, n: usize) -> Option<String> {
        super::super::demo::picture(role, n)
    }

    fn thumbnails(&self, _rules: &dyn CampaignRules, payload: &Value) -> Vec<Thumbnail> {
        // The try-on first, as the task shows it.
        IMAGE_FIELDS
            .iter()
            .filter_map(|field| {
                let url = payload[*field].as_str()?.to_owned();
                Some(Thumbnail { url, label: (*field).to_owned() })
            })
            .collect()
    }

    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        let field = |f: &str| view.item.payload.get(f).and_then(Value::as_str).unwrap_or_default().to_owned();
        VtonTask {
            view,
            tryon: field("tryon"),
            garment: field("garment"),
            person: field("person"),
            reference: field("reference"),
            labels: LABELS,
            current: view.answer.and_then(rating).unwrap_or(0),
        }
        .render()
    }

    fn render_answer(&self, _payload: &Value, answer: &Value) -> String {
        match rating(answer) {
            Some(r) => format!("<strong>{r}</strong> {}", LABELS[usize::from(r) - 1]),
            None => "<code>?</code>".to_owned(),
        }
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("vton")
    }
}
