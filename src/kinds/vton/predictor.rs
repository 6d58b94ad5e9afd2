//! Scoring a quality predictor against the curated human scores, as the
//! VTON-IQA paper does: PLCC, SRCC, R² and pairwise accuracy on the reward
//! scale (mean rating − 2, in [-1, 1]); optionally against labels from half
//! of the annotators (the fair comparison with the split-half human
//! ceiling); the per-model-pair accuracy matrix with known / unknown blocks;
//! and a calibration table.

use super::ground_truth::{SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED};
use super::result::ImageScore;
use crate::stats::aggregate::normalize_score;
use crate::stats::correlation::{pairwise_accuracy_with, pearson, r_squared, spearman, PredictionTies};
use crate::stats::pairwise::{blocks, calibration, macro_average, model_pairs, Scored};
use crate::stats::split_half::SplitHalf;
use crate::stats::split_half::{first_half_means, MeanSd, Rating};
use serde_json::{json, Value};
use std::collections::{BTreeSet, HashMap};

/// Which human labels the predictor is compared with.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Labels {
    /// Scores from all curated annotators.
    #[default]
    All,
    /// Scores from half of the annotators, for each of the split-half
    /// ceiling's halvings (mean ± sd over them).
    Half,
}

/// Options of predictor scoring (query parameters of the API).
#[derive(Debug, Clone, PartialEq, serde::Deserialize)]
pub struct PredictorOptions {
    /// `all` (default) or `half`.
    #[serde(default)]
    pub labels: Labels,
    /// Prediction ties in pairwise accuracy: `zero` (default, the paper's
    /// text) or `half` (0.5 within 1e-4, the released code).
    #[serde(default)]
    pub ties: PredictionTies,
    /// Comma-separated models seen in the predictor's training, for the
    /// KK / UU / KU blocks.
    #[serde(default)]
    pub known: Option<String>,
    /// Temperature τ of the preference probabilities in the calibration table.
    #[serde(default = "default_temperature")]
    pub temperature: f64,
}

fn default_temperature() -> f64 {
    0.5
}

impl Default for PredictorOptions {
    fn default() -> Self {
        Self { labels: Labels::All, ties: PredictionTies::Zero, known: None, temperature: default_temperature() }
    }
}

/// The reward of a mean rating on the 3-level scale.
fn reward(mean: f64) -> f64 {
    normalize_score(mean, 3)
}

/// PLCC, SRCC, R² and pairwise accuracy of `predicted` against `human`.
fn metrics(human: &[f64], predicted: &[f64], groups: &[String], ties: PredictionTies) -> [Option<f64>; 5] {
    let pw = pairwise_accuracy_with(groups, human, predicted, ties);
    [pearson(human, predicted), spearman(human, predicted), r_squared(human, predicted), pw.micro, pw.macro_]
}

const METRICS: [&str; 5] = ["plcc", "srcc", "r2", "pairwise_micro", "pairwise_macro"];

/// Scores a predictor (`image -> score`) against the ground truth's images;
/// `ratings` (the curated ratings) are needed for `labels = half`.
pub fn score(
    images: &[ImageScore],
    human_ceiling: Option<&SplitHalf>,
    predictions: &HashMap<String, f64>,
    options: &PredictorOptions,
    ratings: &[Rating],
) -> Value {
    let mut scored = Vec::new();
    for img in images {
        let Some(p) = predictions.get(&img.image) else { continue };
        scored.push((
            img.image.clone(),
            Scored {
                group: img.group.clone(),
                model: img.vton_model_id.as_ref().and_then(Value::as_str).unwrap_or("unknown").to_owned(),
                human: img.reward,
                predicted: *p,
            },
        ));
    }
    let human: Vec<f64> = scored.iter().map(|(_, s)| s.human).collect();
    let predicted: Vec<f64> = scored.iter().map(|(_, s)| s.predicted).collect();
    let groups: Vec<String> = scored.iter().map(|(_, s)| s.group.clone()).collect();
    let all = metrics(&human, &predicted, &groups, options.ties);
    let images: Vec<Scored> = scored.iter().map(|(_, s)| s.clone()).collect();
    let cells = model_pairs(&images, options.ties);
    let mut out = json!({
        "images": scored.len(),
        "labels": options.labels,
        "pairwise_ties": options.ties,
        "model_pairs": cells,
        "model_pairs_macro": macro_average(&cells),
        "calibration": {"temperature": options.temperature, "bin_width": 0.05,
                        "bins": calibration(&images, options.temperature, 0.05)},
        "human_ceiling": human_ceiling,
    });
    let known: BTreeSet<String> = options
        .known
        .iter()
        .flat_map(|k| k.split(','))
        .map(str::trim)
        .filter(|k| !k.is_empty())
        .map(str::to_owned)
        .collect();
    if !known.is_empty() {
        out["known_models"] = json!(known);
        out["blocks"] = json!(blocks(&cells, &known));
    }
    match options.labels {
        Labels::All => {
            for (name, value) in METRICS.iter().zip(all) {
                out[*name] = json!(value);
            }
        }
        Labels::Half => {
            let mut runs: [Vec<Option<f64>>; 5] = Default::default();
            for labels in first_half_means(ratings, SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED) {
                let (mut h, mut p, mut g) = (Vec::new(), Vec::new(), Vec::new());
                for (id, s) in &scored {
                    if let Some(mean) = labels.get(id) {
                        h.push(reward(*mean));
                        p.push(s.predicted);
                        g.push(s.group.clone());
                    }
                }
                for (run, value) in runs.iter_mut().zip(metrics(&h, &p, &g, options.ties)) {
                    run.push(value);
                }
            }
            for (name, run) in METRICS.iter().zip(&runs) {
                out[*name] = json!(MeanSd::of(run));
            }
            out["repetitions"] = json!(SPLIT_HALF_REPETITIONS);
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(id: &str, mean: f64, group: &str, model: &str) -> ImageScore {
        ImageScore {
            image: id.into(),
            vton_model_id: Some(json!(model)),
            category: None,
            dataset: None,
            tryon: None,
            garment: None,
            person: None,
            reference: None,
            group: group.into(),
            mean,
            reward: reward(mean),
            votes: [0; 3],
            n_annotation: 0,
            annotators: Vec::new(),
            worker_ids: None,
        }
    }

    fn predictions(pairs: &[(&str, f64)]) -> HashMap<String, f64> {
        pairs.iter().map(|(k, v)| ((*k).to_owned(), *v)).collect()
    }

    #[test]
    fn r2_compares_a_predictor_with_the_reward_on_the_papers_scale() {
        let aggregate = [
            image("a", 1.0, "g1", "m1"),
            image("b", 2.5, "g1", "m2"),
            image("c", 3.0, "g2", "m1"),
            image("d", 1.5, "g2", "m2"),
        ];
        // A perfect predictor outputs the reward (mean rating - 2).
        let perfect = predictions(&[("a", -1.0), ("b", 0.5), ("c", 1.0), ("d", -0.5)]);
        let scored = score(&aggregate, None, &perfect, &PredictorOptions::default(), &[]);
        assert_eq!(scored["r2"], 1.0);
        assert_eq!(scored["plcc"], 1.0);
        assert_eq!(scored["pairwise_micro"], 1.0);
        // Outputting the 1-3 mean instead is off by 2 everywhere: R² far below 0.
        let means: HashMap<String, f64> = perfect.iter().map(|(k, v)| (k.clone(), v + 2.0)).collect();
        assert!(score(&aggregate, None, &means, &PredictorOptions::default(), &[])["r2"].as_f64().expect("r2") < -5.0);
    }

    #[test]
    fn ties_known_models_and_half_labels_are_options() {
        let aggregate = [image("a", 3.0, "g", "m1"), image("b", 1.0, "g", "m2")];
        let tied = predictions(&[("a", 0.2), ("b", 0.2)]);
        assert_eq!(score(&aggregate, None, &tied, &PredictorOptions::default(), &[])["pairwise_micro"], 0.0);
        let half_ties = PredictorOptions { ties: PredictionTies::Half, known: Some("m1".into()), ..Default::default() };
        let r = score(&aggregate, None, &tied, &half_ties, &[]);
        assert_eq!(r["pairwise_micro"], 0.5);
        assert_eq!(r["blocks"]["KU"], 0.5);
        assert_eq!(r["blocks"]["KK"], Value::Null);
        // Half labels: two annotators who agree, so each half says the same.
        let rating = |image: &str, who: &str, v: f64| Rating {
            image: image.into(),
            group: "g".into(),
            annotator: who.into(),
            value: v,
        };
        let ratings = vec![rating("a", "x", 3.0), rating("b", "x", 1.0), rating("a", "y", 3.0), rating("b", "y", 1.0)];
        let good = predictions(&[("a", 0.9), ("b", -0.9)]);
        let half = PredictorOptions { labels: Labels::Half, ..Default::default() };
        let r = score(&aggregate, None, &good, &half, &ratings);
        assert_eq!(r["pairwise_micro"]["mean"], 1.0);
        assert_eq!(r["repetitions"], 10);
        assert_eq!(r["labels"], "half");
    }
}
