//! Leave-one-model-out robustness of model rankings (pure): for each model
//! that generated suspects, the ground truth without the pairs only that
//! model proposed, every scored model's ROC-AUC on it, and how well the
//! models' order on that subset agrees with their order on the full ground
//! truth (Spearman, with its p-value as SciPy computes it).

use super::eds::Suspects;
use crate::stats::correlation::spearman_test;
use crate::stats::retrieval::{oriented_scores, retrieval_metrics, ScoredPair};
use std::collections::{BTreeMap, HashMap};

/// A model's ROC-AUCs on one ground truth.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct Auc {
    /// Pairs pooled.
    pub roc_auc_micro: Option<f64>,
    /// Per query, averaged.
    pub roc_auc_macro: Option<f64>,
}

/// The ground truth without one generator's own pairs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LeaveOut {
    /// The generator left out.
    pub removed: String,
    /// Labelled pairs left.
    pub pairs: usize,
    /// Every scored model's AUCs on them.
    pub auc: BTreeMap<String, Auc>,
    /// Spearman between the models' micro AUCs here and on the full ground truth.
    pub spearman_micro: Option<f64>,
    /// Its two-sided p-value.
    pub p_value_micro: Option<f64>,
    /// The same for macro AUCs.
    pub spearman_macro: Option<f64>,
    /// Its two-sided p-value.
    pub p_value_macro: Option<f64>,
}

/// The whole robustness report.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Robustness {
    /// AUCs on the full ground truth.
    pub full: BTreeMap<String, Auc>,
    /// One entry per generator.
    pub leave_out: Vec<LeaveOut>,
}

/// AUCs of one model's scores on a ground truth, with the one orientation
/// rule of every table ([`oriented_scores`]: a pair scored only the other
/// way round counts for the ground truth's orientation), exactly as the
/// main table computes them.
pub fn auc(ground_truth: &[(String, String, bool)], scores: &[ScoredPair]) -> Auc {
    let report = retrieval_metrics(ground_truth, &oriented_scores(ground_truth, scores), &[]);
    Auc { roc_auc_micro: report.roc_auc_micro, roc_auc_macro: report.roc_auc_macro }
}

/// Spearman between two models' AUCs (models defined on both sides only).
fn agreement(
    full: &BTreeMap<String, Auc>,
    subset: &BTreeMap<String, Auc>,
    pick: fn(&Auc) -> Option<f64>,
) -> (Option<f64>, Option<f64>) {
    let (mut a, mut b) = (Vec::new(), Vec::new());
    for (model, f) in full {
        if let (Some(x), Some(y)) = (pick(f), subset.get(model).and_then(pick)) {
            a.push(x);
            b.push(y);
        }
    }
    spearman_test(&a, &b)
}

/// The report: `ground_truth` is the benchmark's labelled pairs, `scores`
/// each scored model's scores as given; its `full` row is the main table's
/// AUCs.
pub fn robustness(
    suspects: &Suspects,
    ground_truth: &[(String, String, bool)],
    scores: &BTreeMap<String, Vec<ScoredPair>>,
) -> Robustness {
    let aucs = |gt: &[(String, String, bool)]| -> BTreeMap<String, Auc> {
        scores.iter().map(|(m, s)| (m.clone(), auc(gt, s))).collect()
    };
    let full = aucs(ground_truth);
    // Ordered (query, candidate): a suspect is the candidate proposed for that query.
    let only: HashMap<(&str, &str), &str> = suspects
        .pairs
        .iter()
        .filter(|s| s.proposed_by.len() == 1)
        .filter_map(|s| {
            let model = s.proposed_by.keys().next()?;
            Some(((s.query.as_str(), s.candidate.as_str()), model.as_str()))
        })
        .collect();
    let leave_out = suspects
        .models
        .iter()
        .map(|removed| {
            let subset: Vec<(String, String, bool)> = ground_truth
                .iter()
                .filter(|(q, c, _)| only.get(&(q.as_str(), c.as_str())) != Some(&removed.as_str()))
                .cloned()
                .collect();
            let auc = aucs(&subset);
            let (spearman_micro, p_value_micro) = agreement(&full, &auc, |a| a.roc_auc_micro);
            let (spearman_macro, p_value_macro) = agreement(&full, &auc, |a| a.roc_auc_macro);
            LeaveOut {
                removed: removed.clone(),
                pairs: subset.len(),
                auc,
                spearman_micro,
                p_value_micro,
                spearman_macro,
                p_value_macro,
            }
        })
        .collect();
    Robustness { full, leave_out }
}
