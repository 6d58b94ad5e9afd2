//! Agreement between a predictor and human scores: Pearson (PLCC), Spearman
//! (SRCC), the coefficient of determination (R²) and pairwise accuracy.

use super::ranking::average_ranks;
use std::collections::BTreeMap;

/// Pearson's linear correlation. `None` for fewer than two points or when
/// either side is constant.
pub fn pearson(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    if n < 2 {
        return None;
    }
    let mx = x[..n].iter().sum::<f64>() / n as f64;
    let my = y[..n].iter().sum::<f64>() / n as f64;
    let (mut sxy, mut sxx, mut syy) = (0.0, 0.0, 0.0);
    for (a, b) in x[..n].iter().zip(&y[..n]) {
        sxy += (a - mx) * (b - my);
        sxx += (a - mx).powi(2);
        syy += (b - my).powi(2);
    }
    if sxx == 0.0 || syy == 0.0 {
        return None;
    }
    Some(sxy / (sxx * syy).sqrt())
}

/// Spearman's rank correlation: Pearson on average ranks (ties share ranks).
pub fn spearman(x: &[f64], y: &[f64]) -> Option<f64> {
    let n = x.len().min(y.len());
    pearson(&average_ranks(&x[..n]), &average_ranks(&y[..n]))
}

/// Spearman's rank correlation with its two-sided p-value from the t
/// approximation, as `scipy.stats.spearmanr`: t = r √((n − 2) / (1 − r²)) on
/// n − 2 degrees of freedom. The p-value is `None` for fewer than three
/// points; `r` is `None` when either side is constant.
pub fn spearman_test(x: &[f64], y: &[f64]) -> (Option<f64>, Option<f64>) {
    let n = x.len().min(y.len());
    let Some(r) = spearman(x, y) else { return (None, None) };
    if n < 3 {
        return (Some(r), None);
    }
    let df = (n - 2) as f64;
    let p = if (1.0 - r.abs()) <= 0.0 {
        0.0
    } else {
        let t = r * (df / ((1.0 + r) * (1.0 - r))).sqrt();
        (2.0 * super::special::student_t_sf(t.abs(), df)).min(1.0)
    };
    (Some(r), Some(p))
}

/// Coefficient of determination of `predicted` as a predictor of `truth`:
/// 1 - SS_res / SS_tot. `None` for fewer than two points or constant truth.
pub fn r_squared(truth: &[f64], predicted: &[f64]) -> Option<f64> {
    let n = truth.len().min(predicted.len());
    if n < 2 {
        return None;
    }
    let mean = truth[..n].iter().sum::<f64>() / n as f64;
    let ss_tot: f64 = truth[..n].iter().map(|t| (t - mean).powi(2)).sum();
    if ss_tot == 0.0 {
        return None;
    }
    let ss_res: f64 = truth[..n].iter().zip(&predicted[..n]).map(|(t, p)| (t - p).powi(2)).sum();
    Some(1.0 - ss_res / ss_tot)
}

/// Pairwise ranking accuracy within groups (e.g. images of the same
/// garment-person pair).
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct PairwiseAccuracy {
    /// All comparable pairs pooled.
    pub micro: Option<f64>,
    /// Per group, then averaged over groups that have a comparable pair.
    pub macro_: Option<f64>,
    /// Comparable pairs (different human scores) in all groups.
    pub pairs: usize,
}

/// How a prediction that ties two items with different human scores counts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum PredictionTies {
    /// Exactly equal predictions count 0 (the VTON-IQA paper's text).
    #[default]
    Zero,
    /// Predictions within [`TIE_EPSILON`] count 0.5 (the released code).
    Half,
}

/// Predictions closer than this tie under [`PredictionTies::Half`].
pub const TIE_EPSILON: f64 = 1e-4;

/// The credit of one comparable pair: 1 if the prediction orders `a` and
/// `b` as the humans do, 0 if the other way, ties as `ties` says.
pub fn pair_credit(human_a: f64, human_b: f64, predicted_a: f64, predicted_b: f64, ties: PredictionTies) -> f64 {
    if ties == PredictionTies::Half && (predicted_a - predicted_b).abs() <= TIE_EPSILON {
        return 0.5;
    }
    let model = predicted_a.total_cmp(&predicted_b);
    if model != std::cmp::Ordering::Equal && (model == std::cmp::Ordering::Greater) == (human_a > human_b) {
        1.0
    } else {
        0.0
    }
}

/// For every two items of the same group whose human scores differ, whether
/// the prediction orders them the same way. A tie in the prediction does not
/// preserve the preference and counts as wrong.
pub fn pairwise_accuracy<G: Ord + Clone>(groups: &[G], truth: &[f64], predicted: &[f64]) -> PairwiseAccuracy {
    pairwise_accuracy_with(groups, truth, predicted, PredictionTies::Zero)
}

/// [`pairwise_accuracy`] with a choice of how prediction ties count.
pub fn pairwise_accuracy_with<G: Ord + Clone>(
    groups: &[G],
    truth: &[f64],
    predicted: &[f64],
    ties: PredictionTies,
) -> PairwiseAccuracy {
    let mut members: BTreeMap<G, Vec<usize>> = BTreeMap::new();
    for (i, g) in groups.iter().enumerate().take(truth.len().min(predicted.len())) {
        members.entry(g.clone()).or_default().push(i);
    }
    let (mut correct, mut pairs) = (0.0, 0usize);
    let (mut macro_sum, mut macro_groups) = (0.0, 0usize);
    for idx in members.values() {
        let (mut c, mut p) = (0.0, 0usize);
        for (a_pos, &a) in idx.iter().enumerate() {
            for &b in &idx[a_pos + 1..] {
                if truth[a] == truth[b] {
                    continue;
                }
                p += 1;
                c += pair_credit(truth[a], truth[b], predicted[a], predicted[b], ties);
            }
        }
        if p > 0 {
            macro_sum += c / p as f64;
            macro_groups += 1;
        }
        correct += c;
        pairs += p;
    }
    PairwiseAccuracy {
        micro: (pairs > 0).then(|| correct / pairs as f64),
        macro_: (macro_groups > 0).then(|| macro_sum / macro_groups as f64),
        pairs,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn spearman_p_values_match_scipy() {
        // scipy.stats.spearmanr(x, y), SciPy 1.17.1.
        let cases: [(&[f64], &[f64], f64, f64); 3] = [
            (&[0.6, 0.7, 0.65, 0.8], &[0.62, 0.66, 0.71, 0.79], 0.8, 0.200_000_000_000_000_1),
            (
                &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0],
                &[2.0, 1.0, 4.0, 3.0, 6.0, 5.0],
                0.828_571_428_571_428_7,
                0.041_562_682_215_743_35,
            ),
            (&[1.0, 2.0, 2.0, 4.0, 5.0], &[5.0, 6.0, 7.0, 8.0, 7.0], 0.763_157_894_736_842_1, 0.133_339_119_531_806_24),
        ];
        for (x, y, r, p) in cases {
            let (got_r, got_p) = spearman_test(x, y);
            assert!((got_r.expect("r") - r).abs() < 1e-12);
            assert!((got_p.expect("p") - p).abs() < 1e-10, "{got_p:?} vs {p}");
        }
        assert_eq!(spearman_test(&[1.0, 2.0], &[2.0, 3.0]), (Some(1.0), None), "no p-value for two points");
        assert_eq!(spearman_test(&[1.0, 1.0, 1.0], &[1.0, 2.0, 3.0]), (None, None));
    }

    #[test]
    fn pearson_and_spearman_hand_checked() {
        let x = [1.0, 2.0, 3.0, 4.0, 5.0];
        let y = [2.0, 4.0, 6.0, 8.0, 10.0];
        assert!((pearson(&x, &y).expect("defined") - 1.0).abs() < 1e-12);
        // Monotonic but not linear: Spearman 1, Pearson below 1.
        let z = [1.0, 4.0, 9.0, 16.0, 100.0];
        assert!((spearman(&x, &z).expect("defined") - 1.0).abs() < 1e-12);
        assert!(pearson(&x, &z).expect("defined") < 0.95);
        // scipy.stats.spearmanr([1,2,2,3],[1,3,2,4]).statistic == 0.9486832980505138
        let s = spearman(&[1.0, 2.0, 2.0, 3.0], &[1.0, 3.0, 2.0, 4.0]).expect("defined");
        assert!((s - 0.948_683_298_050_513_8).abs() < 1e-12);
        assert_eq!(pearson(&[1.0, 1.0], &[1.0, 2.0]), None);
    }

    #[test]
    fn r_squared_hand_checked() {
        // sklearn docs: r2_score([3, -0.5, 2, 7], [2.5, 0.0, 2, 8]) == 0.9486081370449679
        let r2 = r_squared(&[3.0, -0.5, 2.0, 7.0], &[2.5, 0.0, 2.0, 8.0]).expect("defined");
        assert!((r2 - 0.948_608_137_044_967_9).abs() < 1e-12);
    }

    #[test]
    fn pairwise_accuracy_micro_and_macro() {
        // Group a: 3 items, human 1 < 2 < 3; prediction gets 2 of 3 pairs right.
        // Group b: 2 items, prediction ties -> 0 of 1. Group c: human tie, no pair.
        let groups = ["a", "a", "a", "b", "b", "c", "c"];
        let truth = [1.0, 2.0, 3.0, 1.0, 2.0, 2.0, 2.0];
        let pred = [0.1, 0.3, 0.2, 0.5, 0.5, 0.1, 0.9];
        let acc = pairwise_accuracy(&groups, &truth, &pred);
        assert_eq!(acc.pairs, 4);
        assert_eq!(acc.micro, Some(0.5));
        assert_eq!(acc.macro_, Some((2.0 / 3.0 + 0.0) / 2.0));
    }
}
