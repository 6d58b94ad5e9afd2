//! A model's scores as read from a file, each pair once: the command line's
//! and the service's readers share the rule for a pair given twice.

use crate::stats::retrieval::ScoredPair;
use std::collections::hash_map::Entry;
use std::collections::HashMap;

/// Scores gathered line by line; a pair scored again with the same score is
/// kept once, with another score it is refused.
#[derive(Default)]
pub struct ScoreSet {
    /// Each pair with the line it was first given on (its place in the output) and its score.
    scored: HashMap<(String, String), (u64, f64)>,
}

impl ScoreSet {
    /// Adds the score of one line; the error says which earlier line scored the pair otherwise.
    pub fn add(&mut self, line: u64, query: &str, candidate: &str, score: f64) -> Result<(), String> {
        match self.scored.entry((query.to_owned(), candidate.to_owned())) {
            Entry::Occupied(earlier) if earlier.get().1 == score => Ok(()),
            Entry::Occupied(earlier) => {
                let (first, before) = *earlier.get();
                Err(format!(
                    "score: the pair ({query}, {candidate}) was scored {before} on line {first}, and {score} here"
                ))
            }
            Entry::Vacant(slot) => {
                slot.insert((line, score));
                Ok(())
            }
        }
    }

    /// The scored pairs in the order of the lines that first gave them.
    pub fn into_pairs(self) -> Vec<ScoredPair> {
        let mut pairs: Vec<(u64, ScoredPair)> = self
            .scored
            .into_iter()
            .map(|((query, candidate), (line, score))| (line, ScoredPair { query, candidate, score }))
            .collect();
        pairs.sort_unstable_by_key(|(line, _)| *line);
        pairs.into_iter().map(|(_, pair)| pair).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_is_kept_once_in_first_line_order_and_a_second_score_is_refused() {
        let mut set = ScoreSet::default();
        set.add(2, "q", "c", 0.5).expect("first");
        set.add(3, "q", "d", 0.1).expect("another pair");
        set.add(4, "q", "c", 0.5).expect("the same score again");
        let message = set.add(5, "q", "c", 0.7).expect_err("another score");
        assert!(message.contains("line 2") && message.contains("0.7"), "{message}");
        let pairs: Vec<(String, f64)> = set.into_pairs().into_iter().map(|p| (p.candidate, p.score)).collect();
        assert_eq!(pairs, vec![("c".to_owned(), 0.5), ("d".to_owned(), 0.1)]);
    }
}
