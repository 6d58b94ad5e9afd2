//! The A100 ground truth as a typed result: what `aggregate` computes and
//! exports (and what `atelier a100 score` reads, see [`super::gt_file`]),
//! read back by the kind's pages and exports by field, never by string key.

use serde::{Deserialize, Serialize};
use std::collections::BTreeMap;

/// A LAT or AAT campaign's ground truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct A100Result {
    /// `lat` or `aat`.
    pub test: String,
    /// People who took the test (submitted and counted): x of the paper's Eq. 2.
    pub participants: usize,
    /// Per question (attention checks left out).
    pub questions: Vec<QuestionResult>,
}

/// One question's votes, majority and consistency.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct QuestionResult {
    /// Question id.
    pub id: String,
    /// Choice ids, in the question's order.
    pub choices: Vec<String>,
    /// Votes per choice (every choice listed).
    pub votes: BTreeMap<String, u64>,
    /// Votes cast on the question.
    pub participants: u64,
    /// Share of the votes per choice.
    pub shares: BTreeMap<String, f64>,
    /// The one most voted choice; `None` on a tie or without votes.
    pub majority: Option<String>,
    /// The tied most voted choices (empty unless tied).
    pub tied: Vec<String>,
    /// Share of the most voted choice.
    pub consistency: f64,
    /// The category of the blank.
    pub blank_category: String,
    /// Image of each choice.
    pub images: BTreeMap<String, String>,
    /// AAT only: the key, what it tests, and how many people chose the key
    /// (read back from a LAT it may be present and empty: look at `test`).
    #[serde(flatten)]
    pub aat: Option<AatResult>,
}

/// The AAT fields of a question.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct AatResult {
    /// The expert key.
    pub answer: Option<String>,
    /// Dimension (Color, Style, ...).
    pub dimension: Option<String>,
    /// Sub-dimension.
    pub sub_dimension: Option<String>,
    /// Share of the participants who chose the key (`None` without votes).
    pub human_accuracy: Option<f64>,
}

impl A100Result {
    /// Reads it back from its compact JSON text (what the ground-truth
    /// cache keeps).
    pub fn from_json(aggregate: &[u8]) -> Result<Self, crate::error::Error> {
        serde_json::from_slice(aggregate).map_err(|e| crate::error::Error::internal("not an A100 ground truth", e))
    }

    /// Reads an A100 ground truth back from its JSON (as `aggregate` made it).
    pub fn from_value(aggregate: &serde_json::Value) -> Result<Self, crate::error::Error> {
        Self::deserialize(aggregate).map_err(|e| crate::error::Error::internal("not an A100 ground truth", e))
    }

    /// Whether this is an AAT.
    pub fn is_aat(&self) -> bool {
        self.test == "aat"
    }
}

impl QuestionResult {
    /// Whether `choice` is the question's majority: the one choice with the
    /// most votes (a tied question has none: false for every choice).
    pub fn is_majority(&self, choice: &str) -> bool {
        self.majority.as_deref() == Some(choice)
    }

    /// Whether `choice` shares the top vote count with another choice.
    pub fn is_tied(&self, choice: &str) -> bool {
        self.tied.iter().any(|t| t == choice)
    }
}
