//! Dawid-Skene aggregation: expectation-maximisation over per-annotator
//! confusion matrices (Dawid & Skene, 1979).
//!
//! Unlike majority vote, it learns how far to trust each annotator, so a
//! reliable annotator can outweigh several who answer without looking.

/// One label given by one annotator to one item (all indexes zero-based).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Label {
    /// Item index.
    pub item: usize,
    /// Annotator index.
    pub annotator: usize,
    /// Class index.
    pub class: usize,
}

/// Fitted model: posterior class probabilities per item.
#[derive(Debug, Clone, PartialEq)]
pub struct DawidSkene {
    /// `posterior[item][class]`.
    pub posterior: Vec<Vec<f64>>,
    /// Estimated class priors.
    pub priors: Vec<f64>,
    /// `confusion[annotator][true_class][given_class]`.
    pub confusion: Vec<Vec<Vec<f64>>>,
    /// EM iterations run.
    pub iterations: usize,
}

impl DawidSkene {
    /// The most probable class of an item and its posterior; the lowest class
    /// wins an exact tie. `None` for an item without labels.
    pub fn decide(&self, item: usize) -> Option<(usize, f64)> {
        let p = self.posterior.get(item)?;
        let mut best: Option<(usize, f64)> = None;
        for (c, &v) in p.iter().enumerate() {
            if best.is_none_or(|(_, b)| v > b) {
                best = Some((c, v));
            }
        }
        best.filter(|(_, v)| v.is_finite())
    }
}

/// Smoothing added to every confusion-matrix cell so that an annotator never
/// gets probability zero for an answer (which would veto a class forever).
const SMOOTHING: f64 = 0.01;

/// Fits Dawid-Skene by EM, starting from the majority-vote soft labels.
/// Items without any label get a uniform posterior.
pub fn dawid_skene(
    labels: &[Label],
    items: usize,
    annotators: usize,
    classes: usize,
    max_iterations: usize,
) -> DawidSkene {
    let mut posterior = vec![vec![0.0; classes]; items];
    for l in labels {
        posterior[l.item][l.class] += 1.0;
    }
    for p in &mut posterior {
        normalise(p);
    }
    let mut priors = vec![1.0 / classes as f64; classes];
    let mut confusion = vec![vec![vec![0.0; classes]; classes]; annotators];
    let mut iterations = 0;
    while iterations < max_iterations {
        iterations += 1;
        // M-step: priors and confusion matrices from the current posteriors.
        priors.iter_mut().for_each(|p| *p = 0.0);
        for p in &posterior {
            for (c, v) in p.iter().enumerate() {
                priors[c] += v;
            }
        }
        normalise(&mut priors);
        for m in &mut confusion {
            for row in m.iter_mut() {
                row.iter_mut().for_each(|v| *v = SMOOTHING);
            }
        }
        for l in labels {
            for (truth, &p) in posterior[l.item].iter().enumerate() {
                confusion[l.annotator][truth][l.class] += p;
            }
        }
        for m in &mut confusion {
            for row in m.iter_mut() {
                normalise(row);
            }
        }
        // E-step: posteriors from priors and confusion matrices, in log space.
        let mut log_post: Vec<Vec<f64>> =
            (0..items).map(|_| priors.iter().map(|p| p.max(1e-300).ln()).collect()).collect();
        for l in labels {
            for (truth, lp) in log_post[l.item].iter_mut().enumerate() {
                *lp += confusion[l.annotator][truth][l.class].ln();
            }
        }
        let mut change: f64 = 0.0;
        for (item, lp) in log_post.iter().enumerate() {
            let max = lp.iter().copied().fold(f64::NEG_INFINITY, f64::max);
            let mut next: Vec<f64> = lp.iter().map(|v| (v - max).exp()).collect();
            normalise(&mut next);
            for (a, b) in next.iter().zip(&posterior[item]) {
                change = change.max((a - b).abs());
            }
            posterior[item] = next;
        }
        if change < 1e-9 {
            break;
        }
    }
    DawidSkene { posterior, priors, confusion, iterations }
}

fn normalise(v: &mut [f64]) {
    let sum: f64 = v.iter().sum();
    if sum > 0.0 {
        v.iter_mut().for_each(|x| *x /= sum);
    } else if !v.is_empty() {
        let u = 1.0 / v.len() as f64;
        v.iter_mut().for_each(|x| *x = u);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::stats::aggregate::{majority_vote, TieRule};

    /// Three careful annotators (0-2) and two spammers (3, 4) who answer
    /// "positive" (class 1) to everything. On items whose truth is negative and
    /// where one careful annotator slipped, the spammers out-vote the careful
    /// majority; Dawid-Skene learns that the spammers' "1" carries no
    /// information and sides with the careful annotators.
    #[test]
    fn dawid_skene_overrules_spammers_that_out_vote_a_careful_majority() {
        let items = 40;
        let truth: Vec<usize> = (0..items).map(|i| usize::from(i % 2 == 0)).collect();
        let mut labels = Vec::new();
        for (item, &t) in truth.iter().enumerate() {
            for annotator in 0..3 {
                // Each careful annotator slips on a different fifth of the items.
                let slips = item % 5 == annotator && t == 0;
                let class = if slips { 1 - t } else { t };
                labels.push(Label { item, annotator, class });
            }
            for annotator in 3..5 {
                labels.push(Label { item, annotator, class: 1 });
            }
        }
        let model = dawid_skene(&labels, items, 5, 2, 200);
        let mut majority_wrong = 0;
        for (item, &t) in truth.iter().enumerate() {
            let votes: Vec<String> = labels.iter().filter(|l| l.item == item).map(|l| l.class.to_string()).collect();
            let mv = majority_vote(&votes, TieRule::None).and_then(|v| v.label).expect("no ties with 5 votes");
            if mv != t.to_string() {
                majority_wrong += 1;
            }
            let (ds, p) = model.decide(item).expect("labelled item");
            assert_eq!(ds, t, "item {item}: Dawid-Skene chose {ds} with posterior {p}");
        }
        assert!(majority_wrong >= 5, "the example must make majority vote fail, it failed {majority_wrong} times");
        // The spammers' confusion matrices say "1 whatever the truth".
        assert!(model.confusion[3][0][1] > 0.9);
        assert!(model.confusion[0][0][0] > 0.7);
    }

    #[test]
    fn unanimous_labels_give_confident_posteriors() {
        let labels: Vec<Label> =
            (0..4).flat_map(|item| (0..3).map(move |annotator| Label { item, annotator, class: item % 2 })).collect();
        let model = dawid_skene(&labels, 5, 3, 2, 50);
        for item in 0..4 {
            let (c, p) = model.decide(item).expect("labelled");
            assert_eq!(c, item % 2);
            assert!(p > 0.95);
        }
        // Item 4 has no labels: uniform posterior.
        assert_eq!(model.posterior[4], vec![0.5, 0.5]);
    }
}
