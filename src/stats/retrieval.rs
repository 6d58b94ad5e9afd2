//! Retrieval metrics of the VSD benchmark: HR@k, MRR@k, and ROC-AUC / PR-AUC
//! both micro (pairs pooled) and macro (per query, then averaged).

use super::ranking::{average_precision, roc_auc};
use std::collections::{BTreeMap, HashMap};

/// A model's similarity score for one (query, candidate) pair.
#[derive(Debug, Clone, PartialEq)]
pub struct ScoredPair {
    /// Query image id.
    pub query: String,
    /// Candidate image id.
    pub candidate: String,
    /// Similarity; higher means more similar.
    pub score: f64,
}

/// All retrieval metrics for one model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct RetrievalReport {
    /// ROC-AUC over all labelled pairs pooled; `None` without both classes.
    pub roc_auc_micro: Option<f64>,
    /// Mean ROC-AUC over queries that have both a positive and a negative.
    pub roc_auc_macro: Option<f64>,
    /// Average precision over all labelled pairs pooled.
    pub pr_auc_micro: Option<f64>,
    /// Mean average precision over queries that have both a positive and
    /// a negative (the same queries as the macro ROC-AUC).
    pub pr_auc_macro: Option<f64>,
    /// HR@k per k.
    pub hr: BTreeMap<usize, f64>,
    /// MRR@k per k.
    pub mrr: BTreeMap<usize, f64>,
    /// Queries in the ground truth.
    pub queries: usize,
    /// Labelled pairs in the ground truth.
    pub pairs: usize,
    /// Labelled pairs the model gave no score (ranked below every scored pair).
    pub unscored_pairs: usize,
}

/// Computes the VSD metrics without a product filter (see
/// [`retrieval_metrics_with`]).
pub fn retrieval_metrics(
    ground_truth: &[(String, String, bool)],
    scores: &[ScoredPair],
    ks: &[usize],
) -> RetrievalReport {
    retrieval_metrics_with(ground_truth, scores, ks, None)
}

/// A same-product pattern: a regex with exactly one capture group, the
/// product id of an image id.
pub fn product_pattern(text: &str) -> Result<regex::Regex, String> {
    let re = regex::Regex::new(text).map_err(|e| e.to_string())?;
    if re.captures_len() != 2 {
        return Err(format!("`{text}` must have exactly one capture group (the product id)"));
    }
    Ok(re)
}

/// The key a ranked list keeps one image of: the image's product (the
/// first capture group of `products`), or the image itself when it has
/// none or no pattern is given.
fn product_key<'a>(products: Option<&regex::Regex>, image: &'a str) -> std::borrow::Cow<'a, str> {
    match products.and_then(|re| re.captures(image)?.get(1)) {
        Some(m) => std::borrow::Cow::Owned(format!("product:{}", m.as_str())),
        None => std::borrow::Cow::Borrowed(image),
    }
}

/// A query's ranked candidates as the official evaluation filters them
/// (vsd-benchmark/vsd `filter_results_unique_ids` with the query's own id
/// included): walking down the list, a candidate is kept only when no
/// earlier kept candidate, and not the query itself, shares its product;
/// so the query never ranks itself, and only the first image of each other
/// product keeps a place. Without a pattern every image is its own product
/// (only the query itself is dropped).
pub fn unique_products<'a>(query: &str, ranked: &[&'a str], products: Option<&regex::Regex>) -> Vec<&'a str> {
    let mut seen: std::collections::HashSet<std::borrow::Cow<'_, str>> = std::collections::HashSet::new();
    seen.insert(product_key(products, query));
    ranked.iter().copied().filter(|c| *c != query && seen.insert(product_key(products, c))).collect()
}

/// Computes the VSD metrics.
///
/// * `ground_truth`: labelled (query, candidate) pairs, true = similar.
/// * `scores`: the model's scores; its top-k for a query are the k
///   highest-scored candidates of that query (ties broken by candidate id),
///   filtered as the official evaluation does ([`unique_products`]: never
///   the query itself, and with `products` one image per product).
///
/// HR@k = positives in the top k / (k x queries with a positive);
/// MRR@k = sum of 1/rank of positives in the top k / (queries with a positive
/// x sum_{i=1..k} 1/i), so a perfect model scores 1 on both. Candidates in the
/// top k without a label count as not similar. For the AUCs (as the official
/// evaluation, on the unfiltered scores), a labelled pair the model did not
/// score ranks below all scored pairs; the macro averages (ROC and PR alike)
/// are over the queries with both a positive and a negative.
pub fn retrieval_metrics_with(
    ground_truth: &[(String, String, bool)],
    scores: &[ScoredPair],
    ks: &[usize],
    products: Option<&regex::Regex>,
) -> RetrievalReport {
    let mut labels: HashMap<(&str, &str), bool> = HashMap::new();
    let mut by_query: BTreeMap<&str, Vec<(&str, bool)>> = BTreeMap::new();
    for (q, c, l) in ground_truth {
        labels.insert((q.as_str(), c.as_str()), *l);
    }
    for (&(q, c), &l) in &labels {
        by_query.entry(q).or_default().push((c, l));
    }
    let score_of: HashMap<(&str, &str), f64> =
        scores.iter().map(|s| ((s.query.as_str(), s.candidate.as_str()), s.score)).collect();
    let floor = scores.iter().map(|s| s.score).fold(f64::INFINITY, f64::min);
    let unscored_score = if floor.is_finite() { floor - 1.0 } else { 0.0 };

    let mut all_scores = Vec::new();
    let mut all_labels = Vec::new();
    let mut roc_sum = (0.0, 0usize);
    let mut ap_sum = (0.0, 0usize);
    let mut unscored_pairs = 0;
    for (&q, pairs) in &by_query {
        let mut s = Vec::with_capacity(pairs.len());
        let mut l = Vec::with_capacity(pairs.len());
        for &(c, label) in pairs {
            let score = score_of.get(&(q, c)).copied().unwrap_or_else(|| {
                unscored_pairs += 1;
                unscored_score
            });
            s.push(score);
            l.push(label);
        }
        // Both macro averages over the queries where the ROC-AUC is defined
        // (a positive and a negative): a query of positives only would add
        // an AP of 1 for every model.
        if let Some(auc) = roc_auc(&s, &l) {
            roc_sum.0 += auc;
            roc_sum.1 += 1;
            if let Some(ap) = average_precision(&s, &l) {
                ap_sum.0 += ap;
                ap_sum.1 += 1;
            }
        }
        all_scores.extend(s);
        all_labels.extend(l);
    }

    // Top-k lists from the model's scores.
    // From the scores by pair, so a pair given twice is ranked (and hit) once.
    let mut by_score: HashMap<&str, Vec<(&str, f64)>> = HashMap::new();
    for (&(q, c), &score) in &score_of {
        by_score.entry(q).or_default().push((c, score));
    }
    let ranked: HashMap<&str, Vec<&str>> = by_score
        .into_iter()
        .map(|(q, mut list)| {
            list.sort_by(|a, b| b.1.total_cmp(&a.1).then_with(|| a.0.cmp(b.0)));
            let order: Vec<&str> = list.into_iter().map(|(c, _)| c).collect();
            (q, unique_products(q, &order, products))
        })
        .collect();
    let with_positive: Vec<&str> =
        by_query.iter().filter(|(_, p)| p.iter().any(|&(_, l)| l)).map(|(&q, _)| q).collect();
    let mut hr = BTreeMap::new();
    let mut mrr = BTreeMap::new();
    for &k in ks {
        let (mut hits, mut reciprocal) = (0usize, 0.0);
        for &q in &with_positive {
            for (rank, c) in ranked.get(q).map(Vec::as_slice).unwrap_or(&[]).iter().take(k).enumerate() {
                if labels.get(&(q, *c)).copied().unwrap_or(false) {
                    hits += 1;
                    reciprocal += 1.0 / (rank + 1) as f64;
                }
            }
        }
        let nq = with_positive.len() as f64;
        let harmonic: f64 = (1..=k).map(|i| 1.0 / i as f64).sum();
        let defined = !with_positive.is_empty() && k > 0;
        hr.insert(k, if defined { hits as f64 / (k as f64 * nq) } else { 0.0 });
        mrr.insert(k, if defined { reciprocal / (nq * harmonic) } else { 0.0 });
    }

    let mean = |(sum, n): (f64, usize)| (n > 0).then(|| sum / n as f64);
    RetrievalReport {
        roc_auc_micro: roc_auc(&all_scores, &all_labels),
        roc_auc_macro: mean(roc_sum),
        pr_auc_micro: average_precision(&all_scores, &all_labels),
        pr_auc_macro: mean(ap_sum),
        hr,
        mrr,
        queries: by_query.len(),
        pairs: labels.len(),
        unscored_pairs,
    }
}

/// The scores with each ground-truth pair also under the ground truth's
/// orientation where the model scored it only the other way round: a
/// similarity is symmetric, so (candidate, query) scores (query,
/// candidate). The one orientation rule of the service, `atelier stats
/// retrieval` and `vsd robustness`.
pub fn oriented_scores(ground_truth: &[(String, String, bool)], scores: &[ScoredPair]) -> Vec<ScoredPair> {
    let given: HashMap<(&str, &str), f64> =
        scores.iter().map(|s| ((s.query.as_str(), s.candidate.as_str()), s.score)).collect();
    let mut out = scores.to_vec();
    let mut added: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for (q, c, _) in ground_truth {
        let (q, c) = (q.as_str(), c.as_str());
        if given.contains_key(&(q, c)) || !added.insert((q, c)) {
            continue;
        }
        if let Some(&score) = given.get(&(c, q)) {
            out.push(ScoredPair { query: q.to_owned(), candidate: c.to_owned(), score });
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gt(rows: &[(&str, &str, bool)]) -> Vec<(String, String, bool)> {
        rows.iter().map(|&(q, c, l)| (q.into(), c.into(), l)).collect()
    }

    #[test]
    fn a_pair_scored_the_other_way_round_counts() {
        let truth = gt(&[("q", "a", true), ("q", "b", false)]);
        let given = scored(&[("a", "q", 0.9), ("q", "b", 0.1)]);
        assert_eq!(retrieval_metrics(&truth, &given, &[1]).unscored_pairs, 1, "as given: (q, a) unscored");
        let r = retrieval_metrics(&truth, &oriented_scores(&truth, &given), &[1]);
        assert_eq!((r.unscored_pairs, r.hr.get(&1).copied()), (0, Some(1.0)));
    }

    fn scored(rows: &[(&str, &str, f64)]) -> Vec<ScoredPair> {
        rows.iter().map(|&(q, c, s)| ScoredPair { query: q.into(), candidate: c.into(), score: s }).collect()
    }

    #[test]
    fn hand_checked_example() {
        // q1: positives a, c; negative b. q2: positive x; negative y. q3: only negatives.
        let truth = gt(&[
            ("q1", "a", true),
            ("q1", "b", false),
            ("q1", "c", true),
            ("q2", "x", true),
            ("q2", "y", false),
            ("q3", "m", false),
        ]);
        let model = scored(&[
            ("q1", "b", 0.9),
            ("q1", "a", 0.8),
            ("q1", "z", 0.7),
            ("q1", "c", 0.1),
            ("q2", "x", 0.6),
            ("q2", "y", 0.5),
            ("q3", "m", 0.4),
        ]);
        let r = retrieval_metrics(&truth, &model, &[1, 2]);
        // Top-1: q1 -> b (neg), q2 -> x (pos): HR@1 = 1 / (1 * 2).
        assert_eq!(r.hr[&1], 0.5);
        // Top-2: q1 -> b, a (a at rank 2), q2 -> x, y: hits 2, HR@2 = 2 / (2 * 2).
        assert_eq!(r.hr[&2], 0.5);
        // MRR@2 = (1/2 + 1) / (2 * (1 + 1/2)) = 0.5.
        assert_eq!(r.mrr[&2], 0.5);
        assert_eq!(r.mrr[&1], 0.5);
        // q1 AUC: positives a(0.8), c(0.1) vs negative b(0.9): 0 of 2 pairs won -> 0.
        // q2 AUC: 1. Macro over q1, q2 = 0.5 (q3 has no positive).
        assert_eq!(r.roc_auc_macro, Some(0.5));
        // q1 AP: ranks b, a, c -> precision at a = 1/2, at c = 2/3 -> (1/2 + 2/3) / 2.
        let ap_q1 = (0.5 + 2.0 / 3.0) / 2.0;
        let ap = r.pr_auc_macro.expect("queries with positives");
        assert!((ap - (ap_q1 + 1.0) / 2.0).abs() < 1e-12);
        assert_eq!(r.queries, 3);
        assert_eq!(r.pairs, 6);
        assert_eq!(r.unscored_pairs, 0);
        // Micro pools the six pairs: scores pos {0.8, 0.1, 0.6}, neg {0.9, 0.5, 0.4}.
        // Pairs won: 0.8 beats 0.5, 0.4; 0.6 beats 0.5, 0.4; 0.1 none -> 4 / 9.
        let micro = r.roc_auc_micro.expect("both classes");
        assert!((micro - 4.0 / 9.0).abs() < 1e-12);
    }

    #[test]
    fn a_pair_scored_twice_is_ranked_and_hit_once() {
        let truth = gt(&[("q", "a", true), ("q", "b", false)]);
        let once = retrieval_metrics(&truth, &scored(&[("q", "a", 0.9), ("q", "b", 0.1)]), &[2]);
        let twice = retrieval_metrics(&truth, &scored(&[("q", "a", 0.9), ("q", "a", 0.9), ("q", "b", 0.1)]), &[2]);
        // One positive in the top 2 of one query: HR@2 = 1 / (2 * 1), however often it is listed.
        assert_eq!(once.hr[&2], 0.5);
        assert_eq!(twice.hr[&2], once.hr[&2]);
        assert_eq!(twice.mrr[&2], once.mrr[&2]);
    }

    #[test]
    fn a_models_score_of_the_query_itself_never_takes_a_place() {
        // q scores itself highest: the official lists never hold the query.
        let truth = gt(&[("q", "a", true), ("q", "b", false)]);
        let r = retrieval_metrics(&truth, &scored(&[("q", "q", 1.0), ("q", "b", 0.9), ("q", "a", 0.8)]), &[2]);
        assert_eq!(r.hr[&2], 0.5, "a at rank 2 of [b, a]: 1 / (2 x 1)");
        // MRR@2 = (1/2) / (1 + 1/2).
        assert!((r.mrr[&2] - 1.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn one_image_per_product_keeps_a_place_as_the_official_filter_does() {
        // The official `filter_results_unique_ids`, written out: walk the list, keep an image
        // whose product id was not seen (the query's own product seen first).
        let re = regex::Regex::new(r"^(p\d+)_").expect("regex");
        let ranked = ["p1_b", "p2_a", "p2_b", "p3_a", "x", "p1_a"];
        assert_eq!(unique_products("p1_a", &ranked, Some(&re)), ["p2_a", "p3_a", "x"]);
        assert_eq!(unique_products("p1_a", &ranked, None), ["p1_b", "p2_a", "p2_b", "p3_a", "x"]);
        // HR@2 and MRR@2 with p3_a similar: official lists [p2_a, p3_a] hit at rank 2.
        let truth = gt(&[("p1_a", "p3_a", true), ("p1_a", "p2_a", false)]);
        let scores = scored(&[("p1_a", "p2_a", 0.9), ("p1_a", "p2_b", 0.8), ("p1_a", "p3_a", 0.7)]);
        let r = retrieval_metrics_with(&truth, &scores, &[2], Some(&re));
        assert_eq!(r.hr[&2], 0.5);
        let unfiltered = retrieval_metrics(&truth, &scores, &[2]);
        assert_eq!(unfiltered.hr[&2], 0.0, "p2_b would have taken the second place");
    }

    #[test]
    fn macro_averages_count_the_queries_with_both_classes_for_roc_and_pr_alike() {
        // q1: a positive and a negative (AP 1/2 with the negative first); q2: positives only.
        let truth = gt(&[("q1", "a", true), ("q1", "b", false), ("q2", "c", true)]);
        let r = retrieval_metrics(&truth, &scored(&[("q1", "b", 0.9), ("q1", "a", 0.1), ("q2", "c", 0.5)]), &[]);
        assert_eq!(r.roc_auc_macro, Some(0.0));
        assert_eq!(r.pr_auc_macro, Some(0.5), "q2's AP of 1 is not averaged in");
    }

    #[test]
    fn unscored_labelled_pairs_rank_last() {
        let truth = gt(&[("q", "a", true), ("q", "b", false)]);
        let r = retrieval_metrics(&truth, &scored(&[("q", "b", 0.2)]), &[1]);
        assert_eq!(r.unscored_pairs, 1);
        assert_eq!(r.roc_auc_micro, Some(0.0));
        assert_eq!(r.hr[&1], 0.0);
    }
}
