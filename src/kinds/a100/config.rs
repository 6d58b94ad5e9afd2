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

/// Stored name of the LAT kind.
pub const LAT: &str = "a100-lat";
/// Stored name of the AAT kind.
pub const AAT: &str = "a100-aat";
