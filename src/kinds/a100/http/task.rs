//! How an A100 question looks in the browser: the outfit with its blank,
//! and the five choices in this worker's order. LAT and AAT look the same.

use super::super::{Aat, Lat};
use crate::http::task_pages::{TaskPages, TaskView};
use askama::Template;

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

impl TaskPages for Lat {
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        render(view)
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("a100")
    }
}

impl TaskPages for Aat {
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        render(view)
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("a100")
    }
}
