//! VTON ground truth: curation over the campaign's questionnaires, then one
//! record per image in a layout close to the released benchmark's
//! (`reward`, `votes`, `n_annotation`, `vton_model_id`, image paths).

use super::curation::{curate, Answer, Thresholds};
use crate::core::kind::{AggregationInput, Table};
use crate::stats::aggregate::normalize_score;
use serde_json::{json, Value};
use std::collections::HashMap;

/// Curates the campaign and scores every image.
pub fn aggregate(input: &AggregationInput, thresholds: &Thresholds) -> Value {
    let by_id: HashMap<_, _> = input.items.iter().map(|i| (i.id, i)).collect();
    let sanity: HashMap<String, u8> = input
        .items
        .iter()
        .filter_map(|i| Some((i.external_id.clone(), i.gold.as_ref()?.get("rating")?.as_u64()? as u8)))
        .collect();
    let answers: Vec<Answer> = input
        .responses
        .iter()
        .filter_map(|r| {
            Some(Answer {
                questionnaire: r.batch_id.to_string(),
                annotator: r.annotator_id.to_string(),
                task: by_id.get(&r.item_id)?.external_id.clone(),
                rating: r.answer.get("rating")?.as_u64()? as u8,
            })
        })
        .collect();
    let curation = curate(&answers, &sanity, thresholds);
    let items: HashMap<&str, &Value> = input.items.iter().map(|i| (i.external_id.as_str(), &i.payload)).collect();
    let images: Vec<Value> = curation
        .scores
        .iter()
        .map(|s| {
            let p = items.get(s.task.as_str()).copied().unwrap_or(&Value::Null);
            json!({
                "image": s.task,
                "vton_model_id": p.get("model"),
                "category": p.get("category"),
                "dataset": p.get("dataset"),
                "tryon": p.get("tryon"),
                "garment": p.get("garment"),
                "person": p.get("person"),
                "reference": p.get("reference"),
                "mean": s.mean,
                "reward": normalize_score(s.mean, 3),
                "votes": s.votes,
                "n_annotation": s.n,
            })
        })
        .collect();
    json!({ "thresholds": thresholds, "curation": curation, "images": images })
}

/// One CSV row per image.
pub fn table(aggregate: &Value) -> Table {
    let header = [
        "image",
        "vton_model_id",
        "category",
        "dataset",
        "tryon",
        "garment",
        "person",
        "reference",
        "mean",
        "reward",
        "n_annotation",
        "votes_1",
        "votes_2",
        "votes_3",
    ];
    let cell = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let rows = aggregate["images"]
        .as_array()
        .map(|images| {
            images
                .iter()
                .map(|img| {
                    let mut row: Vec<String> = header[..11].iter().map(|h| cell(&img[*h])).collect();
                    row.extend((0..3).map(|i| cell(&img["votes"][i])));
                    row
                })
                .collect()
        })
        .unwrap_or_default();
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}
