//! The one trait a task kind implements to plug into the core.

use crate::error::Code;
use rand::rngs::StdRng;
use serde_json::Value;
use std::any::Any;
use uuid::Uuid;

pub use super::about::{About, Import};
pub use super::policy::{BatchPolicy, Policy};
pub use super::records::{ItemRecord, Records, ResponseRecord, StoredInput, Table};

/// A validation failure reported by a kind (becomes HTTP 422).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl From<Invalid> for crate::error::Error {
    fn from(e: Invalid) -> Self {
        crate::error::Error::invalid(Code::Invalid, e.0)
    }
}

/// An item as batch formation sees it: `P` is what formation reads of its
/// payload (the keys [`About::payload_keys_batched`] names; JSON in the
/// core, the kind's `Batched` in its hook).
#[derive(Debug, Clone)]
pub struct ItemRef<P = Value> {
    /// Item id.
    pub id: Uuid,
    /// What formation reads of the payload.
    pub payload: P,
    /// Whether the item carries a gold answer (sanity / attention check).
    pub has_gold: bool,
}

/// One batch to create: its items in order and how many annotators complete it.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct BatchPlan {
    /// Items in presentation order (before any per-annotator shuffle).
    pub items: Vec<Uuid>,
    /// Annotators wanted; `None` means every eligible annotator.
    pub overlap: Option<i32>,
    /// The batch's group (e.g. an attribute super-category), which
    /// [`BatchPolicy::reserved_groups`] may keep for some annotators.
    pub group: Option<String>,
}

/// What an annotator sees of one item.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct PublicItem {
    /// Item id.
    pub id: Uuid,
    /// The payload as shown (never contains gold answers).
    pub payload: Value,
}

/// A kind bound to one campaign's parsed configuration (the object-safe
/// face of [`Configured`](crate::core::kind::typed::Configured)): what the
/// core asks that depends on the configuration.
pub trait CampaignRules: Send + Sync {
    /// What the configuration decides, computed once per campaign version.
    fn policy(&self) -> &Policy;

    /// Groups the campaign's items into batches.
    fn form_batches(&self, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid>;

    /// Called when an annotator submits a batch, with each item's gold
    /// answer (if any), payload and stored answer.
    fn on_submit(&self, answered: &[(Option<Value>, Value, Value)]) -> SubmitVerdict;

    /// The ground truth as compact JSON text (see
    /// [`TypedKind::aggregate_json`](crate::core::kind::typed::TypedKind::aggregate_json)).
    fn aggregate_json(&self, input: StoredInput) -> String;

    /// Files a release holds beyond `ground_truth.json` and
    /// `ground_truth.csv` (e.g. a benchmark's own layout), computed from the
    /// snapshot and the ground truth: the same code as the live exports.
    fn release_files(
        &self,
        snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid>;

    /// The parsed configuration, for a kind's own routes and pages to read
    /// back as its type ([`config_of`](crate::core::kind::typed::config_of)).
    fn config_any(&self) -> &(dyn Any + Send + Sync);
}

/// A task kind as the core and its registry hold it (`&dyn TaskKind`): A100
/// questionnaires, VSD pairs, VTON ratings, Fashionpedia attributes. The
/// core calls these hooks and never looks at kind names. Kinds do not
/// implement it by hand: they implement
/// [`TypedKind`](crate::core::kind::typed::TypedKind), whose configuration,
/// answers and ground truth are typed, and get this object-safe face (JSON
/// and text in, JSON and text out) from its blanket implementation.
pub trait TaskKind: Send + Sync + 'static {
    /// What the kind is.
    fn about(&self) -> &'static About;

    /// Validates campaign configuration and fills in defaults.
    fn validate_config(&self, config: &Value) -> Result<Value, Invalid>;

    /// The kind's hooks bound to one campaign's configuration, parsed once
    /// (see [`CampaignRules`]); a configuration that no longer parses is refused.
    fn rules(&self, config: &Value) -> Result<std::sync::Arc<dyn CampaignRules>, Invalid>;

    /// Validates an item's payload and optional gold answer.
    fn validate_item(&self, payload: &Value, gold: Option<&Value>) -> Result<(), Invalid>;

    /// Validates an answer to an item (`None` when the kind's answers do
    /// not read their item) and returns the form to store.
    fn validate_answer(&self, payload: Option<&Value>, answer: &Value) -> Result<Value, Invalid>;

    /// What a stored answer says: whether it passed a quality check, and
    /// its vote for deciding the item under an adaptive overlap.
    fn judge(&self, payload: &Value, gold: Option<&Value>, answer: &Value) -> Judgement;

    /// Per-annotator presentation of one item (e.g. a choice order), stored
    /// with the assignment so analysis can undo it. `Null` when nothing
    /// varies; refused when the stored item no longer reads.
    fn presentation(&self, payload: &Value, rng: &mut StdRng) -> Result<Value, Invalid>;

    /// The payload as this annotator sees it, given their presentation;
    /// refused when the stored item no longer reads.
    fn public_payload(&self, payload: &Value, presentation: &Value) -> Result<Value, Invalid>;

    /// An imported item whose external id exists already: the merged
    /// payload, or `None` to refuse the import.
    fn merge_item(&self, existing: &Value, incoming: &Value) -> Option<Result<Value, Invalid>>;

    /// The ground truth (its compact JSON text) as CSV rows, header first,
    /// handed over one at a time; `partial` includes results not yet final
    /// (an admin's `?partial=true`: e.g. pairs not every expert answered).
    fn export(&self, aggregate: &[u8], partial: bool, each: &mut dyn FnMut(&[String]));

    /// The ground truth and the kind's own tables as a release publishes
    /// them for the Hugging Face Hub and Croissant (typed Parquet), the
    /// ground truth first; the core adds `responses` and `items`.
    fn release_tables(&self, aggregate: &[u8]) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>>;

    /// The label of each item in a ground truth: the item's external id ->
    /// its label in words, for comparing releases and for the data browser.
    fn release_labels(&self, aggregate: &[u8]) -> std::collections::BTreeMap<String, String>;

    /// Markdown for a datasheet: the kind's quality control and agreement,
    /// read from the ground truth.
    fn datasheet_quality(&self, aggregate: &[u8]) -> String;

    /// The kind's stable name (`about().name`).
    fn name(&self) -> &'static str {
        self.about().name
    }

    /// The kind's title for pages (`about().title`).
    fn title(&self) -> &'static str {
        self.about().title
    }
}

/// What a stored answer says (see [`TaskKind::judge`]).
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Judgement {
    /// Whether the answer passed a quality check (an attention or sanity
    /// task); `None` when the item is not a check. Used for payouts and by
    /// the adaptive overlap, which leaves out workers who fail checks.
    pub check: Option<bool>,
    /// The answer's vote for deciding its item under an adaptive overlap
    /// (a choice of so many, a rating); `None` for kinds without a decision
    /// rule and for answers that no longer read.
    pub vote: Option<crate::stats::adaptive::Vote>,
}

/// A demo campaign a kind offers: created, batched, opened and (for crowd
/// campaigns) given an invitation link by `atelier demo`.
#[derive(Debug, Clone)]
pub struct DemoCampaign {
    /// Its name (also how a second `atelier demo` finds it again).
    pub name: &'static str,
    /// The kind's configuration.
    pub config: Value,
    /// Core settings that differ from the kind's defaults.
    pub settings: serde_json::Map<String, Value>,
    /// Its items.
    pub items: Vec<crate::core::item::new_item::NewItem>,
    /// Seed for batch formation.
    pub seed: u64,
    /// Crowd workers who answer a copy of the campaign, so that an admin
    /// trying the demo finds quality figures and ground truth to read (the
    /// campaign itself stays fresh for the person trying it).
    pub simulated: Option<Simulated>,
}

/// Simulated crowd workers of a demo campaign's answered copy.
#[derive(Debug, Clone, Copy)]
pub struct Simulated {
    /// How many (worker ids `demo-sim-01`, `demo-sim-02`, ...); each takes
    /// batches until none is left for them.
    pub workers: usize,
    /// The answer worker `worker` (from 1) gives to an item, from its
    /// payload and gold answer.
    pub answer: fn(worker: usize, payload: &Value, gold: Option<&Value>) -> Value,
}

/// What happens after a batch is submitted.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct SubmitVerdict {
    /// Mark the batch's responses excluded with this reason.
    pub exclude: Option<String>,
    /// Stop the annotator from receiving further batches, for this reason.
    pub block: Option<String>,
}

/// The ground truth as compact JSON text (see
/// [`TypedKind::aggregate_json`](crate::core::kind::typed::TypedKind::aggregate_json))
/// of an input, the reviews applied first when the kind lets the reviewed
/// answer win: the one path both the live exports and releases take.
pub fn aggregate_json_with_reviews(rules: &dyn CampaignRules, input: StoredInput) -> String {
    rules.aggregate_json(reviewed(rules, input))
}

/// The input with only submitted work (a questionnaire or batch moves the
/// ground truth once it is submitted, in every kind, so every export of one
/// snapshot agrees), the reviews applied when the kind lets the reviewed
/// answer win.
fn reviewed(rules: &dyn CampaignRules, mut input: StoredInput) -> StoredInput {
    input.participants.extend(input.responses.iter().filter(|r| r.reviews.is_none()).map(|r| r.annotator_id));
    input.responses.retain(|r| r.submitted);
    if rules.policy().reviewed_answer_wins {
        input.apply_reviews();
    }
    input
}
