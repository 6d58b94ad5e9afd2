//! Pilot curation: the same question set answered by a small team in
//! repeated rounds (one campaign per round); questions are ranked by how
//! consistently one answer wins across participants and rounds.

use serde_json::Value;
use std::collections::BTreeMap;

/// One question's pilot record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct PilotQuestion {
    /// Question id.
    pub id: String,
    /// Votes per choice over all rounds.
    pub votes: BTreeMap<String, u64>,
    /// Share of all votes held by the overall most chosen choice.
    pub consistency: f64,
    /// The majority of each round (`None` for a tie or no votes).
    pub round_majorities: Vec<Option<String>>,
    /// True when every round had the same single majority.
    pub stable: bool,
}

/// Combines the LAT ground truths of the rounds; most consistent first.
pub fn rank(rounds: &[Value]) -> Vec<PilotQuestion> {
    /// Votes over all rounds, and each round's majority.
    type Tally = (BTreeMap<String, u64>, Vec<Option<String>>);
    let mut by_id: BTreeMap<String, Tally> = BTreeMap::new();
    for (round, gt) in rounds.iter().enumerate() {
        for q in gt["questions"].as_array().into_iter().flatten() {
            let Some(id) = q["id"].as_str() else { continue };
            let entry = by_id.entry(id.to_owned()).or_insert_with(|| (BTreeMap::new(), vec![None; rounds.len()]));
            for (choice, v) in q["votes"].as_object().into_iter().flatten() {
                *entry.0.entry(choice.clone()).or_default() += v.as_u64().unwrap_or(0);
            }
            entry.1[round] = q["majority"].as_str().map(str::to_owned);
        }
    }
    let mut out: Vec<PilotQuestion> = by_id
        .into_iter()
        .map(|(id, (votes, round_majorities))| {
            let total: u64 = votes.values().sum();
            let top = votes.values().copied().max().unwrap_or(0);
            let first = round_majorities.first().cloned().flatten();
            let stable = first.is_some() && round_majorities.iter().all(|m| *m == first);
            PilotQuestion {
                id,
                consistency: if total > 0 { top as f64 / total as f64 } else { 0.0 },
                votes,
                round_majorities,
                stable,
            }
        })
        .collect();
    out.sort_by(|a, b| b.consistency.total_cmp(&a.consistency).then_with(|| a.id.cmp(&b.id)));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn ranks_by_consistency_and_flags_unstable_questions() {
        let r1 = json!({"questions": [
            {"id": "q1", "votes": {"a": 4, "b": 0}, "majority": "a"},
            {"id": "q2", "votes": {"a": 2, "b": 2}, "majority": null}
        ]});
        let r2 = json!({"questions": [
            {"id": "q1", "votes": {"a": 3, "b": 1}, "majority": "a"},
            {"id": "q2", "votes": {"a": 1, "b": 3}, "majority": "b"}
        ]});
        let ranked = rank(&[r1, r2]);
        assert_eq!(ranked[0].id, "q1");
        assert!((ranked[0].consistency - 7.0 / 8.0).abs() < 1e-12);
        assert!(ranked[0].stable);
        assert_eq!(ranked[1].id, "q2");
        assert!(!ranked[1].stable);
        assert_eq!(ranked[1].round_majorities, vec![None, Some("b".to_owned())]);
    }
}
