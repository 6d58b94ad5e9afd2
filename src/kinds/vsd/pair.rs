//! A VSD item as the kind reads and stores it: a query and a candidate
//! image with the provenance of the pair (which models proposed it, at
//! which rank, for which queries), and whether it was drawn for the p-hat
//! sample.

use std::collections::{BTreeMap, BTreeSet};

/// One suspect (or sampled) pair.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VsdPair {
    /// The query image's id.
    pub query: String,
    /// The candidate image's id.
    pub candidate: String,
    /// The query image's address (the id under the campaign's prefix).
    #[serde(default)]
    pub query_image: Option<String>,
    /// The candidate image's address.
    #[serde(default)]
    pub candidate_image: Option<String>,
    /// Each model that proposed the pair, at its best rank.
    #[serde(default)]
    pub proposed_by: BTreeMap<String, u64>,
    /// Per orientation (the query it was proposed for): each model's rank.
    #[serde(default)]
    pub proposals: BTreeMap<String, BTreeMap<String, u64>>,
    /// The queries whose top k held the pair.
    #[serde(default)]
    pub from_queries: BTreeSet<String>,
    /// Drawn for the p-hat sample only (no model proposed it).
    #[serde(default)]
    pub sample: bool,
    /// A suspect that was drawn into the sample as well.
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    pub in_sample: bool,
    /// The seed of the sample that drew it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sample_seed: Option<u64>,
}

/// What a worker is shown of a pair: the two images, never which model
/// proposed it (or its rank), nor the ids, which may name the product.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct ShownPair {
    /// The query image's address.
    pub query_image: Option<String>,
    /// The candidate image's address.
    pub candidate_image: Option<String>,
}

impl VsdPair {
    /// The pair imported again: the proposers of both, each at its best
    /// rank (per orientation in `proposals`).
    pub fn merged(self, incoming: &Self) -> Self {
        let best = |into: &mut BTreeMap<String, u64>, from: &BTreeMap<String, u64>| {
            for (model, rank) in from {
                let best = into.entry(model.clone()).or_insert(*rank);
                *best = (*best).min(*rank);
            }
        };
        let mut merged = self;
        for (query, by) in &incoming.proposals {
            best(merged.proposals.entry(query.clone()).or_default(), by);
        }
        best(&mut merged.proposed_by, &incoming.proposed_by);
        merged.from_queries.extend(incoming.from_queries.iter().cloned());
        // A sampled pair that a model proposes after all becomes a suspect; a
        // suspect drawn into the p-hat sample stays in the sample (its label
        // counts there too: the sample is uniform over all of A, S_k included).
        let drawn = merged.sample || merged.in_sample || incoming.sample || incoming.in_sample;
        merged.sample = merged.sample && incoming.sample;
        merged.in_sample = drawn && !merged.sample;
        merged.sample_seed = merged.sample_seed.or(incoming.sample_seed);
        merged
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn pair(value: serde_json::Value) -> VsdPair {
        serde_json::from_value(value).expect("a pair")
    }

    #[test]
    fn a_pair_imported_again_keeps_each_models_best_rank_and_both_samples() {
        let old = pair(json!({"query": "q", "candidate": "c", "proposed_by": {"m1": 3},
            "proposals": {"q": {"m1": 3}}, "from_queries": ["q"], "sample": false}));
        let new = pair(json!({"query": "q", "candidate": "c", "proposed_by": {"m1": 1, "m2": 4},
            "proposals": {"q": {"m1": 1}, "c": {"m2": 4}}, "from_queries": ["c"], "sample": false}));
        let merged = old.clone().merged(&new);
        assert_eq!(merged.proposed_by, BTreeMap::from([("m1".into(), 1), ("m2".into(), 4)]));
        assert_eq!(merged.proposals["q"]["m1"], 1);
        assert_eq!(merged.proposals["c"]["m2"], 4);
        assert_eq!(merged.from_queries.len(), 2);
        assert!(!merged.sample && !merged.in_sample);
        assert_eq!(old.clone().merged(&old), old, "nothing new: unchanged");

        let sampled = pair(json!({"query": "q", "candidate": "c", "sample": true, "sample_seed": 7}));
        let suspect = old.clone().merged(&sampled);
        assert!(!suspect.sample && suspect.in_sample, "a suspect drawn into the sample stays in it");
        assert_eq!(suspect.sample_seed, Some(7));
        let proposed = sampled.clone().merged(&old);
        assert!(!proposed.sample && proposed.in_sample, "a sampled pair a model proposes becomes a suspect");
        assert!(sampled.clone().merged(&sampled).sample);
    }
}
