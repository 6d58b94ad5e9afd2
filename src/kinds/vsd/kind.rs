//! How VSD plugs into the core: the kind's unit struct and its
//! [`TypedKind`](crate::core::TypedKind) implementation.

use super::config::{answer_of, Answer, Label, VsdAnswer, VsdConfig, NAME};
use super::{demo, eds, hub, pool, result, scoring};
use crate::core::campaign::setting_help::SettingHelp;
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use crate::core::kind::contract::{AggregationInput, BatchPlan, Invalid, ItemRef, Table};
use crate::core::TypedKind;
use rand::rngs::StdRng;
use serde_json::{json, Value};

/// The VSD kind.
#[derive(Debug, Clone, Copy)]
pub struct Vsd;

/// A "broken" answer with its reason (by default "broken").
fn broken(answer: &Value) -> Result<VsdAnswer, Invalid> {
    let reason = answer.get("reason").and_then(Value::as_str).unwrap_or("").trim();
    if reason.chars().count() > 500 {
        return Err(Invalid("reason: at most 500 characters".into()));
    }
    let reason = if reason.is_empty() { "broken" } else { reason };
    Ok(VsdAnswer { label: Label::Broken, reason: Some(reason.to_owned()) })
}

impl TypedKind for Vsd {
    type Config = VsdConfig;
    type Answer = VsdAnswer;
    type GroundTruth = result::VsdResult;

    fn name(&self) -> &'static str {
        NAME
    }

    fn title(&self) -> &'static str {
        "VSD suspect pairs (EDS)"
    }

    fn default_settings(&self) -> CoreSettings {
        // Every expert labels every pair, and may stop and resume any time.
        CoreSettings::of(
            Participants::Experts,
            crate::core::campaign::campaigns::DEFAULT_LEASE_MINUTES,
            AnnotatorsPerBatch::Every,
            false,
        )
    }

    fn parse_config(&self, config: &Value) -> Result<VsdConfig, Invalid> {
        VsdConfig::parse(config)
    }

    fn validate_item(&self, payload: &Value, _gold: Option<&Value>) -> Result<(), Invalid> {
        for field in ["query", "candidate"] {
            if payload.get(field).and_then(Value::as_str).is_none_or(|s| s.trim().is_empty()) {
                return Err(Invalid(format!("payload.{field} must be an image id")));
            }
        }
        if payload["query"] == payload["candidate"] {
            return Err(Invalid("a pair needs two different images".into()));
        }
        Ok(())
    }

    fn answer_reads_item(&self) -> bool {
        false
    }

    fn validate_answer(&self, _payload: &Value, answer: &Value) -> Result<VsdAnswer, Invalid> {
        let invalid = || Invalid("answer must be {\"label\": \"1\", \"0\", \"unsure\" or \"broken\"}".into());
        let label = match answer_of(answer).ok_or_else(invalid)? {
            Answer::Vote(eds::Vote::Similar) => Label::Similar,
            Answer::Vote(eds::Vote::NotSimilar) => Label::NotSimilar,
            Answer::Vote(eds::Vote::Unsure) => Label::Unsure,
            Answer::Broken => return broken(answer),
        };
        Ok(VsdAnswer { label, reason: None })
    }

    fn form_batches(&self, config: &VsdConfig, items: &[ItemRef], rng: &mut StdRng) -> Result<Vec<BatchPlan>, Invalid> {
        Ok(pool::batches_by_query(items, config.pairs_per_batch, rng))
    }

    fn shuffle_items(&self, _config: &VsdConfig) -> bool {
        // Batches hold one query's pairs: each expert sees them in their own order.
        true
    }

    fn public_payload(&self, payload: &Value, _presentation: &Value) -> Value {
        // The images only: never which model proposed the pair (or its rank),
        // nor the ids, which may name the product.
        json!({ "query_image": payload["query_image"], "candidate_image": payload["candidate_image"] })
    }

    fn release_tables(
        &self,
        _snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        hub::tables(aggregate)
    }

    fn hub_task_categories(&self) -> &'static [&'static str] {
        &["image-feature-extraction"]
    }

    fn release_files(
        &self,
        snapshot: &crate::core::releases::Snapshot,
        aggregate: &[u8],
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        let gt = result::VsdResult::from_json(aggregate).map_err(|e| Invalid(e.to_string()))?;
        let mut files = result::release_files(&gt).map_err(|e| Invalid(e.to_string()))?;
        if !snapshot.model_scores.is_empty() {
            let config = VsdConfig::parse(&snapshot.kind_config())?;
            let same_product = config
                .same_product
                .as_deref()
                .map(crate::stats::retrieval::product_pattern)
                .transpose()
                .map_err(Invalid)?;
            let models: Vec<(String, Value)> =
                snapshot.model_scores.iter().map(|m| (m.model.clone(), m.scores.clone())).collect();
            let report = scoring::release_report(&gt, &models, same_product.as_ref());
            let mut text = serde_json::to_vec_pretty(&report).map_err(|e| Invalid(e.to_string()))?;
            text.push(b'\n');
            files.push(("vsd_model_scores.json".to_owned(), text));
        }
        Ok(files)
    }

    fn aggregate(&self, config: &VsdConfig, input: &AggregationInput) -> result::VsdResult {
        result::aggregate(config, input)
    }

    fn export_table(&self, aggregate: &[u8]) -> Table {
        result::table(aggregate, false)
    }

    fn export_partial_rows(&self, aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
        let table = result::table(aggregate, true);
        each(&table.header);
        table.rows.iter().for_each(|row| each(row));
    }

    fn merge_item(&self, existing: &Value, incoming: &Value) -> Option<Result<Value, Invalid>> {
        // A model's proposals added later join the pair's provenance.
        Some(Ok(pool::merge_provenance(existing, incoming)))
    }

    fn parse_import(&self, text: &str) -> Result<Vec<crate::core::item::new_item::NewItem>, Invalid> {
        Err(Invalid(format!(
            "VSD campaigns are built from model rankings: import them on the VSD page ({} characters received)",
            text.len()
        )))
    }

    fn imports_on_own_page(&self) -> bool {
        true
    }

    fn import_hint(&self) -> &'static str {
        "model rankings, on the VSD page (CSV model,query,candidate,rank[,score] or JSON lines)"
    }

    fn settings_help(&self) -> &'static [SettingHelp] {
        const HELP: &[SettingHelp] = &[
            SettingHelp::new(
                "k",
                "Candidates per model and query",
                "each model's top k candidates per query become suspects (the paper: 6)",
            )
            .unit("candidates")
            .source("VSD paper, §3 and §5 (|M| = 6 models, k = 6)"),
            SettingHelp::new(
                "same_product",
                "Same-product pattern",
                "regex with one capture group extracting the product id: same-product pairs are left out",
            ),
            SettingHelp::new(
                "image_base_url",
                "Image address prefix",
                "prefix turning an image id into its address (ids that are addresses stay)",
            ),
            SettingHelp::new("pairs_per_batch", "Pairs per batch", "one query's pairs stay together").unit("pairs"),
            SettingHelp::new("queries", "Queries |Q|", "|Q| for the estimates (default: the suspects' queries)")
                .unit("queries"),
            SettingHelp::new("catalog", "Catalog size |D|", "the catalog's size, for the estimates").unit("images"),
            SettingHelp::new(
                "wild",
                "Queries from outside the catalog",
                "queries are not catalog images: |A| = |Q| x |D| instead of |Q| x (|D| - 1)",
            ),
        ];
        HELP
    }

    fn datasheet_task(&self, config: &VsdConfig) -> String {
        let k = config.k;
        format!(
            "Several retrieval models each proposed their top {k} catalog images per query; the union of the \
             proposals, unordered and deduplicated, was shown pair by pair to every expert, who labelled it similar, \
             not similar or unsure (keys y/n/u) without seeing which model proposed it. The label is the majority of \
             the similar / not-similar votes, ties negative; pairs with only unsure votes have no label."
        )
    }

    fn thumbnails(&self, config: &VsdConfig, payload: &Value) -> Vec<crate::core::item::thumbnails::Thumbnail> {
        ["query", "candidate"]
            .into_iter()
            .filter_map(|role| {
                let id = payload[role].as_str()?;
                Some(crate::core::item::thumbnails::Thumbnail {
                    url: config.image_url(id),
                    label: format!("{role} {id}"),
                })
            })
            .collect()
    }

    fn answer_flags(&self) -> &'static [&'static str] {
        &[r#"{"label": "broken"}"#]
    }

    fn release_labels(&self, aggregate: &[u8]) -> std::collections::BTreeMap<String, String> {
        result::VsdResult::from_json(aggregate)
            .map(|r| {
                r.pairs
                    .iter()
                    .filter_map(|p| Some((format!("{} | {}", p.query, p.candidate), p.label?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }

    fn demo(&self) -> Option<crate::core::kind::contract::DemoCampaign> {
        Some(demo::campaign())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kind::contract::TaskKind;

    #[test]
    fn answers_are_judged_without_their_item_as_the_kind_says() {
        assert!(!TaskKind::answer_reads_item(&Vsd));
        let item = json!({"query": "/q.jpg", "candidate": "/c.jpg", "models": {"m": 1}});
        let long = "x".repeat(501);
        for answer in [
            json!({"label": "1"}),
            json!({"label": "0"}),
            json!({"label": "unsure"}),
            json!({"label": "broken", "reason": "blank"}),
            json!({"label": "broken", "reason": long}),
            json!({"label": "2"}),
            json!(null),
        ] {
            let alone = TaskKind::validate_answer(&Vsd, &Value::Null, &answer).map_err(|e| e.0);
            assert_eq!(alone, TaskKind::validate_answer(&Vsd, &item, &answer).map_err(|e| e.0), "{answer}");
        }
        assert_eq!(
            TaskKind::validate_answer(&Vsd, &Value::Null, &json!({"label": "1"})).map_err(|e| e.0),
            Ok(json!({"label": "1"}))
        );
    }
}
