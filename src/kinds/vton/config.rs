//! The values the VTON folder shares: the kind's stored name, its
//! campaign configuration and its answer.

use super::curation;
use crate::core::campaign::profiles::BackgroundQuestion;
use crate::core::kind::contract::Invalid;
use serde_json::Value;

/// The three answers, in scale order.
pub const LABELS: [&str; 3] = ["Unnatural", "Slightly unnatural, but not noticeable", "Completely natural"];

/// Stored name of the kind.
pub const NAME: &str = "vton";

/// Campaign settings of a VTON campaign. Given sanity positions and no
/// count, the count is the number of positions.
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(from = "Sent")]
pub struct VtonConfig {
    /// Tasks per questionnaire, sanity tasks included.
    #[serde(default = "default_tasks")]
    pub tasks_per_questionnaire: usize,
    /// Sanity tasks hidden in each questionnaire.
    #[serde(default = "default_sanity")]
    pub sanity_per_questionnaire: usize,
    /// In how many questionnaires each image appears.
    #[serde(default = "default_one")]
    pub appearances: usize,
    /// Workers who answer each questionnaire.
    #[serde(default = "default_annotators")]
    pub annotators_per_questionnaire: i32,
    /// Curation thresholds (the benchmark's by default).
    #[serde(default)]
    pub curation: curation::Thresholds,
    /// Live mode: stop a worker who fails the sanity tasks (more than
    /// `curation.max_sanity_failures`) from receiving further questionnaires.
    #[serde(default)]
    pub stop_sanity_failures: bool,
    /// 1-based positions of the sanity tasks in every questionnaire; by
    /// default evenly spaced (5, 15, 25, 35, 45 of 50, as in VTON-QBench).
    #[serde(default)]
    pub sanity_positions: Option<Vec<usize>>,
    /// Where the sanity tasks sit: at the same positions in every
    /// questionnaire (the protocol), or at positions drawn anew for each.
    #[serde(default)]
    pub sanity_placement: SanityPlacement,
    /// Fill the last questionnaire up to `tasks_per_questionnaire` with
    /// images of other questionnaires (which then get more ratings).
    #[serde(default = "default_true")]
    pub fill_last_questionnaire: bool,
    /// Questions asked once before the first task; by default the three the
    /// VTON-QBench release records (gender, age, experience).
    #[serde(default = "default_background")]
    pub background: Vec<BackgroundQuestion>,
    /// Questionnaires one worker may take. Sanity tasks repeat across
    /// questionnaires, so with more than one a worker draws from a pool of
    /// sanity sets and never sees a sanity image twice.
    #[serde(default = "default_one")]
    pub max_questionnaires_per_worker: usize,
}

/// The configuration `{}` parses to (VTON-QBench's protocol).
impl Default for VtonConfig {
    fn default() -> Self {
        Self {
            tasks_per_questionnaire: default_tasks(),
            sanity_per_questionnaire: default_sanity(),
            appearances: default_one(),
            annotators_per_questionnaire: default_annotators(),
            curation: curation::Thresholds::default(),
            stop_sanity_failures: false,
            sanity_positions: None,
            sanity_placement: SanityPlacement::default(),
            fill_last_questionnaire: default_true(),
            background: default_background(),
            max_questionnaires_per_worker: default_one(),
        }
    }
}

/// A configuration as written: the count of sanity tasks may be left to
/// follow from their positions, which only the whole document shows.
#[derive(serde::Deserialize)]
#[serde(deny_unknown_fields)]
struct Sent {
    #[serde(default = "default_tasks")]
    tasks_per_questionnaire: usize,
    #[serde(default)]
    sanity_per_questionnaire: Option<usize>,
    #[serde(default = "default_one")]
    appearances: usize,
    #[serde(default = "default_annotators")]
    annotators_per_questionnaire: i32,
    #[serde(default)]
    curation: curation::Thresholds,
    #[serde(default)]
    stop_sanity_failures: bool,
    #[serde(default)]
    sanity_positions: Option<Vec<usize>>,
    #[serde(default)]
    sanity_placement: SanityPlacement,
    #[serde(default = "default_true")]
    fill_last_questionnaire: bool,
    #[serde(default = "default_background")]
    background: Vec<BackgroundQuestion>,
    #[serde(default = "default_one")]
    max_questionnaires_per_worker: usize,
}

impl From<Sent> for VtonConfig {
    fn from(s: Sent) -> Self {
        Self {
            sanity_per_questionnaire: s
                .sanity_per_questionnaire
                .or(s.sanity_positions.as_ref().map(Vec::len))
                .unwrap_or_else(default_sanity),
            tasks_per_questionnaire: s.tasks_per_questionnaire,
            appearances: s.appearances,
            annotators_per_questionnaire: s.annotators_per_questionnaire,
            curation: s.curation,
            stop_sanity_failures: s.stop_sanity_failures,
            sanity_positions: s.sanity_positions,
            sanity_placement: s.sanity_placement,
            fill_last_questionnaire: s.fill_last_questionnaire,
            background: s.background,
            max_questionnaires_per_worker: s.max_questionnaires_per_worker,
        }
    }
}

fn default_tasks() -> usize {
    50
}
fn default_sanity() -> usize {
    5
}
fn default_one() -> usize {
    1
}
/// VTON-QBench has 431,800 ratings of 62,688 images, about 6.9 per image.
fn default_annotators() -> i32 {
    7
}
fn default_true() -> bool {
    true
}
fn default_background() -> Vec<BackgroundQuestion> {
    let q = |id: &str, question: &str, options: &[&str]| BackgroundQuestion {
        id: id.into(),
        question: question.into(),
        options: options.iter().map(|o| (*o).to_owned()).collect(),
    };
    vec![
        q("gender", "Your gender?", &["female", "male", "non-binary", "prefer not to say"]),
        q("age", "Your age?", &["18-24", "25-34", "35-44", "45-54", "55-64", "65+"]),
        q("experience", "Your experience with fashion or image editing?", &["none", "some", "professional"]),
    ]
}

/// Where a questionnaire's sanity tasks sit.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SanityPlacement {
    /// The same positions in every questionnaire (`sanity_positions`), as
    /// the paper and the released code's curation expect.
    #[default]
    Fixed,
    /// Positions drawn for each questionnaire when it is formed.
    PerQuestionnaire,
}

impl VtonConfig {
    /// Parses and checks a campaign's configuration.
    pub fn parse(config: &Value) -> Result<Self, Invalid> {
        let c: Self = crate::core::campaign::config_text::parse(config)?;
        c.check()?;
        Ok(c)
    }

    /// Checks what the types cannot: counts and positions that fit a
    /// questionnaire, shares between 0 and 1, counts of at least one.
    pub fn check(&self) -> Result<(), Invalid> {
        let c = self;
        if c.tasks_per_questionnaire == 0 || c.sanity_per_questionnaire >= c.tasks_per_questionnaire {
            return Err(Invalid("configuration: tasks_per_questionnaire must exceed sanity_per_questionnaire".into()));
        }
        if let Some(p) = &c.sanity_positions {
            let distinct: std::collections::BTreeSet<_> = p.iter().collect();
            if p.len() != c.sanity_per_questionnaire
                || distinct.len() != p.len()
                || p.iter().any(|&x| x == 0 || x > c.tasks_per_questionnaire)
            {
                return Err(Invalid(format!(
                    "configuration: sanity_positions must be {} distinct positions between 1 and {}",
                    c.sanity_per_questionnaire, c.tasks_per_questionnaire
                )));
            }
        }
        if c.sanity_placement == SanityPlacement::PerQuestionnaire && c.sanity_positions.is_some() {
            return Err(Invalid(
                "configuration: sanity_positions fixes the positions; leave it out with sanity_placement \
                 per_questionnaire"
                    .into(),
            ));
        }
        let t = &c.curation;
        if !(0.0..=1.0).contains(&t.max_identical) || !(0.0..=1.0).contains(&t.max_disagreement) {
            return Err(Invalid("configuration: curation shares must be between 0 and 1".into()));
        }
        if c.appearances == 0 || c.annotators_per_questionnaire < 1 || c.max_questionnaires_per_worker == 0 {
            return Err(Invalid(
                "configuration: appearances, annotators_per_questionnaire and max_questionnaires_per_worker must be at least 1"
                    .into(),
            ));
        }
        Ok(())
    }

    /// The 1-based sanity positions: configured, or evenly spaced (the
    /// middle of each of S equal parts: 5, 15, 25, 35, 45 of 50).
    pub fn sanity_positions(&self) -> Vec<usize> {
        if let Some(p) = &self.sanity_positions {
            let mut p = p.clone();
            p.sort_unstable();
            return p;
        }
        let (n, s) = (self.tasks_per_questionnaire, self.sanity_per_questionnaire);
        (0..s).map(|i| ((2 * i + 1) * n / (2 * s)).max(1)).collect()
    }
}

/// A VTON item as the kind reads it: its four images (the try-on model,
/// category and dataset stay in the stored payload for the aggregation,
/// and are never shown: they would bias ratings).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct VtonImages {
    /// The try-on image rated.
    pub tryon: String,
    /// The garment tried on.
    pub garment: String,
    /// The person it was tried on.
    pub person: String,
    /// A reference photo of the person wearing the garment.
    pub reference: String,
}

impl VtonImages {
    /// The images by field name, in the order the task page shows them.
    pub fn fields(&self) -> [(&'static str, &str); 4] {
        [("tryon", &self.tryon), ("garment", &self.garment), ("person", &self.person), ("reference", &self.reference)]
    }
}

/// A sanity task's gold answer as stored: `{"rating": 1-3, "tolerance": 0-2}`
/// (tolerance optional).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Deserialize)]
pub struct VtonGold {
    /// The known rating.
    pub rating: u8,
    /// How far a rating may be from it and pass.
    #[serde(default)]
    pub tolerance: u8,
}

impl VtonGold {
    /// The sanity task it states, if its numbers are in range.
    pub fn task(&self) -> Option<curation::SanityTask> {
        ((1..=3).contains(&self.rating) && self.tolerance <= 2)
            .then_some(curation::SanityTask { expected: self.rating, tolerance: self.tolerance })
    }
}

/// A VTON answer, as `POST .../assignments/{id}/responses` takes it in
/// `answer` and as it is stored: the rating 1 (unnatural), 2 (slightly
/// unnatural) or 3 (completely natural).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"rating": 3}))]
pub struct VtonAnswer {
    /// 1, 2 or 3.
    #[schema(minimum = 1, maximum = 3)]
    pub rating: u8,
}

/// The rating 1 to 3 in a stored answer or gold, `{"rating": n}`.
pub fn rating(v: &Value) -> Option<u8> {
    v.get("rating").and_then(Value::as_u64).filter(|r| (1..=3).contains(r)).map(|r| r as u8)
}

/// A stored sanity answer, `{"rating": 1-3, "tolerance": 0-2}` (tolerance optional).
pub fn sanity_task(gold: &Value) -> Option<curation::SanityTask> {
    let tolerance = match gold.get("tolerance") {
        None | Some(Value::Null) => 0,
        Some(t) => t.as_u64().filter(|t| *t <= 2)? as u8,
    };
    Some(curation::SanityTask { expected: rating(gold)?, tolerance })
}
