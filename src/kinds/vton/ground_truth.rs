//! VTON ground truth: curation over the campaign's questionnaires, then one
//! record per image in a layout close to the released benchmark's
//! (`reward`, `votes`, `n_annotation`, `vton_model_id`, image paths), model
//! rankings with bootstrap intervals, and the human ceiling.

use super::curation::{curate, kept_answers, Answer, SanityTasks, Thresholds};
use crate::core::kind::{AggregationInput, Table};
use crate::stats::aggregate::normalize_score;
use crate::stats::bootstrap::mean_ci;
use crate::stats::correlation::{pairwise_accuracy, pearson, r_squared, spearman};
use crate::stats::split_half::{split_half, Rating};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap};

/// Repetitions of the split-half human ceiling (as in the benchmark).
const SPLIT_HALF_REPETITIONS: usize = 10;
/// Bootstrap resamples for model intervals.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The garment-person pair an image belongs to (pairwise accuracy compares
/// try-ons of the same pair).
fn group(payload: &Value) -> String {
    format!("{}|{}", payload["garment"].as_str().unwrap_or_default(), payload["person"].as_str().unwrap_or_default())
}

/// Curates the campaign and scores every image and model.
pub fn aggregate(input: &AggregationInput, thresholds: &Thresholds) -> Value {
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
    let ratings: Vec<Rating> = kept
        .iter()
        .map(|a| Rating {
            image: a.task.clone(),
            group: payloads.get(a.task.as_str()).map(|p| group(p)).unwrap_or_default(),
            annotator: a.annotator.clone(),
            value: f64::from(a.rating),
        })
        .collect();
    json!({
        "thresholds": thresholds,
        "curation": curation,
        "images": images,
        "models": models(&images),
        "human_ceiling": split_half(&ratings, SPLIT_HALF_REPETITIONS, 2026),
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

/// Scores a quality predictor (`image -> score`) against the curated human
/// scores: PLCC, SRCC, R² and pairwise accuracy within garment-person pairs.
/// The human score is the paper's reward in [-1, 1] (mean rating − 2): R²
/// depends on the scale, and a predictor is trained to output the reward.
pub fn score_predictor(aggregate: &Value, predictions: &HashMap<String, f64>) -> Value {
    let (mut human, mut predicted, mut groups) = (Vec::new(), Vec::new(), Vec::new());
    for img in aggregate["images"].as_array().into_iter().flatten() {
        let Some(p) = img["image"].as_str().and_then(|id| predictions.get(id)) else { continue };
        human.push(img["reward"].as_f64().unwrap_or(0.0));
        predicted.push(*p);
        groups.push(img["group"].as_str().unwrap_or_default().to_owned());
    }
    let pw = pairwise_accuracy(&groups, &human, &predicted);
    json!({
        "images": human.len(),
        "plcc": pearson(&human, &predicted),
        "srcc": spearman(&human, &predicted),
        "r2": r_squared(&human, &predicted),
        "pairwise_micro": pw.micro,
        "pairwise_macro": pw.macro_,
        "human_ceiling": aggregate["human_ceiling"],
    })
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn r2_compares_a_predictor_with_the_reward_on_the_papers_scale() {
        let image = |id: &str, mean: f64, group: &str| json!({"image": id, "mean": mean, "reward": normalize_score(mean, 3), "group": group});
        let aggregate = json!({"images": [
            image("a", 1.0, "g1"), image("b", 2.5, "g1"), image("c", 3.0, "g2"), image("d", 1.5, "g2"),
        ]});
        // A perfect predictor outputs the reward (mean rating - 2).
        let perfect: HashMap<String, f64> =
            [("a", -1.0), ("b", 0.5), ("c", 1.0), ("d", -0.5)].iter().map(|(k, v)| ((*k).to_owned(), *v)).collect();
        let scored = score_predictor(&aggregate, &perfect);
        assert_eq!(scored["r2"], 1.0);
        assert_eq!(scored["plcc"], 1.0);
        assert_eq!(scored["pairwise_micro"], 1.0);
        // Outputting the 1-3 mean instead is off by 2 everywhere: R² far below 0.
        let means: HashMap<String, f64> = perfect.iter().map(|(k, v)| (k.clone(), v + 2.0)).collect();
        assert!(score_predictor(&aggregate, &means)["r2"].as_f64().expect("r2") < -5.0);
    }
}
