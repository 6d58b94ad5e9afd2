//! The trait a task kind implements, typed: its configuration is parsed
//! once per campaign version into the kind's own `Config`, and every hook
//! that depends on it receives that value. [`TaskKind`] is its object-safe
//! face for the registry: every `TypedKind` is a `TaskKind` through the
//! blanket implementation below (atuin's `Database` and `DynDatabase` are
//! the pattern), and the configuration-dependent hooks are reached through
//! [`CampaignRules`], the kind bound to one parsed configuration
//! ([`Configured`]).
//!
//! The hooks are grouped by concern: what the kind is; its items and
//! answers; how batches are formed and handed out; aggregation; exports and
//! releases. Nine hooks and the three types are required; the rest have defaults.

use crate::core::campaign::profiles::BackgroundQuestion;
use crate::core::campaign::setting_help::SettingHelp;
use crate::core::campaign::settings::CoreSettings;
use crate::core::item::thumbnails::Thumbnail;
use crate::core::kind::contract::{
    AggregationInput, BatchPlan, CampaignRules, DemoCampaign, Invalid, ItemRef, SubmitVerdict, Table, TaskKind,
};
use rand::rngs::StdRng;
use serde::Deserialize;
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;

/// A task kind with a typed configuration.
pub trait TypedKind: Clone + Send + Sync + 'static {
    /// The kind's campaign configuration, every field with a default (the
    /// `Default` is what an empty configuration parses to). Parsed once per
    /// campaign version ([`crate::core::kind::typed::Configured`]).
    type Config: serde::Serialize + Default + Send + Sync + 'static;

    /// An answer as the kind stores it: `validate_answer` makes one from
    /// what an annotator sent, and stored answers are read back into it. Its
    /// JSON form is the API's answer format and what exports write.
    type Answer: serde::Serialize + serde::de::DeserializeOwned;

    /// The campaign's ground truth as the kind computes it from the
    /// answers. The core keeps and hands on its compact JSON text (cached,
    /// exported, released); the kind's pages and exports read that text back
    /// into this type, or into a smaller part of it where a whole crowd
    /// campaign's would cost memory.
    type GroundTruth: serde::Serialize + serde::de::DeserializeOwned;

    // What the kind is.

    /// Stable identifier stored on campaigns (`vton`, `a100-lat`, ...).
    fn name(&self) -> &'static str;

    /// Human title for pages.
    fn title(&self) -> &'static str;

    /// The core settings a new campaign of this kind starts with: who works
    /// on it (crowd or experts), lease length, annotators per batch, review.
    fn default_settings(&self) -> CoreSettings;

    /// Parses and checks a campaign's configuration (defaults filled in);
    /// refusals name the setting.
    fn parse_config(&self, config: &Value) -> Result<Self::Config, Invalid>;

    /// Each configuration key in words (label, meaning, unit, source of the
    /// default), for the settings form.
    fn settings_help(&self) -> &'static [SettingHelp] {
        &[]
    }

    /// A small campaign of this kind that `atelier demo` seeds (created,
    /// batched and opened by the core), or `None`.
    fn demo(&self) -> Option<DemoCampaign> {
        None
    }

    // Items and answers.

    /// Validates an item's payload and optional gold answer.
    fn validate_item(&self, payload: &Value, gold: Option<&Value>) -> Result<(), Invalid>;

    /// Reads and checks an answer to an item: what is stored.
    fn validate_answer(&self, payload: &Value, answer: &Value) -> Result<Self::Answer, Invalid>;

    /// Whether [`Self::validate_answer`] reads the item's payload (see
    /// [`TaskKind::answer_reads_item`]).
    fn answer_reads_item(&self) -> bool {
        true
    }

    /// Whether an answer passed a quality check (an attention or sanity
    /// task); `None` when the item is not a check. Used for payouts. The
    /// answer is `None` when the stored one no longer reads.
    fn check_passed(&self, _payload: &Value, _gold: Option<&Value>, _answer: Option<&Self::Answer>) -> Option<bool> {
        None
    }

    /// What an answer says for deciding its item under an adaptive overlap
    /// (a choice of so many, a rating); `None` for kinds without a decision
    /// rule, which keep a fixed overlap.
    fn adaptive_vote(&self, _payload: &Value, _answer: &Self::Answer) -> Option<crate::stats::adaptive::Vote> {
        None
    }

    /// Whether the kind decides items by [`Self::adaptive_vote`] (an
    /// adaptive overlap may be set).
    fn adaptive_overlap(&self) -> bool {
        false
    }

    /// JSON an answer contains when it raises a flag for the admin (a
    /// broken image, "not sure"), each a pattern for PostgreSQL's `@>`.
    fn answer_flags(&self) -> &'static [&'static str] {
        &[]
    }

    /// Parses an import file pasted or uploaded by an admin into items (see
    /// [`TaskKind::parse_import`] for the default format).
    fn parse_import(&self, text: &str) -> Result<Vec<crate::core::item::new_item::NewItem>, Invalid> {
        crate::core::kind::contract::generic_import(text)
    }

    /// What the import form expects, shown on the campaign page.
    fn import_hint(&self) -> &'static str {
        crate::core::kind::contract::GENERIC_IMPORT_HINT
    }

    /// Whether items come only through the kind's own page.
    fn imports_on_own_page(&self) -> bool {
        false
    }

    /// An imported item whose external id exists already: the merged
    /// payload, or `None` to refuse the import (the default).
    fn merge_item(&self, _existing: &Value, _incoming: &Value) -> Option<Result<Value, Invalid>> {
        None
    }

    /// Per-annotator presentation of one item (e.g. a choice order), stored
    /// with the assignment so analysis can undo it. `Null` when nothing varies.
    fn presentation(&self, _payload: &Value, _rng: &mut StdRng) -> Value {
        Value::Null
    }

    /// The payload as this annotator sees it, given their presentation.
    fn public_payload(&self, payload: &Value, _presentation: &Value) -> Value {
        payload.clone()
    }

    // Batches: how they are formed and handed out.

    /// Groups the campaign's items into batches.
    fn form_batches(
        &self,
        config: &Self::Config,
        items: &[ItemRef],
        rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid>;

    /// Whether items within a batch are shown in a per-annotator random order.
    fn shuffle_items(&self, _config: &Self::Config) -> bool {
        false
    }

    /// How many batches one annotator may take (`None`: no limit).
    fn max_batches_per_annotator(&self, _config: &Self::Config) -> Option<i64> {
        None
    }

    /// Whether gold items are shared by every batch (sanity tasks).
    fn shares_gold_across_batches(&self, _config: &Self::Config) -> bool {
        false
    }

    /// Whether gold items may meet an annotator again in a later batch.
    fn gold_may_repeat(&self, _config: &Self::Config) -> bool {
        true
    }

    /// Whether the annotator (account name or worker id) may take a batch
    /// of this group.
    fn may_take(&self, _config: &Self::Config, _group: Option<&str>, _annotator: &str) -> bool {
        true
    }

    /// Background questions asked before a participant's first task.
    fn background(&self, _config: &Self::Config) -> Vec<BackgroundQuestion> {
        Vec::new()
    }

    /// Called when an annotator submits a batch, with each item answered
    /// (see [`TaskKind::on_submit`]).
    fn on_submit(&self, _config: &Self::Config, _answered: &[Answered<'_, Self::Answer>]) -> SubmitVerdict {
        SubmitVerdict::default()
    }

    // Aggregation.

    /// Whether a reviewer's answer replaces the answer under review.
    fn reviewed_answer_wins(&self, _config: &Self::Config) -> bool {
        false
    }

    /// Turns the campaign's responses into ground truth.
    fn aggregate(&self, config: &Self::Config, input: &AggregationInput) -> Self::GroundTruth;

    /// The same document as compact JSON text (see [`TaskKind::aggregate_json`]):
    /// by default its `Value`'s text (keys sorted), which is what releases
    /// and caches have always held.
    fn aggregate_json(&self, config: &Self::Config, input: AggregationInput) -> String {
        let aggregate = ground_truth_value::<Self>(&self.aggregate(config, &input));
        drop(input);
        crate::core::support::json_text::exact(&aggregate).unwrap_or_else(|_| aggregate.to_string())
    }

    /// Payload keys `aggregate` never reads, left out of its input.
    fn payload_keys_not_aggregated(&self) -> &'static [&'static str] {
        &[]
    }

    // Exports and releases (the ground truth as its compact JSON text).

    /// The ground truth as a table for CSV export.
    fn export_table(&self, aggregate: &[u8]) -> Table;

    /// The rows of [`Self::export_table`], header first, one at a time.
    fn export_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
        let table = self.export_table(aggregate);
        each(&table.header);
        table.rows.iter().for_each(|row| each(row));
    }

    /// The rows with results not yet final (`?partial=true`).
    fn export_partial_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
        self.export_rows(aggregate, each)
    }

    /// Files a release holds beyond the ground truth's JSON and CSV.
    fn release_files(
        &self,
        _snapshot: &crate::core::releases::Snapshot,
        _aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        Ok(Vec::new())
    }

    /// The tables a release publishes as Parquet, the ground truth first.
    fn release_tables(
        &self,
        _snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        Ok(vec![crate::core::releases::hf::ReleaseTable::text(
            "ground_truth",
            "The ground truth, one row per item (the release's `ground_truth.csv`).",
            self.export_table(aggregate),
        )])
    }

    /// The Hugging Face Hub's task categories for the kind's releases.
    fn hub_task_categories(&self) -> &'static [&'static str] {
        &["other"]
    }

    /// Parameters fixed in code that shape the ground truth.
    fn release_parameters(&self, _config: &Self::Config) -> Value {
        Value::Null
    }

    /// Each item's label in words, by external id.
    fn release_labels(&self, _aggregate: &[u8]) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    /// Images that show an item at a glance in the data browser.
    fn thumbnails(&self, _config: &Self::Config, payload: &Value) -> Vec<Thumbnail> {
        crate::core::item::thumbnails::in_payload(payload)
    }

    /// Markdown for a datasheet: what annotators were asked and the scale.
    fn datasheet_task(&self, _config: &Self::Config) -> String {
        format!("Annotators completed {} tasks.", self.title())
    }

    /// Markdown for a datasheet: the kind's quality control and agreement.
    fn datasheet_quality(&self, _aggregate: &[u8]) -> String {
        String::new()
    }
}

/// One item of a submitted batch, as [`TypedKind::on_submit`] sees it.
#[derive(Debug)]
pub struct Answered<'a, A> {
    /// The item's gold answer, if it is a check.
    pub gold: Option<&'a Value>,
    /// The item's payload.
    pub payload: &'a Value,
    /// The annotator's answer (`None` when the stored one no longer reads).
    pub answer: Option<A>,
}

/// The ground truth as a JSON document (`null` if it cannot be one: it is
/// made of serde's own types, so only a bug would get there).
fn ground_truth_value<K: TypedKind>(ground_truth: &K::GroundTruth) -> Value {
    serde_json::to_value(ground_truth).unwrap_or_else(|e| {
        tracing::error!(error = %e, "a ground truth is not a JSON document");
        Value::Null
    })
}

/// A stored answer read back into the kind's type.
fn stored_answer<K: TypedKind>(stored: &Value) -> Option<K::Answer> {
    K::Answer::deserialize(stored).ok()
}

impl<K: TypedKind> TaskKind for K {
    fn name(&self) -> &'static str {
        TypedKind::name(self)
    }
    fn title(&self) -> &'static str {
        TypedKind::title(self)
    }
    fn default_settings(&self) -> CoreSettings {
        TypedKind::default_settings(self)
    }
    fn validate_config(&self, config: &Value) -> Result<Value, Invalid> {
        let parsed = self.parse_config(config)?;
        serde_json::to_value(parsed).map_err(|e| Invalid(e.to_string()))
    }
    fn rules(&self, config: &Value) -> Result<std::sync::Arc<dyn CampaignRules>, Invalid> {
        Ok(std::sync::Arc::new(Configured::parse(self.clone(), config)?))
    }
    fn validate_item(&self, payload: &Value, gold: Option<&Value>) -> Result<(), Invalid> {
        TypedKind::validate_item(self, payload, gold)
    }
    fn validate_answer(&self, payload: &Value, answer: &Value) -> Result<Value, Invalid> {
        let parsed = TypedKind::validate_answer(self, payload, answer)?;
        serde_json::to_value(parsed).map_err(|e| Invalid(e.to_string()))
    }
    fn answer_reads_item(&self) -> bool {
        TypedKind::answer_reads_item(self)
    }
    fn presentation(&self, payload: &Value, rng: &mut StdRng) -> Value {
        TypedKind::presentation(self, payload, rng)
    }
    fn public_payload(&self, payload: &Value, presentation: &Value) -> Value {
        TypedKind::public_payload(self, payload, presentation)
    }
    fn export_table(&self, aggregate: &[u8]) -> Table {
        TypedKind::export_table(self, aggregate)
    }
    fn export_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
        TypedKind::export_rows(self, aggregate, each)
    }
    fn export_partial_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
        TypedKind::export_partial_rows(self, aggregate, each)
    }
    fn parse_import(&self, text: &str) -> Result<Vec<crate::core::item::new_item::NewItem>, Invalid> {
        TypedKind::parse_import(self, text)
    }
    fn merge_item(&self, existing: &Value, incoming: &Value) -> Option<Result<Value, Invalid>> {
        TypedKind::merge_item(self, existing, incoming)
    }
    fn imports_on_own_page(&self) -> bool {
        TypedKind::imports_on_own_page(self)
    }
    fn import_hint(&self) -> &'static str {
        TypedKind::import_hint(self)
    }
    fn settings_help(&self) -> &'static [SettingHelp] {
        TypedKind::settings_help(self)
    }
    fn check_passed(&self, payload: &Value, gold: Option<&Value>, answer: &Value) -> Option<bool> {
        TypedKind::check_passed(self, payload, gold, stored_answer::<K>(answer).as_ref())
    }
    fn adaptive_vote(&self, payload: &Value, answer: &Value) -> Option<crate::stats::adaptive::Vote> {
        TypedKind::adaptive_vote(self, payload, &stored_answer::<K>(answer)?)
    }
    fn adaptive_overlap(&self) -> bool {
        TypedKind::adaptive_overlap(self)
    }
    fn release_files(
        &self,
        snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        TypedKind::release_files(self, snapshot, aggregate)
    }
    fn release_tables(
        &self,
        snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        TypedKind::release_tables(self, snapshot, aggregate)
    }
    fn hub_task_categories(&self) -> &'static [&'static str] {
        TypedKind::hub_task_categories(self)
    }
    fn release_labels(&self, aggregate: &[u8]) -> BTreeMap<String, String> {
        TypedKind::release_labels(self, aggregate)
    }
    fn answer_flags(&self) -> &'static [&'static str] {
        TypedKind::answer_flags(self)
    }
    fn datasheet_quality(&self, aggregate: &[u8]) -> String {
        TypedKind::datasheet_quality(self, aggregate)
    }
    fn payload_keys_not_aggregated(&self) -> &'static [&'static str] {
        TypedKind::payload_keys_not_aggregated(self)
    }
    fn demo(&self) -> Option<DemoCampaign> {
        TypedKind::demo(self)
    }
}

/// Kind `K` with one campaign's parsed configuration.
pub struct Configured<K: TypedKind> {
    kind: K,
    config: K::Config,
}

impl<K: TypedKind> Configured<K> {
    /// Parses `config` for `kind`; a refusal names the setting.
    pub fn parse(kind: K, config: &Value) -> Result<Self, Invalid> {
        let config = kind.parse_config(config)?;
        Ok(Self { kind, config })
    }
}

/// The configuration inside rules, as the kind's type `C`; `None` when the
/// rules are another kind's (whose configuration is another type).
pub fn config_of<C: Any>(rules: &dyn CampaignRules) -> Option<&C> {
    rules.config_any().downcast_ref::<C>()
}

impl<K: TypedKind> CampaignRules for Configured<K> {
    fn form_batches(&self, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid> {
        self.kind.form_batches(&self.config, items, rng)
    }
    fn shuffle_items(&self) -> bool {
        self.kind.shuffle_items(&self.config)
    }
    fn max_batches_per_annotator(&self) -> Option<i64> {
        self.kind.max_batches_per_annotator(&self.config)
    }
    fn shares_gold_across_batches(&self) -> bool {
        self.kind.shares_gold_across_batches(&self.config)
    }
    fn gold_may_repeat(&self) -> bool {
        self.kind.gold_may_repeat(&self.config)
    }
    fn may_take(&self, group: Option<&str>, annotator: &str) -> bool {
        self.kind.may_take(&self.config, group, annotator)
    }
    fn background(&self) -> Vec<BackgroundQuestion> {
        self.kind.background(&self.config)
    }
    fn on_submit(&self, answered: &[(Option<Value>, Value, Value)]) -> SubmitVerdict {
        let answered: Vec<Answered<'_, K::Answer>> = answered
            .iter()
            .map(|(gold, payload, stored)| Answered {
                gold: gold.as_ref(),
                payload,
                answer: K::Answer::deserialize(stored).ok(),
            })
            .collect();
        self.kind.on_submit(&self.config, &answered)
    }
    fn reviewed_answer_wins(&self) -> bool {
        self.kind.reviewed_answer_wins(&self.config)
    }
    fn aggregate_json(&self, input: AggregationInput) -> String {
        self.kind.aggregate_json(&self.config, input)
    }
    fn release_parameters(&self) -> Value {
        self.kind.release_parameters(&self.config)
    }
    fn thumbnails(&self, payload: &Value) -> Vec<Thumbnail> {
        self.kind.thumbnails(&self.config, payload)
    }
    fn datasheet_task(&self) -> String {
        self.kind.datasheet_task(&self.config)
    }
    fn config_any(&self) -> &(dyn Any + Send + Sync) {
        &self.config
    }
}
