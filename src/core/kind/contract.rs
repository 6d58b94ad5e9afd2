//! The one trait a task kind implements to plug into the core.

use crate::error::Code;
use rand::rngs::StdRng;
use serde_json::Value;
use std::any::Any;
use uuid::Uuid;

pub use super::records::{AggregationInput, ItemRecord, ResponseRecord, Table};

/// A validation failure reported by a kind (becomes HTTP 422).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Invalid(pub String);

impl From<Invalid> for crate::error::Error {
    fn from(e: Invalid) -> Self {
        crate::error::Error::invalid(Code::Invalid, e.0)
    }
}

/// Reads the generic import format, `{"items": [{"external_id", "payload", "gold"}]}`:
/// what a kind without its own format imports.
pub fn generic_import(text: &str) -> Result<Vec<crate::core::item::new_item::NewItem>, Invalid> {
    #[derive(serde::Deserialize)]
    struct Items {
        items: Vec<crate::core::item::new_item::NewItem>,
    }
    serde_json::from_str::<Items>(text).map(|i| i.items).map_err(|e| Invalid(format!("line {}: {e}", e.line())))
}

/// What the generic import form expects, shown on the campaign page.
pub const GENERIC_IMPORT_HINT: &str = "JSON: {\"items\": [{\"external_id\", \"payload\", \"gold\"}]}";

/// An item as batch formation sees it.
#[derive(Debug, Clone)]
pub struct ItemRef {
    /// Item id.
    pub id: Uuid,
    /// The kind-specific payload.
    pub payload: Value,
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
    /// [`TaskKind::may_take`] may restrict to some annotators.
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

/// The configuration-dependent hooks of a kind for one campaign (the
/// object-safe face of [`Configured`](crate::core::kind::typed::Configured)).
pub trait CampaignRules: Send + Sync {
    /// Groups the campaign's items into batches.
    fn form_batches(&self, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid>;

    /// Whether items within a batch are shown in a per-annotator random order.
    fn shuffle_items(&self) -> bool;

    /// How many batches one annotator may take (`None`: no limit).
    fn max_batches_per_annotator(&self) -> Option<i64>;

    /// Whether gold items are shared by every batch (sanity tasks), so that
    /// batches formed later for new items get them too.
    fn shares_gold_across_batches(&self) -> bool;

    /// Whether gold items may meet an annotator again in a later batch.
    fn gold_may_repeat(&self) -> bool;

    /// Whether the annotator (account name or worker id) may take a batch
    /// of this group.
    fn may_take(&self, group: Option<&str>, annotator: &str) -> bool;

    /// Background questions asked before a participant's first task.
    fn background(&self) -> Vec<crate::core::campaign::profiles::BackgroundQuestion>;

    /// Called when an annotator submits a batch, with each item's gold
    /// answer (if any), payload and stored answer.
    fn on_submit(&self, answered: &[(Option<Value>, Value, Value)]) -> SubmitVerdict;

    /// Whether a reviewer's answer replaces the answer under review.
    fn reviewed_answer_wins(&self) -> bool;

    /// The ground truth as compact JSON text (see
    /// [`TypedKind::aggregate_json`](crate::core::kind::typed::TypedKind::aggregate_json)).
    fn aggregate_json(&self, input: AggregationInput) -> String;

    /// Parameters fixed in code that shape the ground truth.
    fn release_parameters(&self) -> Value;

    /// Images that show an item at a glance in the data browser.
    fn thumbnails(&self, payload: &Value) -> Vec<crate::core::item::thumbnails::Thumbnail>;

    /// Markdown for a datasheet: what annotators were asked and the scale.
    fn datasheet_task(&self) -> String;

    /// The parsed configuration, for a kind's own routes to read back as
    /// its type ([`config_of`](crate::core::kind::typed::config_of)).
    fn config_any(&self) -> &(dyn Any + Send + Sync);
}

/// A task kind as the core and its registry hold it (`&dyn TaskKind`): A100
/// questionnaires, VSD pairs, VTON ratings, Fashionpedia attributes. The
/// core calls these hooks and never looks at kind names. Kinds do not
/// implement it by hand: they implement
/// [`TypedKind`](crate::core::kind::typed::TypedKind), whose configuration is
/// typed, and get this object-safe face from its blanket implementation.
pub trait TaskKind: Send + Sync + 'static {
    /// Stable identifier stored on campaigns (`vton`, `a100-lat`, ...).
    fn name(&self) -> &'static str;

    /// Human title for pages.
    fn title(&self) -> &'static str;

    /// The core settings a new campaign of this kind starts with: who works
    /// on it (crowd or experts), lease length, annotators per batch, review.
    fn default_settings(&self) -> crate::core::campaign::settings::CoreSettings;

    /// Validates campaign configuration and fills in defaults.
    fn validate_config(&self, config: &Value) -> Result<Value, Invalid>;

    /// The kind's hooks bound to one campaign's configuration, parsed once
    /// (see [`CampaignRules`]); a configuration that no longer parses is refused.
    fn rules(&self, config: &Value) -> Result<std::sync::Arc<dyn CampaignRules>, Invalid>;

    /// Validates an item's payload and optional gold answer.
    fn validate_item(&self, payload: &Value, gold: Option<&Value>) -> Result<(), Invalid>;

    /// Validates an answer to an item and returns the form to store.
    fn validate_answer(&self, payload: &Value, answer: &Value) -> Result<Value, Invalid>;

    /// Whether [`Self::validate_answer`] reads the item's payload. A kind
    /// whose answers are valid or not whatever the item (a rating, a label)
    /// says `false`: its answers are then validated against `Value::Null`
    /// and stored without reading the item first, which saves a query on
    /// every vote (the statement storing the answer still checks that the
    /// item is in the annotator's batch).
    fn answer_reads_item(&self) -> bool;

    /// Per-annotator presentation of one item (e.g. a choice order), stored
    /// with the assignment so analysis can undo it. `Null` when nothing varies.
    fn presentation(&self, _payload: &Value, _rng: &mut StdRng) -> Value;

    /// The payload as this annotator sees it, given their presentation.
    fn public_payload(&self, payload: &Value, _presentation: &Value) -> Value;

    /// The ground truth (its compact JSON text) as a table for CSV export:
    /// a header and rows.
    fn export_table(&self, aggregate: &[u8]) -> Table;

    /// The rows of [`TaskKind::export_table`], header first, handed over
    /// one at a time as they are read: what the live CSV export writes. A
    /// kind whose table runs to tens of MB reads its ground truth straight
    /// into rows here instead of building the table.
    fn export_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String]));

    /// The rows of an export that an admin asked to include results not yet
    /// final (`?partial=true`: e.g. pairs not every expert has answered);
    /// the same as [`TaskKind::export_rows`] for kinds without such results.
    fn export_partial_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String]));

    /// Parses an import file pasted or uploaded by an admin into items. The
    /// default reads the generic `{"items": [{"external_id", "payload", "gold"}]}`.
    fn parse_import(&self, text: &str) -> Result<Vec<crate::core::item::new_item::NewItem>, Invalid>;

    /// An imported item whose external id exists already: the merged
    /// payload, or `None` to refuse the import (the default). A kind whose
    /// items grow (VSD pairs gaining another model's proposals) merges.
    fn merge_item(&self, _existing: &Value, _incoming: &Value) -> Option<Result<Value, Invalid>>;

    /// Whether items come only through the kind's own page (its own
    /// formats): the campaign page then points there instead of offering
    /// the generic import, which [`parse_import`](Self::parse_import) refuses.
    fn imports_on_own_page(&self) -> bool;

    /// What the import form expects, shown on the campaign page.
    fn import_hint(&self) -> &'static str;

    /// Each configuration key in words (label, meaning, unit, source of the
    /// default), for the settings form.
    fn settings_help(&self) -> &'static [crate::core::campaign::setting_help::SettingHelp];

    /// Whether an answer passed a quality check (an attention or sanity
    /// task); `None` when the item is not a check. Used for payouts.
    fn check_passed(&self, _payload: &Value, _gold: Option<&Value>, _answer: &Value) -> Option<bool>;

    /// What a stored answer says for deciding its item under an adaptive
    /// overlap; `None` for kinds without a decision rule.
    fn adaptive_vote(&self, payload: &Value, answer: &Value) -> Option<crate::stats::adaptive::Vote>;

    /// Whether the kind decides items (an adaptive overlap may be set).
    fn adaptive_overlap(&self) -> bool;

    /// Files a release holds beyond `ground_truth.json` and
    /// `ground_truth.csv` (e.g. a benchmark's own layout), computed from the
    /// snapshot and the ground truth (its compact JSON text, as
    /// [`TaskKind::aggregate_json`] writes it): the same code as the live
    /// exports.
    fn release_files(
        &self,
        _snapshot: &crate::core::releases::Snapshot,
        _aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid>;

    /// The ground truth and the kind's own tables as a release publishes
    /// them for the Hugging Face Hub and Croissant (typed Parquet), the
    /// ground truth first; the core adds `responses` and `items`. The
    /// default publishes the ground-truth export with every column as text.
    fn release_tables(
        &self,
        _snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>>;

    /// The Hugging Face Hub's task categories for the kind's releases.
    fn hub_task_categories(&self) -> &'static [&'static str];

    /// The label of each item in a ground truth (its compact JSON text):
    /// the item's external id -> its label in words, for comparing
    /// releases and for the data browser.
    fn release_labels(&self, _aggregate: &[u8]) -> std::collections::BTreeMap<String, String>;

    /// JSON an answer contains when it raises a flag for the admin (a
    /// broken image, "not sure"), each a pattern for PostgreSQL's `@>`:
    /// the data browser's "flagged" filter.
    fn answer_flags(&self) -> &'static [&'static str];

    /// Markdown for a datasheet: the kind's quality control and agreement,
    /// read from the ground truth (its compact JSON text).
    fn datasheet_quality(&self, _aggregate: &[u8]) -> String;

    /// Payload keys the kind's `aggregate` never reads (large ones, such as
    /// masks' polygons), left out of the live aggregation's input.
    fn payload_keys_not_aggregated(&self) -> &'static [&'static str];

    /// A small campaign of this kind that `atelier demo` seeds (created,
    /// batched and opened by the core), or `None`.
    fn demo(&self) -> Option<DemoCampaign>;
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
pub fn aggregate_json_with_reviews(rules: &dyn CampaignRules, input: AggregationInput) -> String {
    rules.aggregate_json(reviewed(rules, input))
}

/// The input with only submitted work (a questionnaire or batch moves the
/// ground truth once it is submitted, in every kind, so every export of one
/// snapshot agrees), the reviews applied when the kind lets the reviewed
/// answer win.
fn reviewed(rules: &dyn CampaignRules, mut input: AggregationInput) -> AggregationInput {
    input.participants.extend(input.responses.iter().filter(|r| r.reviews.is_none()).map(|r| r.annotator_id));
    input.responses.retain(|r| r.submitted);
    if rules.reviewed_answer_wins() {
        input.apply_reviews();
    }
    input
}
