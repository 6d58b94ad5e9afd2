//! Rank-based building blocks shared by the metrics: average ranks with ties,
//! ROC-AUC and average precision as scikit-learn computes them.

/// Ranks (1-based) of the values, tied values sharing their average rank.
pub fn average_ranks(values: &[f64]) -> Vec<f64> {
    let mut order: Vec<usize> = (0..values.len()).collect();
    order.sort_by(|&a, &b| values[a].total_cmp(&values[b]));
    let mut ranks = vec![0.0; values.len()];
    let mut i = 0;
    while i < order.len() {
        let mut j = i;
        while j + 1 < order.len() && values[order[j + 1]] == values[order[i]] {
            j += 1;
        }
        // Positions i..=j (0-based) share ranks i+1..=j+1.
        let rank = (i + j) as f64 / 2.0 + 1.0;
        for &o in &order[i..=j] {
            ranks[o] = rank;
        }
        i = j + 1;
    }
    ranks
}

/// Area under the ROC curve for scores and binary labels; a tie between a
/// positive and a negative counts one half. `None` without both classes.
pub fn roc_auc(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let positives = labels.iter().filter(|&&l| l).count();
    let negatives = labels.len() - positives;
    if positives == 0 || negatives == 0 {
        return None;
    }
    let ranks = average_ranks(scores);
    let rank_sum: f64 = ranks.iter().zip(labels).filter(|(_, &l)| l).map(|(r, _)| r).sum();
    let p = positives as f64;
    Some((rank_sum - p * (p + 1.0) / 2.0) / (p * negatives as f64))
}

/// Average precision as scikit-learn's `average_precision_score`: the sum over
/// distinct score thresholds (highest first) of the recall gained times the
/// precision at that threshold; tied scores form one threshold. `None`
/// without positives.
pub fn average_precision(scores: &[f64], labels: &[bool]) -> Option<f64> {
    let positives = labels.iter().filter(|&&l| l).count();
    if positives == 0 {
        return None;
    }
    let mut order: Vec<usize> = (0..scores.len()).collect();
    order.sort_by(|&a, &b| scores[b].total_cmp(&scores[a]));
    let (mut tp, mut seen, mut ap, mut last_recall) = (0usize, 0usize, 0.0, 0.0);
    let mut i = 0;
    while i < order.len() {
        let threshold = scores[order[i]];
        while i < order.len() && scores[order[i]] == threshold {
            tp += usize::from(labels[order[i]]);
            seen += 1;
            i += 1;
        }
        let recall = tp as f64 / positives as f64;
        ap += (recall - last_recall) * (tp as f64 / seen as f64);
        last_recall = recall;
    }
    Some(ap)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn average_ranks_share_ties() {
        assert_eq!(average_ranks(&[10.0, 20.0, 10.0, 30.0]), vec![1.5, 3.0, 1.5, 4.0]);
    }

    #[test]
    fn roc_auc_matches_scikit_learn_examples() {
        // sklearn docs: roc_auc_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.75
        let auc = roc_auc(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]).expect("both classes");
        assert!((auc - 0.75).abs() < 1e-12);
        // One tie between a positive and a negative counts one half.
        let auc = roc_auc(&[0.5, 0.5], &[true, false]).expect("both classes");
        assert_eq!(auc, 0.5);
        assert_eq!(roc_auc(&[0.1], &[true]), None);
    }

    #[test]
    fn average_precision_matches_scikit_learn_examples() {
        // sklearn docs: average_precision_score([0, 0, 1, 1], [0.1, 0.4, 0.35, 0.8]) == 0.8333...
        let ap = average_precision(&[0.1, 0.4, 0.35, 0.8], &[false, false, true, true]).expect("positives");
        assert!((ap - 0.833_333_333_333_333_4).abs() < 1e-12);
        // Tied scores form one threshold: precision 1/2 reached at recall 1.
        let ap = average_precision(&[0.7, 0.7], &[true, false]).expect("positives");
        assert_eq!(ap, 0.5);
        assert_eq!(average_precision(&[0.3], &[false]), None);
    }
}
