//! The A100 ground-truth file: exported by the service, read by
//! `atelier a100 score`. A stable interface for model developers.
//!
//! * LAT: `{"test": "lat", "participants": x, "questions": [{"id", "choices": [5 ids], "votes": {choice: count}}]}`
//!   (`participants`, the number of people who took the test, is optional)
//! * AAT: `{"test": "aat", "questions": [{"id", "choices", "answer", "dimension", "sub_dimension"}]}`
//!
//! Extra fields are allowed and ignored.

use crate::stats::questionnaire::{score_aat, score_lat, AatQuestion, LatQuestion, TieCredit};
use serde_json::{json, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// A LAT question in the file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct LatEntry {
    /// Question id.
    pub id: String,
    /// Choice ids.
    pub choices: Vec<String>,
    /// Votes per choice; choices nobody chose may be absent.
    #[serde(default)]
    pub votes: BTreeMap<String, u64>,
}

/// An AAT question in the file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AatEntry {
    /// Question id.
    pub id: String,
    /// Choice ids.
    pub choices: Vec<String>,
    /// The key.
    pub answer: String,
    /// Dimension (Color, Style, Occasion, Season, Material, Balance).
    pub dimension: String,
    /// Sub-dimension.
    pub sub_dimension: String,
}

/// A parsed ground-truth file.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(tag = "test", rename_all = "lowercase")]
pub enum GroundTruth {
    /// Liberalism Aesthetic Test: crowd votes.
    Lat {
        /// The number of people who took the test (x of the paper's Eq. 2);
        /// absent in older files, then each question's vote total stands in.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        participants: Option<u64>,
        /// Questions.
        questions: Vec<LatEntry>,
    },
    /// Academicism Aesthetic Test: expert key.
    Aat {
        /// Questions.
        questions: Vec<AatEntry>,
    },
}

impl GroundTruth {
    /// Parses and checks a file: unique ids, votes and keys among the choices.
    pub fn parse(text: &str) -> Result<Self, String> {
        let gt: GroundTruth = serde_json::from_str(text).map_err(|e| {
            format!(
                "line {}: {e} (expected an A100 ground truth as exported: {{\"test\": \"lat\" or \"aat\", \"questions\": [...]}})",
                e.line()
            )
        })?;
        let mut ids = HashSet::new();
        let check = |id: &str, choices: &[String], named: Vec<&String>, ids: &mut HashSet<String>| {
            if !ids.insert(id.to_owned()) {
                return Err(format!("question `{id}` appears twice"));
            }
            let set: HashSet<&String> = choices.iter().collect();
            if set.len() != choices.len() || choices.is_empty() {
                return Err(format!("question `{id}`: choices must be distinct and non-empty"));
            }
            if let Some(bad) = named.into_iter().find(|c| !set.contains(c)) {
                return Err(format!("question `{id}`: `{bad}` is not one of its choices"));
            }
            Ok(())
        };
        match &gt {
            GroundTruth::Lat { questions, .. } => {
                for q in questions {
                    check(&q.id, &q.choices, q.votes.keys().collect(), &mut ids)?;
                }
            }
            GroundTruth::Aat { questions } => {
                for q in questions {
                    check(&q.id, &q.choices, vec![&q.answer], &mut ids)?;
                }
            }
        }
        Ok(gt)
    }

    /// Question ids and their choices, for validating answers.
    pub fn choices(&self) -> HashMap<&str, Vec<&str>> {
        match self {
            GroundTruth::Lat { questions, .. } => {
                questions.iter().map(|q| (q.id.as_str(), q.choices.iter().map(String::as_str).collect())).collect()
            }
            GroundTruth::Aat { questions } => {
                questions.iter().map(|q| (q.id.as_str(), q.choices.iter().map(String::as_str).collect())).collect()
            }
        }
    }

    /// Scores a model's answers (question id -> choice id, already
    /// validated) into the JSON the scorer prints; `ties` says how a choice
    /// within a tied majority is credited in LATs.
    pub fn score(&self, answers: &HashMap<String, String>, ties: TieCredit) -> Value {
        match self {
            GroundTruth::Lat { questions, participants } => {
                let qs: Vec<LatQuestion> = questions
                    .iter()
                    .map(|q| LatQuestion {
                        id: q.id.clone(),
                        votes: q.votes.iter().map(|(k, v)| (k.clone(), *v)).collect(),
                    })
                    .collect();
                let s = score_lat(&qs, answers, *participants, ties);
                json!({
                    "test": "lat",
                    "participants": participants,
                    "tie_credit": ties,
                    "questions": questions.len(),
                    "answered": s.questions.iter().filter(|q| q.answer.is_some()).count(),
                    "lats": s.lats,
                    "mlats": s.mlats,
                    "per_question": s.questions,
                })
            }
            GroundTruth::Aat { questions } => {
                let qs: Vec<AatQuestion> = questions
                    .iter()
                    .map(|q| AatQuestion {
                        id: q.id.clone(),
                        answer: q.answer.clone(),
                        dimension: q.dimension.clone(),
                        sub_dimension: q.sub_dimension.clone(),
                    })
                    .collect();
                let s = score_aat(&qs, answers);
                json!({
                    "test": "aat",
                    "questions": questions.len(),
                    "answered": s.questions.iter().filter(|q| q.answer.is_some()).count(),
                    "aats": s.aats,
                    "indexes": s.indexes,
                    "sub_indexes": s.sub_indexes,
                    "per_question": s.questions,
                })
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parses_both_tests_and_allows_extra_fields() {
        let lat = r#"{"test": "lat", "questions": [{"id": "q1", "choices": ["a","b","c","d","e"], "votes": {"a": 3}, "image": "x.png"}], "version": 2}"#;
        assert!(matches!(GroundTruth::parse(lat), Ok(GroundTruth::Lat { .. })));
        let aat = r#"{"test": "aat", "questions": [{"id": "q1", "choices": ["a","b"], "answer": "b", "dimension": "Color", "sub_dimension": "Warm Tone"}]}"#;
        assert!(matches!(GroundTruth::parse(aat), Ok(GroundTruth::Aat { .. })));
    }

    #[test]
    fn rejects_inconsistent_files() {
        let unknown_vote = r#"{"test": "lat", "questions": [{"id": "q1", "choices": ["a","b"], "votes": {"z": 3}}]}"#;
        assert!(GroundTruth::parse(unknown_vote).is_err_and(|e| e.contains("`z`")));
        let twice = r#"{"test": "lat", "questions": [{"id": "q1", "choices": ["a"]}, {"id": "q1", "choices": ["a"]}]}"#;
        assert!(GroundTruth::parse(twice).is_err_and(|e| e.contains("twice")));
        let bad_key = r#"{"test": "aat", "questions": [{"id": "q1", "choices": ["a"], "answer": "b", "dimension": "Color", "sub_dimension": "x"}]}"#;
        assert!(GroundTruth::parse(bad_key).is_err());
        assert!(GroundTruth::parse(r#"{"test": "mmt", "questions": []}"#).is_err());
    }
}
