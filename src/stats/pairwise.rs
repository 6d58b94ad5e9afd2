//! Pairwise views of a quality predictor, as in the VTON-IQA paper's
//! appendix: accuracy per pair of try-on models (and its macro average, by
//! known / unknown model blocks), and the calibration of predicted
//! preference probabilities against human ones.

use super::correlation::{pair_credit, PredictionTies};
use std::collections::{BTreeMap, BTreeSet};

/// One scored image.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    /// Comparison group (the garment-person pair).
    pub group: String,
    /// The try-on model that made it.
    pub model: String,
    /// Human score.
    pub human: f64,
    /// Predicted score.
    pub predicted: f64,
}

/// Micro accuracy on the comparable pairs between two models' images.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct ModelPair {
    /// First model (the names sort `a` <= `b`).
    pub a: String,
    /// Second model.
    pub b: String,
    /// Comparable pairs (same group, different human scores).
    pub pairs: usize,
    /// Credit over pairs.
    pub accuracy: f64,
}

/// Every comparable pair within a group, as (i, j) with i < j.
fn comparable(images: &[Scored]) -> Vec<(usize, usize)> {
    let mut by_group: BTreeMap<&str, Vec<usize>> = BTreeMap::new();
    for (i, s) in images.iter().enumerate() {
        by_group.entry(&s.group).or_default().push(i);
    }
    let mut out = Vec::new();
    for idx in by_group.values() {
        for (p, &i) in idx.iter().enumerate() {
            for &j in &idx[p + 1..] {
                if images[i].human != images[j].human {
                    out.push((i, j));
                }
            }
        }
    }
    out
}

/// Accuracy per pair of models (both orders pooled, same-model pairs
/// included as a diagonal cell), sorted by model names.
pub fn model_pairs(images: &[Scored], ties: PredictionTies) -> Vec<ModelPair> {
    let mut cells: BTreeMap<(String, String), (usize, f64)> = BTreeMap::new();
    for (i, j) in comparable(images) {
        let (x, y) = (&images[i], &images[j]);
        let key =
            if x.model <= y.model { (x.model.clone(), y.model.clone()) } else { (y.model.clone(), x.model.clone()) };
        let cell = cells.entry(key).or_default();
        cell.0 += 1;
        cell.1 += pair_credit(x.human, y.human, x.predicted, y.predicted, ties);
    }
    cells
        .into_iter()
        .map(|((a, b), (pairs, credit))| ModelPair { a, b, pairs, accuracy: credit / pairs as f64 })
        .collect()
}

/// Mean of the cells' accuracies (each model pair weighs the same).
pub fn macro_average<'a>(cells: impl IntoIterator<Item = &'a ModelPair>) -> Option<f64> {
    let values: Vec<f64> = cells.into_iter().map(|c| c.accuracy).collect();
    (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64)
}

/// Macro accuracy in the paper's blocks: known-known, unknown-unknown,
/// known-unknown model pairs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Blocks {
    /// Both models known (seen in training).
    #[serde(rename = "KK")]
    pub kk: Option<f64>,
    /// Both unknown.
    #[serde(rename = "UU")]
    pub uu: Option<f64>,
    /// One of each.
    #[serde(rename = "KU")]
    pub ku: Option<f64>,
}

/// Splits the model-pair cells by whether their models are `known`.
pub fn blocks(cells: &[ModelPair], known: &BTreeSet<String>) -> Blocks {
    let count = |c: &ModelPair| usize::from(known.contains(&c.a)) + usize::from(known.contains(&c.b));
    Blocks {
        kk: macro_average(cells.iter().filter(|c| count(c) == 2)),
        uu: macro_average(cells.iter().filter(|c| count(c) == 0)),
        ku: macro_average(cells.iter().filter(|c| count(c) == 1)),
    }
}

/// One calibration bin of human preference probability.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct CalibrationBin {
    /// Lower edge (inclusive).
    pub low: f64,
    /// Upper edge (exclusive; the last bin includes 1).
    pub high: f64,
    /// Comparable pairs in the bin.
    pub count: usize,
    /// Mean predicted probability that the human winner wins.
    pub mean_predicted: f64,
    /// Standard deviation of those predictions (population).
    pub sd_predicted: f64,
}

fn sigmoid(x: f64) -> f64 {
    1.0 / (1.0 + (-x).exp())
}

/// Calibration as in the paper's Fig. 11: for every comparable pair, the
/// human probability that the better-rated image wins, σ((S_i − S_j)/τ), in
/// bins of `width`, against the predicted probability σ((Ψ_i − Ψ_j)/τ).
/// Empty bins are left out.
pub fn calibration(images: &[Scored], temperature: f64, width: f64) -> Vec<CalibrationBin> {
    let bins = (0.5 / width).round().max(1.0) as usize;
    let mut values: Vec<Vec<f64>> = vec![Vec::new(); bins];
    for (i, j) in comparable(images) {
        let (w, l) =
            if images[i].human > images[j].human { (&images[i], &images[j]) } else { (&images[j], &images[i]) };
        let human = sigmoid((w.human - l.human) / temperature);
        let predicted = sigmoid((w.predicted - l.predicted) / temperature);
        let bin = (((human - 0.5) / width).floor() as usize).min(bins - 1);
        values[bin].push(predicted);
    }
    values
        .into_iter()
        .enumerate()
        .filter(|(_, v)| !v.is_empty())
        .map(|(b, v)| {
            let n = v.len() as f64;
            let mean = v.iter().sum::<f64>() / n;
            let sd = (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / n).sqrt();
            CalibrationBin {
                low: 0.5 + b as f64 * width,
                high: 0.5 + (b + 1) as f64 * width,
                count: v.len(),
                mean_predicted: mean,
                sd_predicted: sd,
            }
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn image(group: &str, model: &str, human: f64, predicted: f64) -> Scored {
        Scored { group: group.into(), model: model.into(), human, predicted }
    }

    #[test]
    fn model_pair_accuracy_by_hand_with_blocks() {
        // Group g1: A 0.5, B -0.5, C 0.0; the predictor swaps B and C.
        // Group g2: A 1.0, B 0.0 predicted the right way round.
        let images = vec![
            image("g1", "A", 0.5, 0.9),
            image("g1", "B", -0.5, 0.2),
            image("g1", "C", 0.0, 0.1),
            image("g2", "A", 1.0, 0.8),
            image("g2", "B", 0.0, 0.3),
        ];
        let cells = model_pairs(&images, PredictionTies::Zero);
        let get = |a: &str, b: &str| cells.iter().find(|c| c.a == a && c.b == b).expect("cell").clone();
        assert_eq!((get("A", "B").pairs, get("A", "B").accuracy), (2, 1.0));
        assert_eq!((get("A", "C").pairs, get("A", "C").accuracy), (1, 1.0));
        assert_eq!((get("B", "C").pairs, get("B", "C").accuracy), (1, 0.0));
        assert!((macro_average(&cells).expect("defined") - 2.0 / 3.0).abs() < 1e-12);
        let known: BTreeSet<String> = ["A".to_owned(), "B".to_owned()].into();
        let b = blocks(&cells, &known);
        assert_eq!((b.kk, b.uu), (Some(1.0), None));
        assert_eq!(b.ku, Some(0.5), "A-C right, B-C wrong");
    }

    #[test]
    fn ties_count_half_within_the_epsilon_when_asked() {
        let images = vec![image("g", "A", 1.0, 0.50000), image("g", "B", 0.0, 0.50005)];
        assert_eq!(model_pairs(&images, PredictionTies::Zero)[0].accuracy, 0.0);
        assert_eq!(model_pairs(&images, PredictionTies::Half)[0].accuracy, 0.5);
    }

    #[test]
    fn a_perfectly_calibrated_predictor_lies_on_the_diagonal() {
        let images: Vec<Scored> = (0..20)
            .map(|i| {
                image(
                    &format!("g{}", i / 2),
                    "m",
                    (i % 7) as f64 * 0.1 * ((i / 2) as f64),
                    (i % 7) as f64 * 0.1 * ((i / 2) as f64),
                )
            })
            .collect();
        let bins = calibration(&images, 0.5, 0.05);
        assert!(!bins.is_empty());
        for b in &bins {
            assert!(b.mean_predicted >= b.low - 1e-12 && b.mean_predicted < b.high + 1e-12, "{b:?}");
            assert!(b.sd_predicted < 0.05);
        }
        assert_eq!(bins.iter().map(|b| b.count).sum::<usize>(), comparable(&images).len());
    }
}
