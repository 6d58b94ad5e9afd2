//! How VTON tasks look in the browser: the try-on beside its garment,
//! person and reference, rated on the three-level scale.

use super::super::config::{VtonAnswer, VtonImages};
use super::super::{Vton, LABELS};
use crate::core::kind::contract::CampaignRules;
use crate::http::task_pages::{Task, TaskForm, Thumbnail, TypedTaskPages};
use askama::Template;

#[derive(Template)]
#[template(path = "kinds/vton/templates/task.html")]
struct VtonTask<'a> {
    view: &'a TaskForm<'a>,
    tryon: String,
    garment: String,
    person: String,
    reference: String,
    labels: [&'static str; 3],
    current: u8,
}

impl TypedTaskPages for Vton {
    type Shown = VtonImages;

    fn instructions(&self) -> Option<&'static str> {
        Some(include_str!("../templates/instructions.html"))
    }

    fn demo_picture(&self, role: &str, n: usize) -> Option<String> {
        super::super::demo::picture(role, n)
    }

    fn thumbnails(&self, _rules: &dyn CampaignRules, images: &VtonImages) -> Vec<Thumbnail> {
        // The try-on first, as the task shows it.
        images
            .fields()
            .into_iter()
            .filter(|(_, url)| !url.is_empty())
            .map(|(field, url)| Thumbnail { url: url.to_owned(), label: field.to_owned() })
            .collect()
    }

    fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error> {
        let images = &task.item;
        VtonTask {
            view: &task.form,
            tryon: images.tryon.clone(),
            garment: images.garment.clone(),
            person: images.person.clone(),
            reference: images.reference.clone(),
            labels: LABELS,
            current: task.answer.as_ref().map_or(0, |a| a.rating),
        }
        .render()
    }

    fn render_answer(&self, _images: &VtonImages, answer: &VtonAnswer) -> String {
        match usize::from(answer.rating).checked_sub(1).and_then(|at| LABELS.get(at)) {
            Some(label) => format!("<strong>{}</strong> {label}", answer.rating),
            None => "<code>?</code>".to_owned(),
        }
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("vton")
    }
}
