//! The core's own campaign settings: who works on it, how long a lease
//! lasts, how many annotators each batch wants, and review. Typed, checked
//! here and stored in their own columns, apart from the kind's configuration.

use super::{Error, Result};
use crate::core::Code;
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

/// The core's settings of one campaign.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct CoreSettings {
    /// Crowd workers or experts.
    pub participants: Participants,
    /// Minutes an assignment is leased before its slot returns to the pool
    /// (never for "every annotator" batches: nobody waits for that slot).
    pub lease_minutes: i32,
    /// Annotators per batch: `null` as the kind plans, `"every"`, or a number.
    #[sqlx(try_from = "Option<i32>")]
    pub annotators_per_batch: AnnotatorsPerBatch,
    /// Every submitted assignment is reviewed by a second expert (expert
    /// campaigns only: a crowd worker must never see another's answers).
    pub review: bool,
}

impl CoreSettings {
    /// Whether crowd workers (not experts) work on the campaign.
    pub fn crowd(&self) -> bool {
        self.participants == Participants::Crowd
    }

    /// The settings with those given in `changes` (a JSON object holding any
    /// of the four keys) applied, checked.
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
                other => return Err(invalid(format!("unknown setting `{other}`"))),
            }
        }
        self.check()?;
        Ok(self)
    }

    /// Refuses combinations that make no sense.
    pub fn check(&self) -> Result<()> {
        if self.review && self.crowd() {
            return Err(Error::invalid(
                Code::ReviewNeedsExperts,
                "review is for expert campaigns: on a crowd campaign it would show workers each other's answers",
            ));
        }
        Ok(())
    }

    /// Each setting with what it means, for the settings form.
    pub fn help() -> [(&'static str, &'static str); 4] {
        [
            ("participants", "crowd (invitation links, completion code) or experts (accounts)"),
            ("lease_minutes", "minutes before an unfinished batch returns to the pool (never for \"every\" batches)"),
            ("annotators_per_batch", "empty: as the task kind plans; a number; or \"every\" annotator with access"),
            ("review", "a second expert reviews every submitted batch (expert campaigns only)"),
        ]
    }
}
