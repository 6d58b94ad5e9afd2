//! Scoring retrieval models on a VSD campaign's ground truth, side by side:
//! HR@5, HR@9, MRR@5, MRR@9 and the four AUCs, in both negative settings
//! (the experts' negatives; or negatives drawn from ranks 100–500 of the
//! generator models, seeded), and the leave-one-model-out table.

use super::result::{PairResult, VsdResult};
use super::robustness::{robustness, Robustness};
use crate::core::{campaign::campaigns, truth::ground_truth, Registry};
use crate::error::Code;
use crate::error::{Error, Result};
use crate::input::score_set::ScoreSet;
use crate::stats::retrieval::{oriented_scores, retrieval_metrics_with, RetrievalReport, ScoredPair};
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use serde_json::{json, Value};
use sqlx::PgPool;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// The cut-offs reported.
pub const KS: [usize; 2] = [5, 9];
/// Ranks the second setting draws its negatives from.
pub const NEGATIVE_RANKS: (u32, u32) = (100, 500);
/// Seed of that draw (recorded in the report).
pub const NEGATIVE_SEED: u64 = 0;

/// Stores a model's scores under its name (a rescore replaces them).
pub async fn store(pool: &PgPool, campaign_id: Uuid, by: Uuid, model: &str, scores: &[ScoredPair]) -> Result<usize> {
    let model = crate::core::truth::model_scores::model_name(model)?;
    if scores.is_empty() {
        return Err(Error::invalid(Code::NoScores, "the scores file has no rows"));
    }
    campaigns::ensure_writable(pool, campaign_id).await?;
    let rows: Vec<(&str, &str, f64)> =
        scores.iter().map(|s| (s.query.as_str(), s.candidate.as_str(), s.score)).collect();
    crate::core::truth::model_scores::store(
        pool,
        campaign_id,
        by,
        model,
        &json!(rows),
        &json!({"pairs": scores.len()}),
    )
    .await?;
    Ok(scores.len())
}

/// Parses `query,candidate,score` text, naming the line and field of a problem.
pub fn parse_scores(text: &str) -> Result<Vec<ScoredPair>> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let invalid = |line: usize, m: String| Error::invalid(Code::InvalidScores, format!("line {line}: {m}"));
    let header: Vec<String> =
        reader.headers().map_err(|e| invalid(1, e.to_string()))?.iter().map(str::to_ascii_lowercase).collect();
    let col = |name: &str| {
        header
            .iter()
            .position(|h| h == name)
            .ok_or_else(|| invalid(1, format!("header has no column `{name}` (expected query,candidate,score)")))
    };
    let (q, c, s) = (col("query")?, col("candidate")?, col("score")?);
    let mut scores = ScoreSet::default();
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let record = record.map_err(|e| invalid(line, e.to_string()))?;
        let get = |i: usize, name: &str| {
            record.get(i).filter(|v| !v.is_empty()).ok_or_else(|| invalid(line, format!("{name}: missing")))
        };
        let score_text = get(s, "score")?;
        let score = score_text
            .parse::<f64>()
            .ok()
            .filter(|x| x.is_finite())
            .ok_or_else(|| invalid(line, format!("score: `{score_text}` is not a number")))?;
        scores.add(line as u64, get(q, "query")?, get(c, "candidate")?, score).map_err(|m| invalid(line, m))?;
    }
    Ok(scores.into_pairs())
}

/// One model's metrics in both settings.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ModelReport {
    /// The model.
    pub model: String,
    /// Whether it generated suspects (its results are biased upward on HR/MRR).
    pub generator: bool,
    /// With the experts' negatives.
    pub labelled_negatives: Metrics,
    /// With negatives drawn from the generators' ranks 100–500.
    pub sampled_negatives: Metrics,
}

/// The reported metrics of one setting.
#[derive(Debug, Clone, serde::Serialize)]
pub struct Metrics {
    /// HR@5 and HR@9.
    pub hr: BTreeMap<usize, f64>,
    /// MRR@5 and MRR@9.
    pub mrr: BTreeMap<usize, f64>,
    /// ROC-AUC micro.
    pub roc_auc_micro: Option<f64>,
    /// ROC-AUC macro.
    pub roc_auc_macro: Option<f64>,
    /// PR-AUC micro.
    pub pr_auc_micro: Option<f64>,
    /// PR-AUC macro.
    pub pr_auc_macro: Option<f64>,
    /// Labelled pairs used.
    pub pairs: usize,
}

impl From<RetrievalReport> for Metrics {
    fn from(r: RetrievalReport) -> Self {
        Self {
            hr: r.hr,
            mrr: r.mrr,
            roc_auc_micro: r.roc_auc_micro,
            roc_auc_macro: r.roc_auc_macro,
            pr_auc_micro: r.pr_auc_micro,
            pr_auc_macro: r.pr_auc_macro,
            pairs: r.pairs,
        }
    }
}

/// Every scored model side by side, and the leave-one-model-out table.
#[derive(Debug, Clone, serde::Serialize)]
pub struct ScoringReport {
    /// Per model.
    pub models: Vec<ModelReport>,
    /// How the second setting drew its negatives.
    pub sampled_negatives: Value,
    /// Leave-one-model-out robustness of the models' AUCs.
    pub robustness: Robustness,
    /// How the averages are taken, in words.
    pub averages: &'static str,
}

/// How HR, MRR and the macro AUCs average, as the reports state it.
pub const AVERAGES: &str = "HR@k = positives in the top k / (k x queries with a positive); MRR@k = sum of 1/rank of \
    positives in the top k / (queries with a positive x sum_{i<=k} 1/i); a model's top k never holds the query itself \
    and, with a same-product pattern, holds only the first image of each product other than the query's (the \
    official evaluation's filter_results_unique_ids); micro AUCs pool every labelled pair (scores unfiltered); macro \
    ROC-AUC and PR-AUC alike average over the queries that have both a positive and a negative; a pair scored as \
    (candidate, query) counts for (query, candidate)";

/// The campaign's report for every stored model.
pub async fn report(
    pool: &PgPool,
    kinds: &Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
) -> Result<ScoringReport> {
    let gt = VsdResult::from_json(&ground_truth::aggregate(pool, kinds, caches, campaign_id).await?)?;
    let config: super::VsdConfig = kinds.config(&campaigns::get(pool, campaign_id).await?)?;
    let same_product = config.same_product.as_deref().map(crate::stats::retrieval::product_pattern).transpose();
    let same_product = same_product.map_err(|e| Error::invalid(Code::InvalidConfig, e))?;
    let labelled = gt.labelled();
    // Every pair the pool holds (suspects and the p-hat sample, labelled or
    // not yet): never drawn as a negative.
    let in_pool: Vec<(String, String)> = gt.pairs.iter().chain(&gt.sample).map(PairResult::oriented).collect();
    let stored = crate::core::truth::model_scores::answers(pool, campaign_id).await?;
    let generators: BTreeSet<String> = gt.pairs.iter().flat_map(|p| p.proposed_by.keys().cloned()).collect();
    // The second setting: the experts' positives, and per query negatives
    // drawn from the generators' ranks 100-500 (as many as the query's
    // labelled pairs), seeded.
    let far = super::import::ranks_between(
        pool,
        campaign_id,
        &generators.iter().cloned().collect::<Vec<_>>(),
        NEGATIVE_RANKS.0,
        NEGATIVE_RANKS.1,
    )
    .await?;
    let sampled = sampled_ground_truth(&labelled, &in_pool, &far);
    let mut scores: BTreeMap<String, Vec<ScoredPair>> = BTreeMap::new();
    let mut models = Vec::new();
    for (model, answers) in stored {
        let pairs = scored_pairs(&answers);
        let metrics = |truth: &[(String, String, bool)]| {
            retrieval_metrics_with(truth, &oriented_scores(truth, &pairs), &KS, same_product.as_ref())
        };
        models.push(ModelReport {
            generator: generators.contains(&model),
            labelled_negatives: metrics(&labelled).into(),
            sampled_negatives: metrics(&sampled).into(),
            model: model.clone(),
        });
        scores.insert(model, pairs);
    }
    let suspects = suspects_of(&gt);
    Ok(ScoringReport {
        models,
        sampled_negatives: json!({
            "ranks": [NEGATIVE_RANKS.0, NEGATIVE_RANKS.1],
            "models": generators,
            "seed": NEGATIVE_SEED,
            "pairs": sampled.len(),
        }),
        robustness: robustness(&suspects, &labelled, &scores),
        averages: AVERAGES,
    })
}

/// The model-scoring tables a release can recompute from its own files:
/// per model HR/MRR/AUCs with the experts' negatives, and the
/// leave-one-generator-out robustness (the drawn-negatives setting needs
/// the rankings' far ranks, which a release does not hold).
pub fn release_report(gt: &VsdResult, models: &[(String, Value)], same_product: Option<&regex::Regex>) -> Value {
    let labelled = gt.labelled();
    let generators: BTreeSet<String> = gt.pairs.iter().flat_map(|p| p.proposed_by.keys().cloned()).collect();
    let mut scores: BTreeMap<String, Vec<ScoredPair>> = BTreeMap::new();
    let mut rows = Vec::new();
    for (model, answers) in models {
        let pairs = scored_pairs(answers);
        let metrics: Metrics =
            retrieval_metrics_with(&labelled, &oriented_scores(&labelled, &pairs), &KS, same_product).into();
        rows.push(json!({"model": model, "generator": generators.contains(model), "labelled_negatives": metrics}));
        scores.insert(model.clone(), pairs);
    }
    let suspects = suspects_of(gt);
    json!({"models": rows, "robustness": robustness(&suspects, &labelled, &scores), "averages": AVERAGES})
}

/// A model's stored scores as scored pairs, as given (the official filter
/// applies to its ranked lists, in `stats::retrieval`).
fn scored_pairs(answers: &Value) -> Vec<ScoredPair> {
    answers
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| {
            Some(ScoredPair {
                query: r[0].as_str()?.to_owned(),
                candidate: r[1].as_str()?.to_owned(),
                score: r[2].as_f64()?,
            })
        })
        .collect()
}

/// The ground truth's suspects with their provenance, for robustness.
fn suspects_of(gt: &VsdResult) -> super::eds::Suspects {
    super::eds::from_pairs(
        0,
        gt.pairs
            .iter()
            .map(|p| super::eds::Suspect {
                query: p.query.clone(),
                candidate: p.candidate.clone(),
                proposed_by: p.proposed_by.clone(),
                from_queries: p.from_queries.iter().cloned().collect(),
            })
            .collect(),
    )
}

/// The experts' positives with, per query, as many negatives drawn
/// (seeded) from the far ranks as that query has labelled pairs. A pair the
/// experts labelled keeps its label in every setting: draws never pick a
/// pair of the pool (`in_pool`: suspects and the p-hat sample, labelled or
/// not) or a labelled one (in either orientation), nor the same pair twice.
fn sampled_ground_truth(
    labelled: &[(String, String, bool)],
    in_pool: &[(String, String)],
    far: &[(String, String)],
) -> Vec<(String, String, bool)> {
    let known: std::collections::HashSet<super::eds::Pair> = labelled
        .iter()
        .map(|(q, c, _)| (q, c))
        .chain(in_pool.iter().map(|(q, c)| (q, c)))
        .filter_map(|(q, c)| super::eds::Pair::new(q, c))
        .collect();
    let mut by_query: BTreeMap<&str, Vec<&(String, String)>> = BTreeMap::new();
    let mut drawable: std::collections::HashSet<(&str, &str)> = std::collections::HashSet::new();
    for pair in far {
        let labelled_already = super::eds::Pair::new(&pair.0, &pair.1).is_none_or(|p| known.contains(&p));
        if !labelled_already && drawable.insert((pair.0.as_str(), pair.1.as_str())) {
            by_query.entry(pair.0.as_str()).or_default().push(pair);
        }
    }
    let mut wanted: BTreeMap<&str, usize> = BTreeMap::new();
    for (q, _, _) in labelled {
        *wanted.entry(q.as_str()).or_default() += 1;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(NEGATIVE_SEED);
    let mut out: Vec<(String, String, bool)> = labelled.iter().filter(|p| p.2).cloned().collect();
    for (q, n) in wanted {
        let Some(pool) = by_query.get(q) else { continue };
        for pair in pool.choose_multiple(&mut rng, n) {
            out.push((pair.0.clone(), pair.1.clone(), false));
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sampled_negatives_never_overwrite_a_labelled_pair() {
        // m1: q1 -> a@0, b@1; m2: q1 -> b@0, a@150, z@151; experts: (q1, a)
        // similar, (q1, b) not. a sits in m2's far ranks but keeps its label.
        let own = |q: &str, c: &str| (q.to_owned(), c.to_owned());
        let labelled = vec![(own("q1", "a").0, "a".to_owned(), true), ("q1".to_owned(), "b".to_owned(), false)];
        let far = vec![own("q1", "a"), own("q1", "z"), own("q1", "z"), own("a", "q1")];
        let sampled = sampled_ground_truth(&labelled, &[], &far);
        assert_eq!(
            sampled,
            vec![("q1".to_owned(), "a".to_owned(), true), ("q1".to_owned(), "z".to_owned(), false)],
            "the positive stays, only z is drawn, once"
        );
        let scores = vec![
            ScoredPair { query: "q1".into(), candidate: "a".into(), score: 0.9 },
            ScoredPair { query: "q1".into(), candidate: "b".into(), score: 0.1 },
            ScoredPair { query: "q1".into(), candidate: "z".into(), score: 0.5 },
        ];
        let report = crate::stats::retrieval::retrieval_metrics(&sampled, &scores, &KS);
        let metrics: Metrics = report.into();
        assert_eq!(metrics.hr.get(&5), Some(&0.2), "one positive in the top 5 of one query: 1 / (5 x 1)");
        assert_eq!(metrics.roc_auc_micro, Some(1.0));
    }

    #[test]
    fn a_pair_the_experts_labelled_in_the_sample_is_never_drawn_as_a_negative() {
        // (q1, s) was labelled similar in the p-hat sample, not among the suspects.
        let labelled = vec![("q1".to_owned(), "a".to_owned(), false)];
        let far = vec![("q1".to_owned(), "s".to_owned()), ("q1".to_owned(), "z".to_owned())];
        let in_pool = vec![("q1".to_owned(), "a".to_owned()), ("s".to_owned(), "q1".to_owned())];
        let sampled = sampled_ground_truth(&labelled, &in_pool, &far);
        assert_eq!(sampled, vec![("q1".to_owned(), "z".to_owned(), false)]);
    }

    #[test]
    fn a_pair_scored_twice_is_read_once_unless_the_scores_differ() {
        let once = parse_scores("query,candidate,score\nq,c,0.5\nq,d,0.1\nq,c,0.5\n").expect("same score twice");
        assert_eq!(once.len(), 2);
        let Err(Error::Rejected { message, .. }) = parse_scores("query,candidate,score\nq,c,0.5\nq,c,0.7\n") else {
            panic!("refused")
        };
        assert!(message.starts_with("line 3:") && message.contains("line 2"), "{message}");
    }
}
