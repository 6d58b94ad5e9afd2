//! VTON ground truth: curation over the campaign's questionnaires, then one
//! record per image in a layout close to the released benchmark's
//! (`reward`, `votes`, `n_annotation`, `vton_model_id`, image paths), model
//! rankings with bootstrap intervals, and the human ceiling.

use super::curation::{curate, kept_answers, Answer, SanityTasks, Thresholds};
use crate::core::kind::{AggregationInput, Table};
use crate::stats::aggregate::normalize_score;
use crate::stats::bootstrap::mean_ci;
use crate::stats::split_half::{split_half, Rating};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// Repetitions of the split-half human ceiling (as in the benchmark).
pub const SPLIT_HALF_REPETITIONS: usize = 10;
/// Seed of the split-half halvings (the half-annotator labels use the same).
pub const SPLIT_HALF_SEED: u64 = 2026;
/// Bootstrap resamples for model intervals.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The garment-person pair an image belongs to (pairwise accuracy compares
/// try-ons of the same pair).
pub(super) fn group(payload: &Value) -> String {
    format!("{}|{}", payload["garment"].as_str().unwrap_or_default(), payload["person"].as_str().unwrap_or_default())
}

/// The campaign's ratings as curation reads them, and its sanity tasks.
fn answers_and_sanity(input: &AggregationInput) -> (Vec<Answer>, SanityTasks) {
    let by_id: HashMap<_, _> = input.items.iter().map(|i| (i.id, i)).collect();
    let sanity: SanityTasks = input
        .items
        .iter()
        .filter_map(|i| Some((i.external_id.clone(), super::sanity_task(i.gold.as_ref()?)?)))
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
                position: r.position.and_then(|p| u32::try_from(p).ok()),
            })
        })
        .collect();
    (answers, sanity)
}

/// The ratings curation keeps, each with its image's comparison group.
fn ratings_of(kept: &[&Answer], payloads: &HashMap<&str, &Value>) -> Vec<Rating> {
    kept.iter()
        .map(|a| Rating {
            image: a.task.clone(),
            group: payloads.get(a.task.as_str()).map(|p| group(p)).unwrap_or_default(),
            annotator: a.annotator.clone(),
            value: f64::from(a.rating),
        })
        .collect()
}

/// The curated ratings of the campaign (kept annotators of kept
/// questionnaires, sanity tasks left out), e.g. for half-annotator labels.
pub fn curated_ratings(input: &AggregationInput, thresholds: &Thresholds) -> Vec<Rating> {
    let (answers, sanity) = answers_and_sanity(input);
    let curation = curate(&answers, &sanity, thresholds);
    let payloads: HashMap<&str, &Value> = input.items.iter().map(|i| (i.external_id.as_str(), &i.payload)).collect();
    ratings_of(&kept_answers(&answers, &sanity, &curation), &payloads)
}

/// Curates the campaign and scores every image and model.
pub fn aggregate(input: &AggregationInput, thresholds: &Thresholds) -> Value {
    let (answers, sanity) = answers_and_sanity(input);
    let curation = curate(&answers, &sanity, thresholds);
    let kept = kept_answers(&answers, &sanity, &curation);
    let mut annotators_of: BTreeMap<&str, Vec<&str>> = BTreeMap::new();
    for a in &kept {
        annotators_of.entry(a.task.as_str()).or_default().push(a.annotator.as_str());
    }
    let payloads: HashMap<&str, &Value> = input.items.iter().map(|i| (i.external_id.as_str(), &i.payload)).collect();
    let images: Vec<Value> = curation
        .scores
        .iter()
        .map(|s| {
            let p = payloads.get(s.task.as_str()).copied().unwrap_or(&Value::Null);
            json!({
                "image": s.task,
                "vton_model_id": p.get("model"),
                "category": p.get("category"),
                "dataset": p.get("dataset"),
                "tryon": p.get("tryon"),
                "garment": p.get("garment"),
                "person": p.get("person"),
                "reference": p.get("reference"),
                "group": group(p),
                "mean": s.mean,
                "reward": normalize_score(s.mean, 3),
                "votes": s.votes,
                "n_annotation": s.n,
                "annotators": annotators_of.get(s.task.as_str()).cloned().unwrap_or_default(),
            })
        })
        .collect();
    let ratings = ratings_of(&kept, &payloads);
    let mut images = images;
    if !input.worker_ids.is_empty() {
        // Admins' live view: the crowd platform's ids next to Atelier's.
        for img in &mut images {
            let ids: Vec<Value> = img["annotators"]
                .as_array()
                .into_iter()
                .flatten()
                .filter_map(|a| a.as_str()?.parse::<uuid::Uuid>().ok())
                .map(|a| json!(input.worker_ids.get(&a)))
                .collect();
            img["worker_ids"] = json!(ids);
        }
    }
    let workers: BTreeMap<String, &String> = input.worker_ids.iter().map(|(k, v)| (k.to_string(), v)).collect();
    json!({
        "thresholds": thresholds,
        "curation": curation,
        "workers": workers,
        "images": images,
        "models": models(&images),
        "human_ceiling": split_half(&ratings, SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED),
    })
}

/// Per try-on model: mean image score with a 95 % bootstrap interval and
/// rank, overall and per garment category and dataset.
fn models(images: &[Value]) -> Value {
    let mut by: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for img in images {
        let model = img["vton_model_id"].as_str().unwrap_or("unknown").to_owned();
        let mean = img["mean"].as_f64().unwrap_or(0.0);
        for (slice, value) in [
            ("all", "all"),
            ("category", img["category"].as_str().unwrap_or("")),
            ("dataset", img["dataset"].as_str().unwrap_or("")),
        ] {
            by.entry((slice.to_owned(), value.to_owned(), model.clone())).or_default().push(mean);
        }
    }
    let mut out: BTreeMap<String, BTreeMap<String, Vec<Value>>> = BTreeMap::new();
    for ((slice, value, model), scores) in &by {
        let Some((mean, lo, hi)) = mean_ci(scores, 0.95, BOOTSTRAP_RESAMPLES, 7) else { continue };
        out.entry(slice.clone()).or_default().entry(value.clone()).or_default().push(json!({
            "model": model, "mean": mean, "ci95": [lo, hi], "images": scores.len(),
        }));
    }
    for table in out.values_mut().flat_map(|m| m.values_mut()) {
        table.sort_by(|a, b| b["mean"].as_f64().unwrap_or(0.0).total_cmp(&a["mean"].as_f64().unwrap_or(0.0)));
        for (rank, row) in table.iter_mut().enumerate() {
            row["rank"] = json!(rank + 1);
        }
    }
    json!(out)
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
        "annotators",
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
                    let annotators: Vec<&str> =
                        img["annotators"].as_array().into_iter().flatten().filter_map(Value::as_str).collect();
                    row.push(annotators.join(" "));
                    row
                })
                .collect()
        })
        .unwrap_or_default();
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}

/// The questionnaire table: alpha before and after, annotators kept, kept or
/// dropped, and (for admins) who was kept and who was removed by which rule,
/// by the crowd platform's worker id.
pub fn questionnaire_table(aggregate: &Value) -> Table {
    let cell = |v: &Value| match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    };
    let worker =
        |annotator: &str| aggregate["workers"][annotator].as_str().map_or_else(|| annotator.to_owned(), str::to_owned);
    let mut kept: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut removed: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for a in aggregate["curation"]["annotators"].as_array().into_iter().flatten() {
        let (Some(q), Some(who)) = (a["questionnaire"].as_str(), a["annotator"].as_str()) else { continue };
        match a["excluded_by"].as_str() {
            Some(rule) => removed.entry(q).or_default().push(format!("{}:{rule}", worker(who))),
            None => kept.entry(q).or_default().push(worker(who)),
        }
    }
    let columns = ["questionnaire", "alpha_before", "alpha_after", "annotators_kept", "kept"];
    let mut header: Vec<String> = columns.iter().map(|h| (*h).to_owned()).collect();
    header.extend(["workers_kept".to_owned(), "workers_removed".to_owned()]);
    let rows = aggregate["curation"]["questionnaires"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|q| {
            let id = q["questionnaire"].as_str().unwrap_or_default();
            let mut row: Vec<String> = columns.iter().map(|k| cell(&q[*k])).collect();
            row.push(kept.get(id).map(|w| w.join(" ")).unwrap_or_default());
            row.push(removed.get(id).map(|w| w.join(" ")).unwrap_or_default());
            row
        })
        .collect();
    Table { header, rows }
}
