//! The retrieval format researchers bring to `atelier stats retrieval` and
//! to VSD scoring: a model's scores `query,candidate,score` and labelled
//! pairs `[{"key": [query, candidate], "value": 0|1}]`. Every error names
//! the file, the line and the field.

use super::score_set::ScoreSet;
use super::{CsvFile, InputError};
use crate::stats::retrieval::ScoredPair;
use std::collections::hash_map::Entry;
use std::collections::HashMap;
use std::path::Path;

/// Reads `query,candidate,score`, in the file's order. A pair scored again
/// with the same score is read once; with another score, it is an error
/// naming both lines.
pub fn read_scores(path: &Path) -> Result<Vec<ScoredPair>, InputError> {
    let mut file = CsvFile::open(path)?;
    let mut scores = ScoreSet::default();
    file.for_each_with_header(&["query", "candidate", "score"], |line, f| {
        let err = |message: String| InputError::Line { path: path.to_owned(), line, message };
        let score = f[2]
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite())
            .ok_or_else(|| err(format!("score: `{}` is not a number", f[2])))?;
        scores.add(line, f[0], f[1], score).map_err(err)
    })?;
    Ok(scores.into_pairs())
}

#[derive(serde::Deserialize)]
struct GtRecord {
    key: (String, String),
    value: u8,
}

/// Reads the benchmark's `[{"key": [query, candidate], "value": 0|1}]`.
pub fn read_ground_truth(path: &Path) -> Result<Vec<(String, String, bool)>, InputError> {
    let text = crate::text::read_file(path).map_err(|source| InputError::Io { path: path.to_owned(), source })?;
    parse_ground_truth(&text).map_err(|(line, message)| match line {
        0 => InputError::File { path: path.to_owned(), message },
        line => InputError::Line { path: path.to_owned(), line, message },
    })
}

/// Labelled pairs: (query, candidate, similar).
pub type GroundTruth = Vec<(String, String, bool)>;

/// Parses the benchmark's ground-truth format; errors carry the line.
pub fn parse_ground_truth(text: &str) -> Result<GroundTruth, (u64, String)> {
    let records: Vec<GtRecord> = serde_json::from_str(text).map_err(|e| {
        (e.line() as u64, format!("{e} (expected [{{\"key\": [query, candidate], \"value\": 0|1}}, ...])"))
    })?;
    // A pair given again with the same label is read once; with the other
    // label, the file contradicts itself. Each pair keeps its first record's place.
    let mut labelled: HashMap<(String, String), (usize, u8)> = HashMap::new();
    for (i, r) in records.into_iter().enumerate() {
        if r.value > 1 {
            return Err((0, format!("record {}: value must be 0 or 1, got {}", i + 1, r.value)));
        }
        match labelled.entry(r.key) {
            Entry::Occupied(earlier) if earlier.get().1 == r.value => {}
            Entry::Occupied(earlier) => {
                let (first, before) = *earlier.get();
                let (query, candidate) = earlier.key();
                return Err((
                    0,
                    format!(
                        "record {}: the pair [{query}, {candidate}] has value {} here and {before} in record {first}",
                        i + 1,
                        r.value
                    ),
                ));
            }
            Entry::Vacant(slot) => {
                slot.insert((i + 1, r.value));
            }
        }
    }
    let mut truth: Vec<(usize, (String, String, bool))> =
        labelled.into_iter().map(|((q, c), (record, value))| (record, (q, c, value == 1))).collect();
    truth.sort_unstable_by_key(|(record, _)| *record);
    Ok(truth.into_iter().map(|(_, t)| t).collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_pair_given_twice_is_read_once_and_a_contradiction_names_both_records() {
        let same =
            r#"[{"key": ["q", "c"], "value": 1}, {"key": ["q", "d"], "value": 0}, {"key": ["q", "c"], "value": 1}]"#;
        let truth = parse_ground_truth(same).expect("the same label twice is fine");
        assert_eq!(truth, vec![("q".into(), "c".into(), true), ("q".into(), "d".into(), false)]);
        let contradicting =
            r#"[{"key": ["q", "c"], "value": 1}, {"key": ["q", "d"], "value": 0}, {"key": ["q", "c"], "value": 0}]"#;
        let (_, message) = parse_ground_truth(contradicting).expect_err("refused");
        assert!(message.starts_with("record 3:") && message.contains("record 1"), "{message}");
    }
}
