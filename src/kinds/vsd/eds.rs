//! Efficient Discovery of Similarities (EDS): the suspects several retrieval
//! models propose, the experts' label rule, and the estimates of p. Pure: no
//! database, no files.
//!
//! A model's ranking gives R_m(q, c), the zero-based rank of candidate c for
//! query q. S_k^m is the set of ordered pairs (q, c) among the first k of q's
//! list once the query itself (and, with the same-product filter, images of
//! the query's product) are dropped and the rest re-ranked, as the official
//! evaluation code filters; S_k = ∪_m S_k^m. A suspect's query is the image
//! the model ranked it for. Similarity is symmetric, so experts label the
//! unordered pair once ([`Pair`]); where both (q1, q2) and (q2, q1) are
//! proposed (queries ranking each other, in the wild setting) the one label
//! counts under each query: |S_k|, p_k, p_LB and HR/MRR per query follow the
//! ordered pairs.

use std::collections::{BTreeMap, BTreeSet};

/// One row of a model's ranking.
#[derive(Debug, Clone, PartialEq)]
pub struct Ranked {
    /// The model.
    pub model: String,
    /// The query image.
    pub query: String,
    /// The candidate image.
    pub candidate: String,
    /// Zero-based rank of the candidate for the query.
    pub rank: u32,
}

/// An unordered pair, stored with the smaller id first.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash, serde::Serialize, serde::Deserialize)]
pub struct Pair {
    /// The id that sorts first.
    pub query: String,
    /// The other id.
    pub candidate: String,
}

impl Pair {
    /// The unordered pair of two images (`None` for an image paired with itself).
    pub fn new(a: &str, b: &str) -> Option<Self> {
        match a.cmp(b) {
            std::cmp::Ordering::Less => Some(Self { query: a.to_owned(), candidate: b.to_owned() }),
            std::cmp::Ordering::Greater => Some(Self { query: b.to_owned(), candidate: a.to_owned() }),
            std::cmp::Ordering::Equal => None,
        }
    }
}

/// A suspect with its provenance: every model that proposed it, at its best rank.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Suspect {
    /// The query the models ranked the candidate for.
    pub query: String,
    /// The candidate.
    pub candidate: String,
    /// Model -> the rank (after dropping the query itself and, with the
    /// filter, its product's images) at which it proposed the candidate for
    /// this query.
    pub proposed_by: BTreeMap<String, u32>,
    /// Which of the two images were queries of the rankings that proposed it
    /// (|Q| counts them; not part of the printed pair).
    #[serde(skip)]
    pub from_queries: BTreeSet<String>,
}

/// The suspects of some rankings at one k.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Suspects {
    /// The cut-off.
    pub k: u32,
    /// Every model of the rankings, sorted.
    pub models: Vec<String>,
    /// Distinct queries of the rankings (|Q|).
    pub queries: usize,
    /// |S_k|.
    pub suspects: usize,
    /// |M| · |Q| · k: the size if the models never agreed.
    pub upper_bound: u64,
    /// |S_k^m| per model.
    pub per_model: BTreeMap<String, usize>,
    /// |S_k^m1 ∩ S_k^m2| for every pair of models (the diagonal is |S_k^m|).
    pub overlap: BTreeMap<String, BTreeMap<String, usize>>,
    /// The suspects, sorted by (query, candidate).
    pub pairs: Vec<Suspect>,
}

/// How far past k a ranking must be read for [`suspects`] to re-rank after
/// dropping the query itself (one place) or, with the same-product filter,
/// the images of the query's product (up to 10·k + 10 places are read).
pub fn ranks_needed(k: u32, same_product: bool) -> u32 {
    if same_product {
        k.saturating_mul(11).saturating_add(10)
    } else {
        k.saturating_add(1)
    }
}

/// Builds S_k from rankings (read at least to [`ranks_needed`]): per model
/// and query, the list is filtered as the official evaluation filters it
/// ([`crate::stats::retrieval::unique_products`]: the query itself is
/// dropped and, with `same_product`, a regex with one capture group
/// extracting a product id from an image id, only the first image of each
/// product other than the query's keeps a place), the rest re-ranked, and
/// the first k kept.
pub fn suspects(rankings: &[Ranked], k: u32, same_product: Option<&regex::Regex>) -> Suspects {
    let models: BTreeSet<&str> = rankings.iter().map(|r| r.model.as_str()).collect();
    let queries: BTreeSet<&str> = rankings.iter().map(|r| r.query.as_str()).collect();
    let mut lists: BTreeMap<(&str, &str), Vec<&Ranked>> = BTreeMap::new();
    for r in rankings {
        lists.entry((r.model.as_str(), r.query.as_str())).or_default().push(r);
    }
    let mut by_pair: BTreeMap<(String, String), BTreeMap<String, u32>> = BTreeMap::new();
    for ((model, query), mut list) in lists {
        list.sort_by(|a, b| a.rank.cmp(&b.rank).then_with(|| a.candidate.cmp(&b.candidate)));
        let ranked: Vec<&str> = list.iter().map(|r| r.candidate.as_str()).collect();
        let kept = crate::stats::retrieval::unique_products(query, &ranked, same_product);
        for (rank, candidate) in kept.into_iter().take(k as usize).enumerate() {
            let rank = u32::try_from(rank).unwrap_or(u32::MAX);
            let best = by_pair.entry((query.to_owned(), candidate.to_owned())).or_default().entry(model.to_owned());
            let best = best.or_insert(rank);
            *best = (*best).min(rank);
        }
    }
    let pairs = by_pair
        .into_iter()
        .map(|((query, candidate), proposed_by)| Suspect {
            from_queries: BTreeSet::from([query.clone()]),
            query,
            candidate,
            proposed_by,
        })
        .collect();
    assemble(k, models.iter().map(|m| (*m).to_owned()).collect(), queries.len(), pairs)
}

/// Suspects already built (e.g. a pool's pairs with their provenance): the
/// models are those that proposed any, the queries those the pairs came
/// from (a pair without that record counts its first id).
pub fn from_pairs(k: u32, mut pairs: Vec<Suspect>) -> Suspects {
    let models: BTreeSet<String> = pairs.iter().flat_map(|p| p.proposed_by.keys().cloned()).collect();
    let queries = pairs
        .iter()
        .flat_map(|p| {
            if p.from_queries.is_empty() {
                vec![p.query.as_str()]
            } else {
                p.from_queries.iter().map(String::as_str).collect()
            }
        })
        .collect::<BTreeSet<_>>()
        .len();
    pairs.sort_by(|a, b| (&a.query, &a.candidate).cmp(&(&b.query, &b.candidate)));
    assemble(k, models, queries, pairs)
}

fn assemble(k: u32, models: BTreeSet<String>, queries: usize, pairs: Vec<Suspect>) -> Suspects {
    let mut per_model: BTreeMap<String, usize> = models.iter().map(|m| (m.clone(), 0)).collect();
    let mut overlap: BTreeMap<String, BTreeMap<String, usize>> =
        models.iter().map(|a| (a.clone(), models.iter().map(|b| (b.clone(), 0)).collect())).collect();
    for s in &pairs {
        for a in s.proposed_by.keys() {
            *per_model.entry(a.clone()).or_default() += 1;
            let row = overlap.entry(a.clone()).or_default();
            for b in s.proposed_by.keys() {
                *row.entry(b.clone()).or_default() += 1;
            }
        }
    }
    Suspects {
        k,
        upper_bound: models.len() as u64 * queries as u64 * u64::from(k),
        models: models.into_iter().collect(),
        queries,
        suspects: pairs.len(),
        per_model,
        overlap,
        pairs,
    }
}

/// One expert's label of a pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Vote {
    /// Similar (`1`).
    Similar,
    /// Not similar (`0`).
    NotSimilar,
    /// The expert cannot tell.
    Unsure,
}

impl Vote {
    /// Parses `1`, `0` or `unsure`.
    pub fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "1" => Some(Self::Similar),
            "0" => Some(Self::NotSimilar),
            t if t.eq_ignore_ascii_case("unsure") => Some(Self::Unsure),
            _ => None,
        }
    }
}

/// The ground truth of a pair from its votes: the majority of the 0/1 votes;
/// a tie is negative when at least one 0/1 vote exists; only `unsure` votes
/// (or none) give no label.
pub fn label(votes: &[Vote]) -> Option<bool> {
    let yes = votes.iter().filter(|v| **v == Vote::Similar).count();
    let no = votes.iter().filter(|v| **v == Vote::NotSimilar).count();
    (yes + no > 0).then_some(yes > no)
}

/// The label of every pair with votes.
pub fn labels(votes: &BTreeMap<Pair, Vec<Vote>>) -> BTreeMap<Pair, Option<bool>> {
    votes.iter().map(|(p, v)| (p.clone(), label(v))).collect()
}

/// A random sample of pairs drawn uniformly from A (suspects included), labelled.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct Sample {
    /// Labelled pairs in the sample.
    pub b: usize,
    /// Of those, positives.
    pub a: usize,
}

/// What EDS tells about the share of similar pairs.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Estimate {
    /// |S_k|.
    pub suspects: usize,
    /// Suspects with a label.
    pub labelled: usize,
    /// Suspects without one (no votes, or only `unsure`).
    pub unlabelled: usize,
    /// Positive suspects.
    pub positives: usize,
    /// positives / labelled.
    pub p_k: Option<f64>,
    /// The same over each model's S_k^m.
    pub p_k_by_model: BTreeMap<String, Option<f64>>,
    /// |A|: every (query, candidate) pair.
    pub pairs_total: u64,
    /// positives / |A|: a lower bound of p.
    pub p_lb: f64,
    /// The random sample, if one was labelled.
    pub sample: Option<Sample>,
    /// max(p_lb, a / b), the MAP estimate of p under a uniform prior on
    /// [p_lb, 1]; p_lb without a sample.
    pub p_hat: f64,
    /// p_k / p_hat: how many times more often EDS finds a similar pair than
    /// random sampling.
    pub speedup: Option<f64>,
    /// Krippendorff's nominal alpha of the experts' 0/1 votes.
    pub alpha: Option<f64>,
}

/// |A|: queries × (catalog − 1) for queries from the catalog itself (a
/// query is not its own candidate), queries × catalog in the wild.
pub fn pairs_total(queries: u64, catalog: u64, wild: bool) -> u64 {
    if wild {
        queries * catalog
    } else {
        queries * catalog.saturating_sub(1)
    }
}

/// The sample size for an error of at most `eps` with probability `q`:
/// ⌈1 / (ε q)⌉ (Chebyshev, as in the paper).
pub fn sample_size(eps: f64, q: f64) -> Option<u64> {
    (eps > 0.0 && q > 0.0 && (eps * q).is_finite()).then(|| (1.0 / (eps * q)).ceil() as u64)
}

/// The estimates from suspects, the label of each voted pair, |A|, a
/// sample's labels and the experts' alpha.
pub fn estimate(
    suspects: &Suspects,
    labels: &BTreeMap<Pair, Option<bool>>,
    pairs_total: u64,
    sample: Option<Sample>,
    alpha: Option<f64>,
) -> Estimate {
    let label_of = |s: &Suspect| labels.get(&Pair::new(&s.query, &s.candidate)?).copied().flatten();
    let share = |pos: usize, n: usize| (n > 0).then(|| pos as f64 / n as f64);
    let (mut labelled, mut positives) = (0, 0);
    let mut by_model: BTreeMap<&str, (usize, usize)> = suspects.models.iter().map(|m| (m.as_str(), (0, 0))).collect();
    for s in &suspects.pairs {
        let Some(l) = label_of(s) else { continue };
        labelled += 1;
        positives += usize::from(l);
        for m in s.proposed_by.keys() {
            let e = by_model.entry(m.as_str()).or_default();
            e.0 += 1;
            e.1 += usize::from(l);
        }
    }
    let p_lb = if pairs_total > 0 { positives as f64 / pairs_total as f64 } else { 0.0 };
    let p_hat = match sample {
        Some(Sample { a, b }) if b > 0 => p_lb.max(a as f64 / b as f64),
        _ => p_lb,
    };
    let p_k = share(positives, labelled);
    Estimate {
        suspects: suspects.suspects,
        labelled,
        unlabelled: suspects.suspects - labelled,
        positives,
        p_k,
        p_k_by_model: by_model.into_iter().map(|(m, (n, pos))| (m.to_owned(), share(pos, n))).collect(),
        pairs_total,
        p_lb,
        sample,
        p_hat,
        speedup: p_k.filter(|_| p_hat > 0.0).map(|p| p / p_hat),
        alpha,
    }
}

/// Krippendorff's nominal alpha of 0/1 votes (pairs are units, experts
/// coders, `unsure` missing); `None` when undefined.
pub fn votes_alpha(votes: &BTreeMap<Pair, Vec<Vote>>) -> Option<f64> {
    use crate::stats::alpha::{alpha, Level, ReliabilityData};
    let units = votes.values().map(|v| {
        v.iter()
            .filter_map(|v| match v {
                Vote::Similar => Some(1.0),
                Vote::NotSimilar => Some(0.0),
                Vote::Unsure => None,
            })
            .collect::<Vec<f64>>()
    });
    alpha(&ReliabilityData::from_units(units), Level::Nominal).alpha.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(model: &str, query: &str, candidate: &str, rank: u32) -> Ranked {
        Ranked { model: model.into(), query: query.into(), candidate: candidate.into(), rank }
    }

    #[test]
    fn suspects_are_the_union_of_top_k_ordered_pairs_with_provenance() {
        let rankings = vec![
            r("m1", "q1", "a", 0),
            r("m1", "q1", "b", 1),
            r("m1", "q1", "c", 2), // beyond k = 2
            r("m2", "q1", "b", 0),
            r("m2", "q1", "q1", 1), // the query itself: dropped
            r("m2", "a", "q1", 0),  // a is a query too: (a, q1) is a suspect of its own
            r("m2", "a", "b", 1),
        ];
        let s = suspects(&rankings, 2, None);
        let pairs: Vec<(&str, &str)> = s.pairs.iter().map(|p| (p.query.as_str(), p.candidate.as_str())).collect();
        assert_eq!(pairs, vec![("a", "b"), ("a", "q1"), ("q1", "a"), ("q1", "b")], "the query first, as ranked");
        assert_eq!(s.pairs[1].proposed_by, BTreeMap::from([("m2".into(), 0)]));
        assert_eq!(s.pairs[2].proposed_by, BTreeMap::from([("m1".into(), 0)]));
        assert_eq!(s.pairs[3].proposed_by, BTreeMap::from([("m1".into(), 1), ("m2".into(), 0)]));
        assert_eq!(s.per_model, BTreeMap::from([("m1".into(), 2), ("m2".into(), 3)]));
        assert_eq!(s.overlap["m1"]["m2"], 1);
        assert_eq!(s.overlap["m2"]["m2"], 3);
        assert_eq!((s.queries, s.upper_bound), (2, 2 * 2 * 2));
    }

    #[test]
    fn the_query_itself_is_dropped_and_the_list_re_ranked_before_the_top_k() {
        // As the official evaluation filters: a model that ranks the query
        // first still gives k candidates.
        let rankings = vec![r("m", "q", "q", 0), r("m", "q", "a", 1), r("m", "q", "b", 2), r("m", "q", "c", 3)];
        let s = suspects(&rankings, 2, None);
        let pairs: Vec<(&str, &str, u32)> =
            s.pairs.iter().map(|p| (p.query.as_str(), p.candidate.as_str(), p.proposed_by["m"])).collect();
        assert_eq!(pairs, vec![("q", "a", 0), ("q", "b", 1)]);
        // The same product, with the filter: dropped too, and re-ranked.
        let re = regex::Regex::new(r"^(p\d+)_").expect("regex");
        let rankings = vec![
            r("m", "p1_a", "p1_b", 0),
            r("m", "p1_a", "p2_a", 1),
            r("m", "p1_a", "p1_c", 2),
            r("m", "p1_a", "p3_a", 3),
        ];
        let s = suspects(&rankings, 2, Some(&re));
        let pairs: Vec<&str> = s.pairs.iter().map(|p| p.candidate.as_str()).collect();
        assert_eq!(pairs, vec!["p2_a", "p3_a"]);
        assert!(ranks_needed(2, false) >= 3 && ranks_needed(2, true) >= 4);
    }

    #[test]
    fn one_image_of_each_other_product_takes_a_place_as_the_official_code_keeps() {
        // filter_results_unique_ids: p2_b is dropped after p2_a, so p3_a takes the second place.
        let re = regex::Regex::new(r"^(p\d+)_").expect("regex");
        let rankings = vec![
            r("m", "p1_a", "p2_a", 0),
            r("m", "p1_a", "p2_b", 1),
            r("m", "p1_a", "p3_a", 2),
            r("m", "p1_a", "p4_a", 3),
        ];
        let s = suspects(&rankings, 2, Some(&re));
        let pairs: Vec<&str> = s.pairs.iter().map(|p| p.candidate.as_str()).collect();
        assert_eq!(pairs, vec!["p2_a", "p3_a"]);
    }

    #[test]
    fn pairs_of_the_same_product_can_be_left_out() {
        let rankings = vec![r("m", "p1_front", "p1_back", 0), r("m", "p1_front", "p2_front", 1)];
        let re = regex::Regex::new(r"^(p\d+)_").expect("regex");
        let s = suspects(&rankings, 5, Some(&re));
        assert_eq!(s.suspects, 1);
        assert_eq!(s.pairs[0].candidate, "p2_front");
    }

    #[test]
    fn the_label_is_the_majority_with_ties_negative_and_unsure_only_unlabelled() {
        use Vote::*;
        assert_eq!(label(&[Similar, Similar, NotSimilar]), Some(true));
        assert_eq!(label(&[Similar, NotSimilar]), Some(false), "a tie is negative");
        assert_eq!(label(&[Similar, NotSimilar, Unsure, Unsure]), Some(false));
        assert_eq!(label(&[Unsure, Similar]), Some(true));
        assert_eq!(label(&[Unsure, Unsure]), None);
        assert_eq!(label(&[]), None);
    }

    #[test]
    fn estimates_reproduce_the_papers_figures() {
        // DF in-catalog: |S_k| = 54,170 of which 45,920 positive; 2,000
        // queries in a 52,712-image catalog; a sample of b = 2,000 with a = 2.
        let pairs: Vec<Suspect> = (0..54_170)
            .map(|i| Suspect {
                query: format!("q{:04}", i % 2_000),
                candidate: format!("c{i:05}"),
                proposed_by: BTreeMap::from([("m".to_owned(), 0)]),
                from_queries: BTreeSet::new(),
            })
            .collect();
        let labels: BTreeMap<Pair, Option<bool>> = pairs
            .iter()
            .enumerate()
            .filter_map(|(i, p)| Some((Pair::new(&p.query, &p.candidate)?, Some(i < 45_920))))
            .collect();
        let s = from_pairs(6, pairs);
        let total = pairs_total(2_000, 52_712, false);
        assert_eq!(total, 105_422_000);
        let e = estimate(&s, &labels, total, Some(Sample { b: 2_000, a: 2 }), None);
        assert_eq!((e.suspects, e.labelled, e.positives), (54_170, 54_170, 45_920));
        let p_k = e.p_k.expect("p_k");
        assert!((p_k - 0.847_701_6).abs() < 1e-6, "the paper prints 0.848: {p_k}");
        // The paper prints p_LB = 0.00045; the arithmetic gives 0.000436 (also
        // with |A| = 2,000 x 52,712), so the printed figure is a rounding slip.
        assert!((e.p_lb - 0.000_435_58).abs() < 1e-8, "{}", e.p_lb);
        assert_eq!(e.p_hat, 0.001, "the paper's p-hat = 2 / 2,000");
        let speedup = e.speedup.expect("speed-up");
        assert!((speedup - 847.7).abs() < 0.1, "EDS finds positives ~848x as often: {speedup}");
        assert_eq!(sample_size(0.01, 0.05), Some(2_000));
        assert_eq!(sample_size(0.0, 0.05), None);
    }

    #[test]
    fn estimate_counts_labelled_suspects_per_model() {
        let rankings = vec![r("m1", "q", "a", 0), r("m1", "q", "b", 1), r("m2", "q", "b", 0), r("m2", "q", "c", 1)];
        let s = suspects(&rankings, 2, None);
        let labels: BTreeMap<Pair, Option<bool>> = [
            (Pair::new("q", "a").expect("pair"), Some(true)),
            (Pair::new("q", "b").expect("pair"), Some(false)),
            (Pair::new("q", "c").expect("pair"), None),
        ]
        .into_iter()
        .collect();
        let e = estimate(&s, &labels, pairs_total(1, 4, false), Some(Sample { b: 10, a: 1 }), None);
        assert_eq!((e.suspects, e.labelled, e.unlabelled, e.positives), (3, 2, 1, 1));
        assert_eq!(e.p_k, Some(0.5));
        assert_eq!(e.p_k_by_model["m1"], Some(0.5));
        assert_eq!(e.p_k_by_model["m2"], Some(0.0));
        assert_eq!((e.pairs_total, e.p_lb), (3, 1.0 / 3.0));
        assert_eq!(e.p_hat, 1.0 / 3.0, "p_lb is larger than a / b = 0.1");
        assert_eq!(e.speedup, Some(1.5));
    }
}
