//! The core's own campaign settings: who works on it, how long a lease
//! lasts, how many annotators each batch wants, and review. Typed, checked
//! here and stored in their own columns, apart from the kind's configuration.

use crate::error::Code;
use crate::error::{Error, Result};
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::Value;

/// Who works on a campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, sqlx::Type, Serialize, Deserialize, utoipa::ToSchema)]
#[sqlx(type_name = "participants", rename_all = "lowercase")]
#[serde(rename_all = "lowercase")]
pub enum Participants {
    /// Crowd workers, who join through invitation links and get a
    /// completion code.
    Crowd,
    /// Experts with accounts, who see the campaign on their home page.
    Experts,
}

/// How many annotators complete each batch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum AnnotatorsPerBatch {
    /// As the kind plans its batches (e.g. VTON's 7 per questionnaire).
    #[default]
    AsPlanned,
    /// Every annotator with access labels every batch (experts' "everyone
    /// labels everything"); leases never expire such work.
    Every,
    /// Exactly this many.
    Exactly(u32),
}

impl AnnotatorsPerBatch {
    /// The stored form: NULL as planned, 0 every, n exactly n.
    pub fn to_column(self) -> Option<i32> {
        match self {
            Self::AsPlanned => None,
            Self::Every => Some(0),
            Self::Exactly(n) => Some(i32::try_from(n).unwrap_or(i32::MAX)),
        }
    }

    /// The batch overlap for a kind's planned overlap (`None`: every annotator).
    pub fn overlap(self, planned: Option<i32>) -> Option<i32> {
        match self {
            Self::AsPlanned => planned,
            Self::Every => None,
            Self::Exactly(n) => Some(i32::try_from(n).unwrap_or(i32::MAX)),
        }
    }
}

impl From<Option<i32>> for AnnotatorsPerBatch {
    fn from(column: Option<i32>) -> Self {
        match column {
            None => Self::AsPlanned,
            Some(n) if n <= 0 => Self::Every,
            Some(n) => Self::Exactly(n.unsigned_abs()),
        }
    }
}

/// As the API sends and takes it: `null`, `"every"` or a whole number.
impl utoipa::PartialSchema for AnnotatorsPerBatch {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        use utoipa::openapi::schema::{ObjectBuilder, OneOfBuilder, Type};
        OneOfBuilder::new()
            .item(ObjectBuilder::new().schema_type(Type::Null))
            .item(ObjectBuilder::new().schema_type(Type::String).enum_values(Some(["every"])))
            .item(ObjectBuilder::new().schema_type(Type::Integer).minimum(Some(1)))
            .description(Some("`null`: as the kind plans; `\"every\"`: every annotator with access; or this many"))
            .into()
    }
}

impl utoipa::ToSchema for AnnotatorsPerBatch {}

impl Serialize for AnnotatorsPerBatch {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        match self {
            Self::AsPlanned => s.serialize_none(),
            Self::Every => s.serialize_str("every"),
            Self::Exactly(n) => s.serialize_u32(*n),
        }
    }
}

impl<'de> Deserialize<'de> for AnnotatorsPerBatch {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        parse_annotators(&Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

fn parse_annotators(v: &Value) -> std::result::Result<AnnotatorsPerBatch, String> {
    match v {
        Value::Null => Ok(AnnotatorsPerBatch::AsPlanned),
        Value::String(s) if s == "every" => Ok(AnnotatorsPerBatch::Every),
        Value::String(s) if s.is_empty() || s == "planned" => Ok(AnnotatorsPerBatch::AsPlanned),
        Value::String(s) => s
            .trim()
            .parse::<u32>()
            .ok()
            .filter(|n| (1..=100_000).contains(n))
            .map(AnnotatorsPerBatch::Exactly)
            .ok_or_else(|| {
                format!(
                    "annotators_per_batch must be a number from 1 to 100000, \"every\" or null (as planned), not `{s}`"
                )
            }),
        Value::Number(n) => n
            .as_u64()
            .filter(|n| (1..=100_000).contains(n))
            .map(|n| AnnotatorsPerBatch::Exactly(n as u32))
            .ok_or_else(|| "annotators_per_batch must be a number from 1 to 100000, \"every\" or null".to_owned()),
        _ => Err("annotators_per_batch must be a number, \"every\" or null".to_owned()),
    }
}

/// Whose work counts in a crowd campaign's ground truth, curation, alpha
/// and payouts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum GroundTruthFrom {
    /// Every worker who joined through a link (the default until the
    /// platform's list of submissions is uploaded).
    #[default]
    All,
    /// Only workers on the platform's own list of submissions and not
    /// rejected there (see `core::crowd::reconciliation`).
    Reconciled,
}

impl GroundTruthFrom {
    /// As stored and shown.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::All => "all",
            Self::Reconciled => "reconciled",
        }
    }

    fn parse(text: &str) -> Option<Self> {
        match text.trim() {
            "all" => Some(Self::All),
            "reconciled" => Some(Self::Reconciled),
            _ => None,
        }
    }
}

impl TryFrom<String> for GroundTruthFrom {
    type Error = String;
    fn try_from(text: String) -> std::result::Result<Self, String> {
        Self::parse(&text).ok_or_else(|| format!("ground_truth_from `{text}` is neither all nor reconciled"))
    }
}

/// How many raters each item gets in a crowd campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Overlap {
    /// As the campaign's batches plan (the papers' protocols; the default).
    #[default]
    Fixed,
    /// At least `min` and at most `max` raters an item, rounds of two
    /// more while its kind's rule leaves it undecided (`stats::adaptive`).
    Adaptive {
        /// Raters every item gets.
        min: u16,
        /// Raters no item gets more than.
        max: u16,
        /// The posterior probability that decides a choice, in thousandths.
        threshold_permille: u16,
        /// The Dirichlet prior per choice, in tenths.
        prior_tenths: u16,
    },
}

impl Overlap {
    /// The rule of an adaptive overlap (`None` when fixed).
    pub fn rule(self) -> Option<crate::stats::adaptive::Rule> {
        match self {
            Self::Fixed => None,
            Self::Adaptive { min, max, threshold_permille, prior_tenths } => Some(crate::stats::adaptive::Rule {
                min: u32::from(min),
                max: u32::from(max),
                threshold: f64::from(threshold_permille) / 1000.0,
                prior: f64::from(prior_tenths) / 10.0,
            }),
        }
    }

    /// As the API and the settings form write it.
    pub fn to_json(self) -> Value {
        match self.rule() {
            None => serde_json::json!({"mode": "fixed"}),
            Some(r) => serde_json::json!({
                "mode": "adaptive", "min": r.min, "max": r.max, "threshold": r.threshold, "prior": r.prior,
            }),
        }
    }

    /// Parses `{"mode": "fixed"}`, `{"mode": "adaptive", "min": 3, "max": 9,
    /// "threshold": 0.95, "prior": 1.0}` (the last three optional) or the
    /// words `fixed` / `adaptive` (min 3, max 9).
    pub fn parse(v: &Value) -> std::result::Result<Self, String> {
        let v = match v {
            Value::String(s) => match s.trim() {
                "fixed" | "" => return Ok(Self::Fixed),
                "adaptive" => serde_json::json!({"mode": "adaptive"}),
                text => serde_json::from_str(text)
                    .map_err(|_| format!("overlap must be \"fixed\", \"adaptive\" or a JSON object, not `{text}`"))?,
            },
            Value::Null => return Ok(Self::Fixed),
            other => other.clone(),
        };
        let bad = |m: &str| format!("overlap: {m}");
        let obj = v.as_object().ok_or_else(|| bad("an object {\"mode\": \"fixed\" | \"adaptive\", ...}"))?;
        if let Some(k) = obj.keys().find(|k| !["mode", "min", "max", "threshold", "prior"].contains(&k.as_str())) {
            return Err(bad(&format!("unknown field `{k}` (mode, min, max, threshold, prior)")));
        }
        match obj.get("mode").and_then(Value::as_str) {
            Some("fixed") if obj.len() == 1 => Ok(Self::Fixed),
            Some("fixed") => Err(bad("a fixed overlap takes no parameters")),
            Some("adaptive") => {
                let int = |k: &str, default: u64| obj.get(k).map_or(Some(default), Value::as_u64);
                let float = |k: &str, default: f64| obj.get(k).map_or(Some(default), Value::as_f64);
                let min = int("min", 3).filter(|m| (1..=50).contains(m)).ok_or_else(|| bad("min is 1 to 50"))?;
                let max = int("max", 9).filter(|m| (min..=100).contains(m)).ok_or_else(|| bad("max is min to 100"))?;
                let threshold = float("threshold", 0.95)
                    .filter(|t| (0.5..=0.999).contains(t))
                    .ok_or_else(|| bad("threshold is 0.5 to 0.999"))?;
                let prior = float("prior", 1.0)
                    .filter(|p| (0.1..=10.0).contains(p))
                    .ok_or_else(|| bad("prior is 0.1 to 10"))?;
                Ok(Self::Adaptive {
                    min: min as u16,
                    max: max as u16,
                    threshold_permille: (threshold * 1000.0).round() as u16,
                    prior_tenths: (prior * 10.0).round() as u16,
                })
            }
            _ => Err(bad("mode is \"fixed\" or \"adaptive\"")),
        }
    }
}

impl TryFrom<Value> for Overlap {
    type Error = String;
    fn try_from(v: Value) -> std::result::Result<Self, String> {
        Self::parse(&v)
    }
}

impl Serialize for Overlap {
    fn serialize<S: Serializer>(&self, s: S) -> std::result::Result<S::Ok, S::Error> {
        self.to_json().serialize(s)
    }
}

impl<'de> Deserialize<'de> for Overlap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> std::result::Result<Self, D::Error> {
        Self::parse(&Value::deserialize(d)?).map_err(serde::de::Error::custom)
    }
}

impl utoipa::PartialSchema for Overlap {
    fn schema() -> utoipa::openapi::RefOr<utoipa::openapi::schema::Schema> {
        utoipa::openapi::schema::ObjectBuilder::new()
            .description(Some(
                "`{\"mode\": \"fixed\"}` (default) or `{\"mode\": \"adaptive\", \"min\": 3, \"max\": 9, \"threshold\": \
                 0.95, \"prior\": 1.0}`",
            ))
            .into()
    }
}

impl utoipa::ToSchema for Overlap {}

/// New worker ids a study link admits per client address per ten minutes
/// unless set otherwise.
pub const DEFAULT_JOINS_PER_ADDRESS: i32 = 10;
/// Minutes a crowd worker has for their first answer unless set otherwise.
pub const DEFAULT_FIRST_ANSWER_WITHIN: i32 = 10;

/// The core's settings of one campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, utoipa::ToSchema)]
pub struct CoreSettings {
    /// Crowd workers or experts.
    pub participants: Participants,
    /// Minutes an assignment is leased before its slot returns to the pool
    /// (never for "every annotator" batches: nobody waits for that slot).
    pub lease_minutes: i32,
    /// Annotators per batch: `null` as the kind plans, `"every"`, or a number.
    pub annotators_per_batch: AnnotatorsPerBatch,
    /// Every submitted assignment is reviewed by a second expert (expert
    /// campaigns only: a crowd worker must never see another's answers).
    pub review: bool,
    /// New worker ids a study link admits per client address per ten
    /// minutes (0: no limit, for in-lab sessions behind one address).
    #[serde(default = "default_joins_per_address")]
    pub joins_per_address: i32,
    /// Minutes a crowd worker has for their first answer before the
    /// questionnaire goes back to the pool, as an expired lease does (0: the
    /// lease alone).
    #[serde(default = "default_first_answer_within")]
    pub first_answer_within: i32,
    /// Whose work counts: `all`, or only workers the platform's uploaded
    /// list of submissions has and did not reject (`reconciled`).
    #[serde(default)]
    pub ground_truth_from: GroundTruthFrom,
    /// Raters per item: as the batches plan (`fixed`), or `adaptive`
    /// between a minimum and a maximum (crowd kinds with a decision rule).
    #[serde(default)]
    pub overlap: Overlap,
}

fn default_joins_per_address() -> i32 {
    DEFAULT_JOINS_PER_ADDRESS
}

fn default_first_answer_within() -> i32 {
    DEFAULT_FIRST_ANSWER_WITHIN
}

impl CoreSettings {
    /// Settings with these four and the link and reconciliation rules at
    /// their defaults: what a kind's `default_settings` returns.
    pub const fn of(
        participants: Participants,
        lease_minutes: i32,
        annotators_per_batch: AnnotatorsPerBatch,
        review: bool,
    ) -> Self {
        Self {
            participants,
            lease_minutes,
            annotators_per_batch,
            review,
            joins_per_address: DEFAULT_JOINS_PER_ADDRESS,
            first_answer_within: DEFAULT_FIRST_ANSWER_WITHIN,
            ground_truth_from: GroundTruthFrom::All,
            overlap: Overlap::Fixed,
        }
    }

    /// Whether crowd workers (not experts) work on the campaign.
    pub fn crowd(&self) -> bool {
        self.participants == Participants::Crowd
    }

    /// The settings with those given in `changes` (a JSON object holding any
    /// of the keys of [`Self::help`]) applied, checked.
    pub fn with_changes(mut self, changes: &serde_json::Map<String, Value>) -> Result<Self> {
        let invalid = |m: String| Error::invalid(Code::InvalidSettings, m);
        for (key, v) in changes {
            match key.as_str() {
                "participants" => {
                    self.participants = serde_json::from_value(v.clone())
                        .map_err(|_| invalid("participants must be \"crowd\" or \"experts\"".into()))?
                }
                "lease_minutes" => {
                    self.lease_minutes = v
                        .as_i64()
                        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
                        .filter(|m| (1..=7 * 24 * 60).contains(m))
                        .and_then(|m| i32::try_from(m).ok())
                        .ok_or_else(|| {
                            invalid("lease_minutes must be a whole number of minutes from 1 to 10080".into())
                        })?
                }
                "annotators_per_batch" => self.annotators_per_batch = parse_annotators(v).map_err(invalid)?,
                "review" => {
                    self.review = v
                        .as_bool()
                        .or_else(|| v.as_str().and_then(|s| s.parse().ok()))
                        .ok_or_else(|| invalid("review must be true or false".into()))?
                }
                "joins_per_address" => {
                    self.joins_per_address = whole(v, 0, 10_000).ok_or_else(|| {
                        invalid("joins_per_address must be a whole number from 0 (no limit) to 10000".into())
                    })?
                }
                "first_answer_within" => {
                    self.first_answer_within = whole(v, 0, 1440).ok_or_else(|| {
                        invalid("first_answer_within must be a whole number of minutes from 0 (off) to 1440".into())
                    })?
                }
                "ground_truth_from" => {
                    self.ground_truth_from = v
                        .as_str()
                        .and_then(GroundTruthFrom::parse)
                        .ok_or_else(|| invalid("ground_truth_from must be \"all\" or \"reconciled\"".into()))?
                }
                "overlap" => self.overlap = Overlap::parse(v).map_err(invalid)?,
                other => return Err(invalid(format!("unknown setting `{other}`"))),
            }
        }
        self.check()?;
        Ok(self)
    }

    /// Refuses combinations that make no sense.
    pub fn check(&self) -> Result<()> {
        if self.overlap != Overlap::Fixed && !self.crowd() {
            return Err(Error::invalid(
                Code::InvalidSettings,
                "an adaptive overlap is for crowd campaigns (experts label every item of theirs)",
            ));
        }
        if self.review && self.crowd() {
            return Err(Error::invalid(
                Code::ReviewNeedsExperts,
                "review is for expert campaigns: on a crowd campaign it would show workers each other's answers",
            ));
        }
        Ok(())
    }

    /// Each setting with what it means, for the settings form.
    pub fn help() -> [(&'static str, &'static str); 8] {
        [
            ("participants", "crowd (invitation links, completion code) or experts (accounts)"),
            ("lease_minutes", "minutes before an unfinished batch returns to the pool (never for \"every\" batches)"),
            ("annotators_per_batch", "empty: as the task kind plans; a number; or \"every\" annotator with access"),
            ("review", "a second expert reviews every submitted batch (expert campaigns only)"),
            (
                "joins_per_address",
                "new worker ids a study link admits from one address per 10 minutes (more get \"too many\"); 0 \
                 turns the limit off, for in-lab sessions where everyone shares one address",
            ),
            (
                "first_answer_within",
                "minutes a worker has for their first answer; a questionnaire taken but not started goes back to \
                 the pool after them, as an expired lease does (0: off)",
            ),
            (
                "overlap",
                "fixed: every item gets the raters its questionnaires plan (the papers' protocols); or adaptive, e.g. \
                 {\"mode\": \"adaptive\", \"min\": 3, \"max\": 9}: every item gets min raters, then rounds of two more (never \
                 past max), in questionnaires of undecided items, while its kind's rule leaves it undecided (a choice: its leader could \
                 still lose, or is the majority with posterior probability below threshold, Dirichlet prior; a rating: \
                 the 95 % interval of its mean is wider than one level's half-width, mean ± 0.5), up to max; raters who fail a check do \
                 not count. Not for replicating a protocol: use fixed there",
            ),
            (
                "ground_truth_from",
                "all: every worker who joined; reconciled: only workers on the platform's uploaded list of \
                 submissions and not rejected there count in ground truth, curation, alpha and payouts",
            ),
        ]
    }

    /// Whether the setting `key` is about crowd workers (links, platforms):
    /// not shown for expert campaigns.
    pub fn crowd_only(key: &str) -> bool {
        matches!(key, "joins_per_address" | "first_answer_within" | "ground_truth_from" | "overlap")
    }
}

/// A whole number from a JSON number or a form's text, within `min..=max`.
fn whole(v: &Value, min: i64, max: i64) -> Option<i32> {
    v.as_i64()
        .or_else(|| v.as_str().and_then(|s| s.trim().parse().ok()))
        .filter(|n| (min..=max).contains(n))
        .and_then(|n| i32::try_from(n).ok())
}
