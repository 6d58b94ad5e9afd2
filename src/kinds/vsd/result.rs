//! The VSD ground truth as a typed result: per pair the experts' votes, the
//! label (majority, ties negative) and unanimity, with its provenance; the
//! flagged pairs; the estimates of p; and agreement between experts.

use super::eds::{self, Pair, Sample, Vote};
use super::{Answer, VsdAnswer, VsdConfig};
use crate::core::kind::contract::{Records, Table};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A campaign's VSD ground truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VsdResult {
    /// The suspects with their votes and labels, sorted.
    pub pairs: Vec<PairResult>,
    /// The random sample of A for p-hat, labelled the same way (a sampled
    /// pair that is a suspect is here too, with the suspect's votes).
    pub sample: Vec<PairResult>,
    /// Pairs an expert flagged as broken, with the reasons.
    pub flagged: Vec<Flag>,
    /// Pairs whose every vote is `unsure` (reported, not exported).
    pub unsure_only: usize,
    /// Suspects (ordered pairs) not yet answered by every expert of the
    /// campaign: left out of the exports unless partial results are asked for.
    #[serde(default)]
    pub incomplete: usize,
    /// What `atelier vsd estimate` computes, on the campaign's data.
    pub estimate: EstimateView,
    /// Experts who voted (pseudonymous ids, with names in admins' live view).
    pub experts: BTreeMap<String, String>,
    /// The label rule, in words, so every export says it.
    #[serde(default)]
    pub label_rule: String,
}

/// The label rule as the exports state it.
pub const LABEL_RULE: &str = "label = majority of the similar (1) / not similar (0) votes; a tie is 0; \
    unsure abstains (one 1 and two unsure is 1); only-unsure pairs have no label; a pair is final once every expert \
    who started labelling has answered it in a submitted batch";

/// The estimate as shown and exported.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct EstimateView {
    /// |S_k| of the pool.
    pub suspects: usize,
    /// Suspects with a label.
    pub labelled: usize,
    /// Positive suspects.
    pub positives: usize,
    /// positives / labelled.
    pub p_k: Option<f64>,
    /// The same over each model's suspects.
    pub p_k_by_model: BTreeMap<String, Option<f64>>,
    /// |A| (when the catalog's size is configured).
    pub pairs_total: Option<u64>,
    /// positives / |A|.
    pub p_lb: Option<f64>,
    /// The sample's (b, a): its labelled pairs every expert has answered.
    pub sample: Option<Sample>,
    /// Of the sample's pairs, how many were suspects (in S_k): drawn
    /// uniformly from A, they take their label from there.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample_in_suspects: usize,
    /// Sample pairs not yet answered by every expert: left out of (b, a)
    /// (the ground truth's `sample` list marks them `complete: false`).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub sample_incomplete: usize,
    /// max(p_lb, a / b).
    pub p_hat: Option<f64>,
    /// p_k / p_hat.
    pub speedup: Option<f64>,
    /// Krippendorff's nominal alpha of the 0/1 votes on the suspects.
    pub alpha: Option<f64>,
    /// |M| · |Q| · k and |Q| · |D|: the labeling cost of EDS against brute force.
    pub cost_eds: u64,
    /// The brute-force cost (when the catalog's size is configured).
    pub cost_brute_force: Option<u64>,
}

/// One labelled pair, under one query it was proposed for (a pair that two
/// queries proposed each other for appears under each, with one label).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct PairResult {
    /// The query the models ranked the candidate for.
    pub query: String,
    /// The candidate.
    pub candidate: String,
    /// Models that proposed it for this query, at their best rank.
    pub proposed_by: BTreeMap<String, u32>,
    /// Which of its images were queries in the rankings.
    #[serde(default)]
    pub from_queries: Vec<String>,
    /// Expert -> `1`, `0`, `unsure` or `broken`.
    pub votes: BTreeMap<String, String>,
    /// The label (`None`: no similar / not-similar vote).
    pub label: Option<u8>,
    /// Every similar / not-similar vote agrees (and there are at least two).
    pub unanimous: bool,
    /// Every expert of the campaign has answered it (in a submitted batch).
    #[serde(default = "yes")]
    pub complete: bool,
}

fn yes() -> bool {
    true
}

fn is_zero(n: &usize) -> bool {
    *n == 0
}

/// A pair flagged as broken.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Flag {
    /// The id that sorts first.
    pub query: String,
    /// The other id.
    pub candidate: String,
    /// Expert -> reason.
    pub reasons: BTreeMap<String, String>,
}

impl PairResult {
    /// The pair as (query, candidate) for evaluation.
    pub fn oriented(&self) -> (String, String) {
        (self.query.clone(), self.candidate.clone())
    }
}

impl VsdResult {
    /// Reads it back from its compact JSON text (what the ground-truth
    /// cache keeps).
    pub fn from_json(aggregate: &[u8]) -> Result<Self, crate::error::Error> {
        serde_json::from_slice(aggregate).map_err(|e| crate::error::Error::internal("not a VSD ground truth", e))
    }

    /// Reads a VSD ground truth back from its JSON.
    pub fn from_value(aggregate: &Value) -> Result<Self, crate::error::Error> {
        Self::deserialize(aggregate).map_err(|e| crate::error::Error::internal("not a VSD ground truth", e))
    }

    /// The JSON exported and stored in releases.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The benchmark's format: `[{"key": [query, candidate], "value": 0|1}]`,
    /// labelled suspects only (unsure-only pairs are left out), and only
    /// pairs every expert has answered unless `partial`.
    pub fn benchmark(&self, partial: bool) -> Value {
        Value::Array(
            self.pairs
                .iter()
                .filter(|p| partial || p.complete)
                .filter_map(|p| {
                    let (q, c) = p.oriented();
                    Some(serde_json::json!({"key": [q, c], "value": p.label?}))
                })
                .collect(),
        )
    }

    /// The labelled suspects every expert has answered, as (query,
    /// candidate, similar).
    pub fn labelled(&self) -> Vec<(String, String, bool)> {
        self.pairs
            .iter()
            .filter(|p| p.complete)
            .filter_map(|p| {
                let (q, c) = p.oriented();
                Some((q, c, p.label? == 1))
            })
            .collect()
    }
}

/// What a VSD campaign aggregates: the kind's `AggregationInput` (no gold
/// answers).
pub type VsdInput = Records<serde::de::IgnoredAny, VsdAnswer>;

/// Builds the ground truth from the pool and the experts' submitted answers.
pub fn aggregate(config: &VsdConfig, input: &VsdInput) -> VsdResult {
    let expert = |id: &uuid::Uuid| id.to_string();
    let mut answers: BTreeMap<uuid::Uuid, BTreeMap<String, &VsdAnswer>> = BTreeMap::new();
    // The input holds submitted batches only; every expert labels every pair,
    // so a pair is complete once each expert who submitted work answered it.
    for r in input.responses.iter().filter(|r| r.reviews.is_none()) {
        answers.entry(r.item_id).or_default().insert(expert(&r.annotator_id), &*r.answer);
    }
    // Whoever has started labelling (submitted or not) is to label every pair.
    let experts_of_campaign: std::collections::BTreeSet<String> = input
        .responses
        .iter()
        .filter(|r| r.reviews.is_none())
        .map(|r| r.annotator_id)
        .chain(input.participants.iter().copied())
        .map(|id| expert(&id))
        .collect();
    let (mut pairs, mut sample, mut flagged) = (Vec::new(), Vec::new(), Vec::new());
    let mut suspect_votes: BTreeMap<Pair, Vec<Vote>> = BTreeMap::new();
    let (mut unsure_only, mut in_suspects) = (0, 0);
    for item in &input.items {
        let p = &item.payload.value();
        let (Some(q), Some(c)) = (p["query"].as_str(), p["candidate"].as_str()) else { continue };
        let given = answers.remove(&item.id).unwrap_or_default();
        let mut votes = BTreeMap::new();
        let mut counted = Vec::new();
        let mut reasons = BTreeMap::new();
        for (who, a) in &given {
            votes.insert(who.clone(), a.label.as_str().to_owned());
            match a.label.answer() {
                Answer::Vote(v) => counted.push(v),
                Answer::Broken => {
                    reasons.insert(who.clone(), a.reason.clone().unwrap_or_else(|| "broken".to_owned()));
                }
            }
        }
        let label = eds::label(&counted);
        let decided: Vec<&Vote> = counted.iter().filter(|v| **v != Vote::Unsure).collect();
        let unanimous = decided.len() >= 2 && decided.iter().all(|v| *v == decided[0]);
        if label.is_none() && !counted.is_empty() {
            unsure_only += 1;
        }
        let oriented = super::pool::suspects_of(p);
        let Some(first) = oriented.first() else { continue };
        if !reasons.is_empty() {
            flagged.push(Flag { query: first.query.clone(), candidate: first.candidate.clone(), reasons });
        }
        let complete = !experts_of_campaign.is_empty() && experts_of_campaign.iter().all(|e| given.contains_key(e));
        let result = |s: eds::Suspect| PairResult {
            query: s.query,
            candidate: s.candidate,
            proposed_by: s.proposed_by,
            from_queries: s.from_queries.into_iter().collect(),
            votes: votes.clone(),
            label: label.map(u8::from),
            unanimous,
            complete,
        };
        if p["sample"] == true {
            sample.extend(oriented.into_iter().take(1).map(result));
        } else {
            if p["in_sample"] == true {
                // A suspect drawn into the sample: one labelling, counted in both.
                sample.push(result(first.clone()));
                in_suspects += 1;
            }
            if let Some(pair) = Pair::new(q, c) {
                suspect_votes.insert(pair, counted);
            }
            pairs.extend(oriented.into_iter().map(result));
        }
    }
    let order = |a: &PairResult, b: &PairResult| (&a.query, &a.candidate).cmp(&(&b.query, &b.candidate));
    pairs.sort_by(order);
    sample.sort_by(order);
    let mut estimate = estimate(config, input, &pairs, &sample, &suspect_votes);
    estimate.sample_in_suspects = in_suspects;
    let experts = input
        .responses
        .iter()
        .map(|r| (expert(&r.annotator_id), input.worker_ids.get(&r.annotator_id).cloned().unwrap_or_default()))
        .collect();
    let incomplete = pairs.iter().filter(|p| !p.complete).count();
    VsdResult { pairs, sample, flagged, unsure_only, incomplete, estimate, experts, label_rule: LABEL_RULE.to_owned() }
}

fn estimate(
    config: &VsdConfig,
    input: &VsdInput,
    pairs: &[PairResult],
    sample: &[PairResult],
    votes: &BTreeMap<Pair, Vec<Vote>>,
) -> EstimateView {
    let payloads: Vec<Value> = input.items.iter().map(|i| i.payload.value()).collect();
    let suspects = super::pool::suspects_of_items(config.k, payloads.iter());
    let labels: BTreeMap<Pair, Option<bool>> = pairs
        .iter()
        .filter(|p| p.complete)
        .filter_map(|p| Some((Pair::new(&p.query, &p.candidate)?, p.label.map(|l| l == 1))))
        .collect();
    // The completeness rule of every number: only sample pairs every expert
    // who started has answered in a submitted batch.
    let sampled: Vec<bool> = sample.iter().filter(|p| p.complete).filter_map(|p| p.label.map(|l| l == 1)).collect();
    let sample_incomplete = sample.iter().filter(|p| !p.complete).count();
    let sample = (!sampled.is_empty()).then(|| Sample { b: sampled.len(), a: sampled.iter().filter(|l| **l).count() });
    let queries = config.queries.unwrap_or(suspects.queries as u64);
    let total = config.catalog.map(|d| eds::pairs_total(queries, d, config.wild));
    let e = eds::estimate(&suspects, &labels, total.unwrap_or(0), sample, eds::votes_alpha(votes));
    let known = total.is_some_and(|t| t > 0);
    EstimateView {
        suspects: e.suspects,
        labelled: e.labelled,
        positives: e.positives,
        p_k: e.p_k,
        p_k_by_model: e.p_k_by_model,
        pairs_total: total,
        p_lb: known.then_some(e.p_lb),
        sample: e.sample,
        sample_in_suspects: 0,
        sample_incomplete,
        p_hat: (known || sample.is_some()).then_some(e.p_hat),
        speedup: if known || sample.is_some() { e.speedup } else { None },
        alpha: e.alpha,
        cost_eds: suspects.upper_bound,
        cost_brute_force: total,
    }
}

/// The CSV export: one row per (query, candidate) suspect, votes and
/// provenance included; pairs not every expert has answered only when
/// `partial` (then marked in `complete`).
pub fn table(aggregate: &[u8], partial: bool) -> Table {
    let Ok(r) = VsdResult::from_json(aggregate) else { return Table::default() };
    let header = [
        "query",
        "candidate",
        "label",
        "similar",
        "not_similar",
        "unsure",
        "broken",
        "unanimous",
        "sample",
        "proposed_by",
        "votes",
        "complete",
    ];
    let row = |p: &PairResult, sample: bool| {
        let count = |v: &str| p.votes.values().filter(|x| x.as_str() == v).count().to_string();
        vec![
            p.query.clone(),
            p.candidate.clone(),
            p.label.map(|l| l.to_string()).unwrap_or_default(),
            count("1"),
            count("0"),
            count("unsure"),
            count("broken"),
            p.unanimous.to_string(),
            sample.to_string(),
            p.proposed_by.iter().map(|(m, r)| format!("{m}:{r}")).collect::<Vec<_>>().join(" "),
            p.votes.iter().map(|(e, v)| format!("{e}:{v}")).collect::<Vec<_>>().join(" "),
            p.complete.to_string(),
        ]
    };
    // A suspect drawn into the sample is one row, as a suspect.
    let suspects: std::collections::HashSet<(&str, &str)> =
        r.pairs.iter().map(|p| (p.query.as_str(), p.candidate.as_str())).collect();
    let rows = r
        .pairs
        .iter()
        .map(|p| (p, false))
        .chain(
            r.sample
                .iter()
                .filter(|p| !suspects.contains(&(p.query.as_str(), p.candidate.as_str())))
                .map(|p| (p, true)),
        )
        .filter(|(p, _)| partial || p.complete)
        .map(|(p, sample)| row(p, sample))
        .collect();
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}

/// A release's VSD files beside the generic ground truth: the benchmark's
/// own format (final pairs), the suspects with provenance and labels, and
/// the estimates of p.
pub fn release_files(gt: &VsdResult) -> crate::error::Result<Vec<(String, Vec<u8>)>> {
    let internal = |e: serde_json::Error| crate::error::Error::internal("writing the VSD export", e);
    let mut suspects = crate::core::support::csv_chunks::CsvRows::new(Vec::new());
    suspects.row(&["query", "candidate", "proposed_by", "label", "complete"].map(str::to_owned));
    for p in &gt.pairs {
        let by = p.proposed_by.iter().map(|(m, r)| format!("{m}:{r}")).collect::<Vec<_>>().join(" ");
        let label = p.label.map(|l| l.to_string()).unwrap_or_default();
        suspects.row(&[p.query.clone(), p.candidate.clone(), by, label, p.complete.to_string()]);
    }
    let mut benchmark = serde_json::to_vec_pretty(&gt.benchmark(false)).map_err(internal)?;
    benchmark.push(b'\n');
    let mut estimate = serde_json::to_vec_pretty(&gt.estimate).map_err(internal)?;
    estimate.push(b'\n');
    Ok(vec![
        ("vsd_ground_truth.json".to_owned(), benchmark),
        ("vsd_suspects.csv".to_owned(), suspects.finish()?),
        ("vsd_estimates.json".to_owned(), estimate),
    ])
}
