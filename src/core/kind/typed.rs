//! The trait a task kind implements, typed: its configuration is parsed
//! once per campaign version into the kind's own `Config`, its items into
//! its `Payload` and `Gold` (checked when imported), its answers into its
//! `Answer`, its ground truth is its `GroundTruth`. [`TaskKind`]
//! is its object-safe face for the registry: every `TypedKind` is a
//! `TaskKind` through the blanket implementation below (atuin's `Database`
//! and `DynDatabase` are the pattern), and the configuration-dependent hooks
//! are reached through [`CampaignRules`], the kind bound to one parsed
//! configuration ([`Configured`]).
//!
//! Seventeen hooks in five groups: what the kind is (one constant value,
//! [`About`]); items and answers; batches (one value per configuration,
//! [`Policy`], and the formation); aggregation; exports and releases. Four
//! are required; the rest have defaults. The core reads configurations,
//! payloads, gold and answers into the kind's types (serde) before calling
//! a hook, and refuses what does not read, naming the field; the
//! aggregation receives [`AggregationInput`] of the kind's types (its
//! payloads stay text until read, for memory's sake:
//! [`Payload::read`](crate::core::item::payload::Payload::read)), and batch
//! formation the kind's `Batched`, read from the payload keys it names.

use crate::core::kind::contract::{
    About, BatchPlan, CampaignRules, Invalid, ItemRecord, ItemRef, Judgement, Policy, Records, ResponseRecord,
    StoredInput, SubmitVerdict, Table, TaskKind,
};
use crate::core::kind::ground_truth_text::GroundTruthText;
use rand::rngs::StdRng;
use serde::de::DeserializeOwned;
use serde::Deserialize;
use serde_json::Value;
use std::any::Any;
use std::collections::BTreeMap;

/// A task kind with typed configuration, answers and ground truth.
pub trait TypedKind: Clone + Send + Sync + 'static {
    /// The kind's campaign configuration, every field with a default (the
    /// `Default` is what an empty configuration reads as). Read once per
    /// campaign version ([`Configured`]); a refusal names the setting's
    /// path; [`TypedKind::policy`] checks what its types cannot.
    type Config: serde::Serialize + DeserializeOwned + Default + Send + Sync + 'static;

    /// An item's payload as the kind reads it: checked against this type
    /// when imported (a payload that does not read is refused, naming the
    /// field), read back into it for every hook. The store keeps the JSON as
    /// imported, so fields the kind does not read (a VTON try-on's model,
    /// read by the aggregation) stay with the item.
    type Payload: serde::Serialize + DeserializeOwned;

    /// An item's gold answer (a sanity or attention check), as the kind
    /// reads it; `serde::de::IgnoredAny` for a kind without checks.
    type Gold: DeserializeOwned;

    /// What batch formation reads of an item's payload: the keys
    /// [`About::payload_keys_batched`] names, read into this type;
    /// `serde::de::IgnoredAny` for a kind whose formation reads none.
    type Batched: DeserializeOwned;

    /// What varies per annotator in how an item is shown (a choice order),
    /// stored with the assignment so analysis can undo it; `()` when nothing
    /// varies.
    type Presentation: serde::Serialize + DeserializeOwned + Default;

    /// An answer as the kind stores it: what an annotator sent is read into
    /// it (a refusal says [`About::answer_format`]) and checked by
    /// `validate_answer`; stored answers are read back into it. Its JSON
    /// form is the API's answer format and what exports write.
    type Answer: serde::Serialize + DeserializeOwned;

    /// The campaign's ground truth as the kind computes it from the
    /// answers. The core keeps and hands on its compact JSON text (cached,
    /// exported, released); the kind's exports and releases receive it as
    /// [`GroundTruthText`] of this type.
    type GroundTruth: serde::Serialize + DeserializeOwned;

    // What the kind is.

    /// What the kind is, one constant value (name, title, default settings,
    /// how items come in, what answers carry).
    fn about(&self) -> &'static About;

    // Items and answers.

    /// Checks an imported item beyond what its types hold (an image named
    /// twice, a question's outfit rules); the payload and gold have read.
    fn validate_item(&self, _payload: &Self::Payload, _gold: Option<&Self::Gold>) -> Result<(), Invalid> {
        Ok(())
    }

    /// Checks an answer as an annotator sent it (from the API or the task
    /// form, already read into the kind's type) against its item, and
    /// returns what is stored (trimmed, sorted). The item is `None` for
    /// kinds whose [`About::answer_reads_item`] is false.
    fn validate_answer(&self, _payload: Option<&Self::Payload>, answer: Self::Answer) -> Result<Self::Answer, Invalid> {
        Ok(answer)
    }

    /// What a stored answer says (`None` when it no longer reads): whether
    /// it passed a quality check, its vote under an adaptive overlap.
    fn judge(&self, _payload: &Self::Payload, _gold: Option<&Self::Gold>, _answer: Option<&Self::Answer>) -> Judgement {
        Judgement::default()
    }

    /// How this annotator is shown the item (e.g. a choice order).
    fn presentation(&self, _payload: &Self::Payload, _rng: &mut StdRng) -> Self::Presentation {
        Self::Presentation::default()
    }

    /// The item as this annotator sees it, given their presentation:
    /// never a gold answer or anything that marks a check.
    fn public_payload(&self, payload: Self::Payload, _presentation: &Self::Presentation) -> impl serde::Serialize {
        payload
    }

    /// An imported item whose external id exists already: the merged
    /// payload, or `None` to refuse the import (the default). A kind whose
    /// items grow (VSD pairs gaining another model's proposals) merges.
    fn merge_item(&self, _existing: Self::Payload, _incoming: Self::Payload) -> Option<Self::Payload> {
        None
    }

    // Batches: how they are formed and handed out.

    /// Checks what the configuration's types cannot (a range, two settings
    /// together; refusals name the setting) and says what it decides (batch
    /// hand-out, background questions, reviews, release parameters), once
    /// per campaign version.
    fn policy(&self, _config: &Self::Config) -> Result<Policy, Invalid> {
        Ok(Policy::plain(self.about().title))
    }

    /// Groups the campaign's items into batches.
    fn form_batches(
        &self,
        config: &Self::Config,
        items: &[ItemRef<Self::Batched>],
        rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid>;

    /// Called when an annotator submits a batch, with each item answered.
    fn on_submit(&self, _config: &Self::Config, _answered: &[Answered<Self>]) -> SubmitVerdict {
        SubmitVerdict::default()
    }

    // Aggregation.

    /// Turns the campaign's responses into ground truth.
    fn aggregate(&self, config: &Self::Config, input: &AggregationInput<Self>) -> Self::GroundTruth;

    /// The same document as compact JSON text: by default its `Value`'s text
    /// (keys sorted), which is what releases and caches have always held. A
    /// kind whose ground truth is large writes it straight from its type.
    fn aggregate_json(&self, config: &Self::Config, input: AggregationInput<Self>) -> String {
        let aggregate = ground_truth_value::<Self>(&self.aggregate(config, &input));
        drop(input);
        crate::core::support::json_text::exact(&aggregate).unwrap_or_else(|_| aggregate.to_string())
    }

    // Exports and releases.

    /// The ground truth as CSV rows, header first, one at a time (see
    /// [`TaskKind::export`]); [`Table::each`] hands over a built table.
    fn export(
        &self,
        ground_truth: GroundTruthText<'_, Self::GroundTruth>,
        partial: bool,
        each: &mut dyn FnMut(&[String]),
    );

    /// Files a release holds beyond the ground truth's JSON and CSV, given
    /// the campaign's configuration as released.
    fn release_files(
        &self,
        _config: &Self::Config,
        _snapshot: &crate::core::releases::Snapshot,
        _ground_truth: GroundTruthText<'_, Self::GroundTruth>,
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        Ok(Vec::new())
    }

    /// The tables a release publishes as Parquet, the ground truth first; by
    /// default the export with every column as text.
    fn release_tables(
        &self,
        ground_truth: GroundTruthText<'_, Self::GroundTruth>,
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        Ok(vec![crate::core::releases::hf::ReleaseTable::text(
            "ground_truth",
            "The ground truth, one row per item (the release's `ground_truth.csv`).",
            Table::collect(|each| self.export(ground_truth, false, each)),
        )])
    }

    /// Each item's label in words, by external id.
    fn release_labels(&self, _ground_truth: GroundTruthText<'_, Self::GroundTruth>) -> BTreeMap<String, String> {
        BTreeMap::new()
    }

    /// Markdown for a datasheet: the kind's quality control and agreement.
    fn datasheet_quality(&self, _ground_truth: GroundTruthText<'_, Self::GroundTruth>) -> String {
        String::new()
    }
}

/// What kind `K` aggregates: the campaign's items with their gold answers
/// read as `K::Gold`, and the responses that count with their answers read
/// as `K::Answer`.
pub type AggregationInput<K> = Records<<K as TypedKind>::Gold, <K as TypedKind>::Answer>;

impl StoredInput {
    /// The records read into kind `K`'s types. Gold answers and answers
    /// were checked against them when stored, so nothing is left out but
    /// what a changed kind no longer reads: an item whose gold answer does
    /// not read leaves with its responses (a sanity task is never counted
    /// as a rated item), an answer that does not read leaves alone; both
    /// are logged. Answers stay shared: each distinct stored answer is read
    /// once.
    pub fn typed<K: TypedKind>(self) -> AggregationInput<K> {
        let Records { items, responses, worker_ids, batch_names, participants, review } = self;
        let mut unreadable: std::collections::HashSet<uuid::Uuid> = std::collections::HashSet::new();
        let items: Vec<ItemRecord<K::Gold>> = items
            .into_iter()
            .filter_map(|i| match read_gold::<K>(i.gold.as_ref()) {
                Ok(gold) => Some(ItemRecord { id: i.id, external_id: i.external_id, payload: i.payload, gold }),
                Err(e) => {
                    tracing::error!(item = %i.id, error = %e.0, "a stored gold answer no longer reads; item left out");
                    unreadable.insert(i.id);
                    None
                }
            })
            .collect();
        // Keyed by the shared stored copy, which the map keeps alive (so its
        // address names it throughout): equal answers share one read.
        type Read<A> = (std::sync::Arc<Value>, Option<std::sync::Arc<A>>);
        let mut read: std::collections::HashMap<*const Value, Read<K::Answer>> = std::collections::HashMap::new();
        let mut unread = 0usize;
        // Same-sized records: collected into the stored list's own memory.
        let responses: Vec<ResponseRecord<K::Answer>> = responses
            .into_iter()
            .filter_map(|r| {
                if unreadable.contains(&r.item_id) {
                    return None;
                }
                let answer = read
                    .entry(std::sync::Arc::as_ptr(&r.answer))
                    .or_insert_with(|| (r.answer.clone(), stored_answer::<K>(&r.answer).map(std::sync::Arc::new)))
                    .1
                    .clone();
                let Some(answer) = answer else {
                    unread += 1;
                    return None;
                };
                Some(r.with_answer(answer))
            })
            .collect();
        if unread > 0 {
            tracing::error!(responses = unread, "stored answers no longer read; left out of the ground truth");
        }
        Records { items, responses, worker_ids, batch_names, participants, review }
    }
}

/// One item of a submitted batch, as [`TypedKind::on_submit`] of kind `K` sees it.
pub struct Answered<K: TypedKind> {
    /// The item's gold answer, if it is a check.
    pub gold: Option<K::Gold>,
    /// The item's payload.
    pub payload: K::Payload,
    /// The annotator's answer (`None` when the stored one no longer reads).
    pub answer: Option<K::Answer>,
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

/// A payload read into the kind's type; a refusal names the field.
fn read_payload<K: TypedKind>(payload: &Value) -> Result<K::Payload, Invalid> {
    K::Payload::deserialize(payload).map_err(|e| Invalid(format!("payload: {e}")))
}

/// A gold answer read into the kind's type; a refusal names the field.
fn read_gold<K: TypedKind>(gold: Option<&Value>) -> Result<Option<K::Gold>, Invalid> {
    gold.filter(|g| !g.is_null()).map(K::Gold::deserialize).transpose().map_err(|e| Invalid(format!("gold: {e}")))
}

/// A value the kind made as the JSON the core stores and sends.
fn json_of(value: impl serde::Serialize) -> Result<Value, Invalid> {
    serde_json::to_value(value).map_err(|e| Invalid(e.to_string()))
}

/// The stored ground truth text typed as kind `K`'s.
fn text<K: TypedKind>(aggregate: &[u8]) -> GroundTruthText<'_, K::GroundTruth> {
    GroundTruthText::new(aggregate)
}

/// The erased face: JSON values in and out, the ground truth as its text.
impl<K: TypedKind> TaskKind for K {
    fn about(&self) -> &'static About {
        TypedKind::about(self)
    }
    fn validate_config(&self, config: &Value) -> Result<Value, Invalid> {
        json_of(Configured::parse(self.clone(), config)?.config)
    }
    fn rules(&self, config: &Value) -> Result<std::sync::Arc<dyn CampaignRules>, Invalid> {
        Ok(std::sync::Arc::new(Configured::parse(self.clone(), config)?))
    }
    fn validate_item(&self, payload: &Value, gold: Option<&Value>) -> Result<(), Invalid> {
        let (payload, gold) = (read_payload::<K>(payload)?, read_gold::<K>(gold)?);
        TypedKind::validate_item(self, &payload, gold.as_ref())
    }
    fn validate_answer(&self, payload: Option<&Value>, answer: &Value) -> Result<Value, Invalid> {
        let payload = payload.map(read_payload::<K>).transpose()?;
        let answer = K::Answer::deserialize(answer)
            .map_err(|e| Invalid(format!("answer must be {}: {e}", self.about().answer_format)))?;
        json_of(TypedKind::validate_answer(self, payload.as_ref(), answer)?)
    }
    fn judge(&self, payload: &Value, gold: Option<&Value>, answer: &Value) -> Judgement {
        // An item or gold answer that no longer reads judges nothing.
        let (Ok(payload), Ok(gold)) = (read_payload::<K>(payload), read_gold::<K>(gold)) else {
            return Judgement::default();
        };
        TypedKind::judge(self, &payload, gold.as_ref(), stored_answer::<K>(answer).as_ref())
    }
    fn presentation(&self, payload: &Value, rng: &mut StdRng) -> Result<Value, Invalid> {
        json_of(TypedKind::presentation(self, &read_payload::<K>(payload)?, rng))
    }
    fn public_payload(&self, payload: &Value, presentation: &Value) -> Result<Value, Invalid> {
        let presentation = K::Presentation::deserialize(presentation).unwrap_or_default();
        json_of(TypedKind::public_payload(self, read_payload::<K>(payload)?, &presentation))
    }
    fn merge_item(&self, existing: &Value, incoming: &Value) -> Option<Result<Value, Invalid>> {
        let (existing, incoming) = match (read_payload::<K>(existing), read_payload::<K>(incoming)) {
            (Ok(existing), Ok(incoming)) => (existing, incoming),
            (Err(e), _) | (_, Err(e)) => return Some(Err(e)),
        };
        TypedKind::merge_item(self, existing, incoming).map(json_of)
    }
    fn export(&self, aggregate: &[u8], partial: bool, each: &mut dyn FnMut(&[String])) {
        TypedKind::export(self, text::<K>(aggregate), partial, each)
    }
    fn release_tables(&self, aggregate: &[u8]) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        TypedKind::release_tables(self, text::<K>(aggregate))
    }
    fn release_labels(&self, aggregate: &[u8]) -> BTreeMap<String, String> {
        TypedKind::release_labels(self, text::<K>(aggregate))
    }
    fn datasheet_quality(&self, aggregate: &[u8]) -> String {
        TypedKind::datasheet_quality(self, text::<K>(aggregate))
    }
}

/// Kind `K` with one campaign's parsed configuration and the policy it
/// decides.
pub struct Configured<K: TypedKind> {
    kind: K,
    config: K::Config,
    policy: Policy,
}

impl<K: TypedKind> Configured<K> {
    /// Reads `config` (`null` as `{}`) into the kind's type and checks it;
    /// a refusal names the setting.
    pub fn parse(kind: K, config: &Value) -> Result<Self, Invalid> {
        let config: K::Config = crate::core::campaign::config_text::parse(config)?;
        let policy = kind.policy(&config)?;
        Ok(Self { kind, config, policy })
    }
}

/// The configuration inside rules, as the kind's type `C`; `None` when the
/// rules are another kind's (whose configuration is another type).
pub fn config_of<C: Any>(rules: &dyn CampaignRules) -> Option<&C> {
    rules.config_any().downcast_ref::<C>()
}

impl<K: TypedKind> CampaignRules for Configured<K> {
    fn policy(&self) -> &Policy {
        &self.policy
    }
    fn form_batches(&self, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid> {
        // The keys were checked as part of the payload when imported: one
        // that no longer reads refuses the formation, naming the item.
        let items = items
            .iter()
            .map(|i| {
                let payload =
                    K::Batched::deserialize(&i.payload).map_err(|e| Invalid(format!("item {}: {e}", i.id)))?;
                Ok(ItemRef { id: i.id, payload, has_gold: i.has_gold })
            })
            .collect::<Result<Vec<ItemRef<K::Batched>>, Invalid>>()?;
        self.kind.form_batches(&self.config, &items, rng)
    }
    fn on_submit(&self, answered: &[(Option<Value>, Value, Value)]) -> SubmitVerdict {
        // Items that no longer read are left out of the verdict (and
        // logged): a submission is never refused for the store's sake.
        let answered: Vec<Answered<K>> = answered
            .iter()
            .filter_map(|(gold, payload, stored)| match (read_gold::<K>(gold.as_ref()), read_payload::<K>(payload)) {
                (Ok(gold), Ok(payload)) => Some(Answered { gold, payload, answer: stored_answer::<K>(stored) }),
                (Err(e), _) | (_, Err(e)) => {
                    tracing::warn!(error = %e.0, "a submitted item no longer reads");
                    None
                }
            })
            .collect();
        self.kind.on_submit(&self.config, &answered)
    }
    fn aggregate_json(&self, input: StoredInput) -> String {
        self.kind.aggregate_json(&self.config, input.typed::<K>())
    }
    fn release_files(
        &self,
        snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        self.kind.release_files(&self.config, snapshot, text::<K>(aggregate))
    }
    fn config_any(&self) -> &(dyn Any + Send + Sync) {
        &self.config
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
    use crate::core::kind::ground_truth_text::GroundTruthText;
    use serde_json::json;
    use std::sync::Arc;
    use uuid::Uuid;

    /// A kind whose gold and answers are numbers, batched by a group number.
    #[derive(Clone)]
    struct Numbers;

    /// The kind's (empty) settings.
    #[derive(serde::Serialize, serde::Deserialize, Default)]
    struct NoSettings {}

    /// What the kind's formation reads of a payload.
    #[derive(serde::Deserialize)]
    struct Group {
        group: u8,
    }

    static ABOUT: About = About::new(
        "numbers",
        "Numbers",
        CoreSettings::of(Participants::Experts, 60, AnnotatorsPerBatch::AsPlanned, false),
    );

    impl TypedKind for Numbers {
        type Config = NoSettings;
        type Payload = Value;
        type Gold = u8;
        type Batched = Group;
        type Presentation = ();
        type Answer = u8;
        type GroundTruth = Vec<u8>;
        fn about(&self) -> &'static About {
            &ABOUT
        }
        fn form_batches(
            &self,
            _: &NoSettings,
            items: &[ItemRef<Group>],
            _: &mut StdRng,
        ) -> Result<Vec<BatchPlan>, Invalid> {
            // One batch per group, in the order the groups come.
            let mut plans: Vec<BatchPlan> = Vec::new();
            for i in items {
                match plans.iter_mut().find(|p| p.group.as_deref() == Some(&i.payload.group.to_string())) {
                    Some(plan) => plan.items.push(i.id),
                    None => plans.push(BatchPlan {
                        items: vec![i.id],
                        overlap: None,
                        group: Some(i.payload.group.to_string()),
                    }),
                }
            }
            Ok(plans)
        }
        fn aggregate(&self, _: &NoSettings, input: &AggregationInput<Self>) -> Vec<u8> {
            input.responses.iter().map(|r| *r.answer).collect()
        }
        fn export(&self, _: GroundTruthText<'_, Vec<u8>>, _: bool, _: &mut dyn FnMut(&[String])) {}
    }

    fn item(gold: Option<Value>) -> ItemRecord {
        ItemRecord { id: Uuid::new_v4(), external_id: "i".into(), payload: json!({}).into(), gold }
    }

    fn response(item: &ItemRecord, answer: &Arc<Value>) -> ResponseRecord {
        ResponseRecord {
            assignment_id: Uuid::new_v4(),
            reviews: None,
            batch_id: Uuid::new_v4(),
            item_id: item.id,
            annotator_id: Uuid::new_v4(),
            answer: answer.clone(),
            submitted: true,
            position: None,
        }
    }

    #[test]
    fn stored_records_read_into_the_kinds_types_sharing_equal_answers() {
        let (two, three, word) = (Arc::new(json!(2)), Arc::new(json!(3)), Arc::new(json!("three")));
        let (plain, checked, broken) = (item(None), item(Some(json!(1))), item(Some(json!("one"))));
        let responses = vec![
            response(&plain, &two),
            response(&plain, &two),
            response(&checked, &three),
            response(&plain, &word),
            response(&broken, &two),
        ];
        let stored = StoredInput {
            items: vec![plain.clone(), checked.clone(), broken],
            responses,
            worker_ids: Default::default(),
            batch_names: Default::default(),
            participants: Default::default(),
            review: false,
        };
        let typed = stored.typed::<Numbers>();
        // The item whose gold does not read leaves with its response; the
        // answer that does not read leaves alone.
        assert_eq!(
            typed.items.iter().map(|i| (i.id, i.gold)).collect::<Vec<_>>(),
            [(plain.id, None), (checked.id, Some(1))]
        );
        assert_eq!(Numbers.aggregate(&NoSettings {}, &typed), [2, 2, 3]);
        assert!(Arc::ptr_eq(&typed.responses[0].answer, &typed.responses[1].answer), "equal answers stay shared");
    }

    #[test]
    fn formation_reads_the_kinds_batched_keys_and_names_an_item_that_does_not_read() {
        let rules = Configured::parse(Numbers, &Value::Null).expect("no configuration");
        let item = |group: Value| ItemRef { id: Uuid::new_v4(), payload: json!({ "group": group }), has_gold: false };
        let items = [item(json!(1)), item(json!(2)), item(json!(1))];
        let mut rng = <StdRng as rand::SeedableRng>::seed_from_u64(1);
        let plans = CampaignRules::form_batches(&rules, &items, &mut rng).expect("formed");
        assert_eq!(plans.iter().map(|p| p.items.len()).collect::<Vec<_>>(), [2, 1]);
        let odd = item(json!("one"));
        let refusal =
            CampaignRules::form_batches(&rules, std::slice::from_ref(&odd), &mut rng).expect_err("does not read");
        assert!(refusal.0.contains(&odd.id.to_string()), "{}", refusal.0);
    }
}
