//! Turning several annotators' labels for one item into one label: majority
//! vote with an explicit tie rule, soft labels, and mean scores for ratings.

use std::collections::BTreeMap;

/// What to do when several labels share the highest vote count.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum TieRule {
    /// Pick the negative label (`0`, `false` or `no`) when it is among the
    /// tied; otherwise the tie stays unresolved.
    Negative,
    /// Pick the smallest tied label (numerically when all tied labels are numbers).
    Low,
    /// Leave the tie unresolved.
    None,
}

/// The outcome of a majority vote on one item.
#[derive(Debug, Clone, PartialEq)]
pub struct MajorityVote {
    /// The chosen label, or `None` when the tie was left unresolved.
    pub label: Option<String>,
    /// The labels that shared the highest count (one label when there was no tie).
    pub tied: Vec<String>,
    /// Share of votes held by each top label.
    pub share: f64,
    /// Number of votes cast.
    pub votes: usize,
}

/// Returns true for labels that mean "negative" under [`TieRule::Negative`].
pub fn is_negative_label(label: &str) -> bool {
    matches!(label.trim().to_ascii_lowercase().as_str(), "0" | "false" | "no")
}

/// Orders labels numerically when both parse as numbers, else as text.
fn label_order(a: &str, b: &str) -> std::cmp::Ordering {
    match (a.trim().parse::<f64>(), b.trim().parse::<f64>()) {
        (Ok(x), Ok(y)) => x.total_cmp(&y),
        _ => a.cmp(b),
    }
}

/// Share of votes per label, in label order.
pub fn soft_label<S: AsRef<str>>(labels: &[S]) -> BTreeMap<String, f64> {
    let counts = count_labels(labels);
    let n = labels.len() as f64;
    counts.into_iter().map(|(k, c)| (k, c as f64 / n)).collect()
}

fn count_labels<S: AsRef<str>>(labels: &[S]) -> BTreeMap<String, usize> {
    let mut counts = BTreeMap::new();
    for l in labels {
        *counts.entry(l.as_ref().to_owned()).or_insert(0) += 1;
    }
    counts
}

/// Majority vote over one item's labels. `None` when there are no labels.
pub fn majority_vote<S: AsRef<str>>(labels: &[S], ties: TieRule) -> Option<MajorityVote> {
    let counts = count_labels(labels);
    let top = *counts.values().max()?;
    let mut tied: Vec<String> = counts.into_iter().filter(|&(_, c)| c == top).map(|(k, _)| k).collect();
    tied.sort_by(|a, b| label_order(a, b));
    let label = if tied.len() == 1 {
        tied.first().cloned()
    } else {
        match ties {
            TieRule::Negative => tied.iter().find(|l| is_negative_label(l)).cloned(),
            TieRule::Low => tied.first().cloned(),
            TieRule::None => None,
        }
    };
    Some(MajorityVote { label, tied, share: top as f64 / labels.len() as f64, votes: labels.len() })
}

/// Summary of ordinal ratings on a scale `1..=L`.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct MeanScore<const L: usize> {
    /// Mean rating.
    pub mean: f64,
    /// The mean mapped linearly from `[1, L]` to `[-1, 1]`.
    pub normalized: f64,
    /// Number of ratings.
    pub n: usize,
    /// Count of each rating, index 0 for rating 1.
    #[serde(with = "serde_arrays")]
    pub votes: [usize; L],
}

/// Serialises fixed-size arrays of any length as JSON arrays.
mod serde_arrays {
    use serde::Serializer;

    pub fn serialize<S: Serializer, const L: usize>(v: &[usize; L], s: S) -> Result<S::Ok, S::Error> {
        s.collect_seq(v.iter())
    }
}

/// Mean of ordinal ratings on the scale `1..=L` and its normalisation to
/// [-1, 1]. Ratings outside the scale are ignored; `None` when no rating is
/// valid or the scale has fewer than two levels. Allocation-free, because it
/// runs once per image over whole campaigns.
pub fn mean_score<const L: usize>(ratings: &[u8]) -> Option<MeanScore<L>> {
    if L < 2 {
        return None;
    }
    let mut votes = [0usize; L];
    let mut sum = 0usize;
    for &r in ratings {
        let r = usize::from(r);
        if (1..=L).contains(&r) {
            votes[r - 1] += 1;
            sum += r;
        }
    }
    let n: usize = votes.iter().sum();
    if n == 0 {
        return None;
    }
    let mean = sum as f64 / n as f64;
    Some(MeanScore { mean, normalized: normalize_score(mean, L), n, votes })
}

/// Maps a mean rating on `1..=levels` linearly onto [-1, 1].
pub fn normalize_score(mean: f64, levels: usize) -> f64 {
    2.0 * (mean - 1.0) / (levels as f64 - 1.0) - 1.0
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn clear_majority_wins_with_its_share() {
        let v = majority_vote(&["a", "b", "a"], TieRule::None).expect("votes");
        assert_eq!(v.label.as_deref(), Some("a"));
        assert!((v.share - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn tie_rules_are_applied_as_asked() {
        let labels = ["1", "0", "1", "0"];
        assert_eq!(majority_vote(&labels, TieRule::Negative).and_then(|v| v.label).as_deref(), Some("0"));
        assert_eq!(majority_vote(&labels, TieRule::None).and_then(|v| v.label), None);
        let numbers = ["10", "9", "10", "9"];
        // Numeric order, not text order ("10" < "9" as text).
        assert_eq!(majority_vote(&numbers, TieRule::Low).and_then(|v| v.label).as_deref(), Some("9"));
        let no_negative = ["yes", "maybe"];
        assert_eq!(majority_vote(&no_negative, TieRule::Negative).and_then(|v| v.label), None);
        assert_eq!(majority_vote(&["No", "yes"], TieRule::Negative).and_then(|v| v.label).as_deref(), Some("No"));
        assert!(majority_vote::<&str>(&[], TieRule::Low).is_none());
    }

    #[test]
    fn soft_label_shares_sum_to_one() {
        let s = soft_label(&["x", "y", "x", "z"]);
        assert_eq!(s["x"], 0.5);
        assert_eq!(s["y"], 0.25);
        assert!((s.values().sum::<f64>() - 1.0).abs() < 1e-12);
    }

    #[test]
    fn mean_score_and_normalisation() {
        let s = mean_score::<3>(&[1, 3, 3, 2]).expect("ratings");
        assert_eq!(s.mean, 2.25);
        assert_eq!(s.votes, [1, 1, 2]);
        assert_eq!(s.normalized, 0.25);
        assert_eq!(normalize_score(1.0, 3), -1.0);
        assert_eq!(normalize_score(3.0, 3), 1.0);
        assert!(mean_score::<3>(&[0, 4]).is_none());
        assert_eq!(serde_json::to_value(&s).expect("serialises")["votes"], serde_json::json!([1, 1, 2]));
    }
}
