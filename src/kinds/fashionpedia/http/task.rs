//! How a Fashionpedia mask looks in the browser: the mask drawn over its
//! image, the super-category's attributes as ticks, and the form read back
//! into an answer.

use super::super::item::FpTask as Shown;
use super::super::{masks, Answer, Fashionpedia};
use crate::http::task_pages::{escape_html, Task, TaskForm, TypedTaskPages};
use askama::Template;
use std::collections::BTreeMap;

#[derive(Template)]
#[template(path = "kinds/fashionpedia/templates/task.html")]
struct FpTask<'a> {
    view: &'a TaskForm<'a>,
    image: String,
    width: u32,
    height: u32,
    path: String,
    /// The mask's outline (for RLE its pixel edges, not its runs).
    outline: String,
    category: String,
    supercategory: String,
    options: Vec<(u32, String, Option<String>, bool, usize)>,
    not_sure: bool,
    not_on_list: bool,
    missing: String,
    answered: bool,
    /// Attribute names a source suggests (DeepFashion2's category's sleeves).
    suggested: Vec<String>,
    /// The answer under review, when this task reviews another expert's:
    /// the form starts from it and "Accept" posts it as it is.
    reviewed: Option<Answer>,
}

impl TypedTaskPages for Fashionpedia {
    type Shown = Shown;

    fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error> {
        let p = &task.item;
        let (width, height) = (p.width.max(1), p.height.max(1));
        let mask = masks::Mask::parse(&p.segmentation, width, height).ok();
        let path = mask.as_ref().map(masks::Mask::svg_path).unwrap_or_default();
        let outline = mask.as_ref().map(masks::Mask::outline_path).unwrap_or_default();
        let reviewed = task.under_review.clone();
        // A reviewer starts from the answer under review (ticking everything
        // again was re-entry, not review); their own answer once given.
        let current = task.answer.clone().or_else(|| reviewed.clone()).unwrap_or_default();
        FpTask {
            image: p.image_url.clone(),
            width,
            height,
            path,
            outline,
            category: p.category.clone(),
            supercategory: p.supercategory.clone(),
            options: p
                .options
                .iter()
                .enumerate()
                .map(|(i, o)| (o.id, o.name.clone(), o.group.clone(), current.attributes.contains(&o.id), i + 1))
                .collect(),
            not_sure: current.not_sure,
            not_on_list: current.not_on_list,
            missing: current.missing.clone(),
            answered: task.answer.is_some(),
            suggested: p.options.iter().filter(|o| p.suggested.contains(&o.id)).map(|o| o.name.clone()).collect(),
            reviewed,
            view: &task.form,
        }
        .render()
    }

    fn answer_from_form(&self, fields: &[(String, String)]) -> Option<Answer> {
        let attributes: Vec<u32> =
            fields.iter().filter(|(k, _)| k == "attr").filter_map(|(_, v)| v.parse().ok()).collect();
        let flag = |name: &str| fields.iter().any(|(k, v)| k == name && v != "0" && !v.is_empty());
        let missing = fields.iter().find(|(k, _)| k == "missing").map_or("", |(_, v)| v.as_str());
        Some(Answer {
            attributes,
            not_sure: flag("not_sure"),
            not_on_list: flag("not_on_list"),
            missing: missing.to_owned(),
        })
    }

    fn render_answer(&self, shown: &Shown, a: &Answer) -> String {
        let names: BTreeMap<u32, &str> = shown.options.iter().map(|o| (o.id, o.name.as_str())).collect();
        let mut parts: Vec<String> =
            a.attributes.iter().map(|id| escape_html(names.get(id).copied().unwrap_or("?"))).collect();
        if a.not_sure {
            parts.push("<em>not sure</em>".into());
        }
        if a.not_on_list {
            parts.push(format!("<em>not on the list</em>: {}", escape_html(&a.missing)));
        }
        format!(
            r#"<ul class="reviewed-attributes">{}</ul>"#,
            parts.iter().map(|p| format!("<li>{p}</li>")).collect::<String>()
        )
    }

    fn admin_page(&self) -> Option<&'static str> {
        Some("fashionpedia")
    }
}
