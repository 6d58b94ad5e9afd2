//! VTON ground truth: curation over the campaign's questionnaires, then one
//! record per image in a layout close to the released benchmark's
//! (`reward`, `votes`, `n_annotation`, `vton_model_id`, image paths), model
//! rankings with bootstrap intervals, and the human ceiling.

use super::curation::{curate, kept_answers, Answer, SanityTasks, Thresholds};
use super::result::{ImageScore, ModelRank, VtonGroundTruth};
use crate::core::kind::{AggregationInput, Table};
use crate::stats::aggregate::normalize_score;
use crate::stats::bootstrap::mean_ci;
use crate::stats::split_half::{split_half, Rating};
use serde_json::Value;
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
    let field = |p: &Value, key: &str| p.get(key).cloned();
    let mut images: Vec<ImageScore> = curation
        .scores
        .iter()
        .map(|s| {
            let p = payloads.get(s.task.as_str()).copied().unwrap_or(&Value::Null);
            ImageScore {
                image: s.task.clone(),
                vton_model_id: field(p, "model"),
                category: field(p, "category"),
                dataset: field(p, "dataset"),
                tryon: field(p, "tryon"),
                garment: field(p, "garment"),
                person: field(p, "person"),
                reference: field(p, "reference"),
                group: group(p),
                mean: s.mean,
                reward: normalize_score(s.mean, 3),
                votes: s.votes,
                n_annotation: s.n,
                annotators: annotators_of
                    .get(s.task.as_str())
                    .map(|a| a.iter().map(|x| (*x).to_owned()).collect())
                    .unwrap_or_default(),
                worker_ids: None,
            }
        })
        .collect();
    let ratings = ratings_of(&kept, &payloads);
    if !input.worker_ids.is_empty() {
        // Admins' live view: the crowd platform's ids next to Atelier's.
        for img in &mut images {
            let ids = img
                .annotators
                .iter()
                .map(|a| a.parse::<uuid::Uuid>().ok().and_then(|a| input.worker_ids.get(&a).cloned()))
                .collect();
            img.worker_ids = Some(ids);
        }
    }
    let workers = input.worker_ids.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    VtonGroundTruth {
        thresholds: thresholds.clone(),
        models: models(&images),
        curation,
        workers,
        images,
        human_ceiling: split_half(&ratings, SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED),
    }
    .to_value()
}

/// Per try-on model: mean image score with a 95 % bootstrap interval and
/// rank, overall and per garment category and dataset.
fn models(images: &[ImageScore]) -> BTreeMap<String, BTreeMap<String, Vec<ModelRank>>> {
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_owned);
    let mut by: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for img in images {
        let model = text(&img.vton_model_id).unwrap_or_else(|| "unknown".to_owned());
        for (slice, value) in [
            ("all", "all".to_owned()),
            ("category", text(&img.category).unwrap_or_default()),
            ("dataset", text(&img.dataset).unwrap_or_default()),
        ] {
            by.entry((slice.to_owned(), value, model.clone())).or_default().push(img.mean);
        }
    }
    let mut out: BTreeMap<String, BTreeMap<String, Vec<ModelRank>>> = BTreeMap::new();
    for ((slice, value, model), scores) in &by {
        let Some((mean, lo, hi)) = mean_ci(scores, 0.95, BOOTSTRAP_RESAMPLES, 7) else { continue };
        let row = ModelRank { model: model.clone(), mean, ci95: [lo, hi], images: scores.len(), rank: 0 };
        out.entry(slice.clone()).or_default().entry(value.clone()).or_default().push(row);
    }
    for table in out.values_mut().flat_map(|m| m.values_mut()) {
        // Stable: models with equal means keep their name order.
        table.sort_by(|a, b| b.mean.total_cmp(&a.mean));
        for (rank, row) in table.iter_mut().enumerate() {
            row.rank = rank + 1;
        }
    }
    out
}

/// A JSON value as a CSV cell: text as is, numbers as JSON writes them, nothing for null.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON-able value as a CSV cell.
fn cell_of<T: serde::Serialize>(v: &T) -> String {
    cell(&serde_json::to_value(v).unwrap_or(Value::Null))
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
    let Ok(gt) = VtonGroundTruth::from_value(aggregate) else { return Table::default() };
    let rows = gt
        .images
        .iter()
        .map(|img| {
            let mut row = vec![
                img.image.clone(),
                cell_of(&img.vton_model_id),
                cell_of(&img.category),
                cell_of(&img.dataset),
                cell_of(&img.tryon),
                cell_of(&img.garment),
                cell_of(&img.person),
                cell_of(&img.reference),
                cell_of(&img.mean),
                cell_of(&img.reward),
                cell_of(&img.n_annotation),
            ];
            row.extend(img.votes.iter().map(cell_of));
            row.push(img.annotators.join(" "));
            row
        })
        .collect();
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}

/// The questionnaire table: alpha before and after, annotators kept, kept or
/// dropped, and (for admins) who was kept and who was removed by which rule,
/// by the crowd platform's worker id.
pub fn questionnaire_table(aggregate: &Value) -> Table {
    let Ok(gt) = VtonGroundTruth::from_value(aggregate) else { return Table::default() };
    let mut kept: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut removed: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for a in &gt.curation.annotators {
        let q = a.questionnaire.as_str();
        match a.excluded_by {
            Some(rule) => removed.entry(q).or_default().push(format!("{}:{}", gt.worker(&a.annotator), rule.name())),
            None => kept.entry(q).or_default().push(gt.worker(&a.annotator)),
        }
    }
    let columns = ["questionnaire", "alpha_before", "alpha_after", "annotators_kept", "kept"];
    let mut header: Vec<String> = columns.iter().map(|h| (*h).to_owned()).collect();
    header.extend(["workers_kept".to_owned(), "workers_removed".to_owned()]);
    let rows = gt
        .curation
        .questionnaires
        .iter()
        .map(|q| {
            let id = q.questionnaire.as_str();
            vec![
                q.questionnaire.clone(),
                cell_of(&q.alpha_before),
                cell_of(&q.alpha_after),
                cell_of(&q.annotators_kept),
                cell_of(&q.kept),
                kept.get(id).map(|w| w.join(" ")).unwrap_or_default(),
                removed.get(id).map(|w| w.join(" ")).unwrap_or_default(),
            ]
        })
        .collect();
    Table { header, rows }
}
