//! How a Fashionpedia mask looks in the browser: the mask drawn over its
//! image, the super-category's attributes as ticks, and the form read back
//! into an answer.

use super::super::{masks, options, Answer, Fashionpedia};
use crate::http::task_pages::{escape_html, TaskPages, TaskView};
use askama::Template;
use serde_json::{json, Value};
use std::collections::BTreeMap;

#[derive(Template)]
#[template(path = "kinds/fashionpedia/templates/task.html")]
struct FpTask<'a> {
    view: &'a TaskView<'a>,
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

impl TaskPages for Fashionpedia {
    fn render_task(&self, view: &TaskView<'_>) -> Result<String, askama::Error> {
        let p = &view.item.payload;
        let width = u32::try_from(p["width"].as_u64().unwrap_or(1)).unwrap_or(1);
        let height = u32::try_from(p["height"].as_u64().unwrap_or(1)).unwrap_or(1);
        let mask = masks::Mask::parse(&p["segmentation"], width, height).ok();
        let path = mask.as_ref().map(masks::Mask::svg_path).unwrap_or_default();
        let outline = mask.as_ref().map(masks::Mask::outline_path).unwrap_or_default();
        let reviewed = view.under_review.and_then(Answer::of);
        // A reviewer starts from the answer under review (ticking everything
        // again was re-entry, not review); their own answer once given.
        let current = view.answer.and_then(Answer::of).or_else(|| reviewed.clone()).unwrap_or_default();
        FpTask {
            image: p["image_url"].as_str().unwrap_or_default().to_owned(),
            width,
            height,
            path,
            outline,
            category: p["category"].as_str().unwrap_or_default().to_owned(),
            supercategory: p["supercategory"].as_str().unwrap_or_default().to_owned(),
            options: options(p)
                .into_iter()
                .enumerate()
                .map(|(i, o)| (o.id, o.name, o.group, current.attributes.contains(&o.id), i + 1))
                .collect(),
            not_sure: current.not_sure,
            not_on_list: current.not_on_list,
            missing: current.missing.clone(),
            answered: view.answer.is_some(),
            suggested: {
                let ids: Vec<u64> = p["suggested"].as_array().into_iter().flatten().filter_map(Value::as_u64).collect();
                options(p).into_iter().filter(|o| ids.contains(&u64::from(o.id))).map(|o| o.name).collect()
            },
            reviewed,
            view,
        }
        .render()
    }

    fn answer_from_form(&self, fields: &[(String, String)]) -> Value {
        let attributes: Vec<u32> =
            fields.iter().filter(|(k, _)| k == "attr").filter_map(|(_, v)| v.parse().ok()).collect();
        let flag = |name: &str| fields.iter().any(|(k, v)| k == name && v != "0" && !v.is_empty());
        let missing = fields.iter().find(|(k, _)| k == "missing").map_or("", |(_, v)| v.as_str());
        json!({"attributes": attributes, "not_sure": flag("not_sure"), "not_on_list": flag("not_on_list"), "missing": missing})
    }

    fn render_answer(&self, payload: &Value, answer: &Value) -> String {
        let Some(a) = Answer::of(answer) else { return "<code>?</code>".into() };
        let names: BTreeMap<u32, String> = options(payload).into_iter().map(|o| (o.id, o.name)).collect();
        let mut parts: Vec<String> =
            a.attributes.iter().map(|id| escape_html(names.get(id).map_or("?", String::as_str))).collect();
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
