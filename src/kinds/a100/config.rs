//! The values the A100 folder shares: the kind's stored name, its
//! campaign configuration and its answer.

/// Campaign settings of an A100 campaign.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct A100Config {
    /// Participants wanted per questionnaire.
    #[serde(default = "default_participants")]
    pub participants: i32,
    /// Show questions in a random order per participant.
    #[serde(default = "yes")]
    pub shuffle_questions: bool,
    /// Background questions asked before the first task.
    #[serde(default)]
    pub background: Vec<crate::core::campaign::profiles::BackgroundQuestion>,
}

/// The configuration `{}` parses to.
impl Default for A100Config {
    fn default() -> Self {
        Self { participants: default_participants(), shuffle_questions: yes(), background: Vec::new() }
    }
}

fn default_participants() -> i32 {
    20
}
fn yes() -> bool {
    true
}

/// An A100 answer, as `POST .../assignments/{id}/responses` takes it in
/// `answer` and as it is stored: the id of the chosen image among the
/// question's choices.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"choice": "q1c2"}))]
pub struct A100Answer {
    /// The chosen choice's id.
    pub choice: String,
}

/// A question's gold answer: the AAT's key, or the choice an attention
/// check expects (`{"answer": "<choice id>"}`).
#[derive(Debug, Clone, PartialEq, Eq, serde::Deserialize)]
pub struct A100Gold {
    /// The expected choice's id.
    #[serde(default)]
    pub answer: Option<String>,
}

/// The order a participant is shown a question's choices in, stored with
/// their questionnaire.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct ChoiceOrder {
    /// Choice ids, first shown first.
    pub choices: Vec<String>,
}

/// A question as a participant receives it: the outfit, the blank's
/// category and the choices in their order; never the key, the
/// attention-check flag or the dimension.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PublicQuestion {
    /// The partial outfit.
    pub outfit: Vec<super::question::OutfitItem>,
    /// Category of the missing item.
    pub blank_category: String,
    /// The choices, in the participant's order.
    pub choices: Vec<PublicChoice>,
}

/// A choice as a participant receives it.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
pub struct PublicChoice {
    /// Choice id, what an answer names.
    pub id: String,
    /// Image address.
    pub image: String,
}

/// Stored name of the LAT kind.
pub const LAT: &str = "a100-lat";
/// Stored name of the AAT kind.
pub const AAT: &str = "a100-aat";
