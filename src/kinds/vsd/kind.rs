//! How VSD plugs into the core: the kind's unit struct and its
//! [`TypedKind`](crate::core::TypedKind) implementation.

use super::config::{Label, VsdAnswer, VsdConfig, NAME};
use super::pair::{ShownPair, VsdPair};
use super::{demo, hub, pool, result, scoring};
use crate::core::campaign::setting_help::SettingHelp;
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use crate::core::kind::contract::{About, BatchPlan, BatchPolicy, Import, Invalid, ItemRef, Policy};
use crate::core::kind::ground_truth_text::GroundTruthText;
use crate::core::kind::typed::AggregationInput;
use crate::core::TypedKind;
use rand::rngs::StdRng;
use result::VsdResult;
use serde_json::Value;

/// Each VSD setting in words.
const SETTINGS_HELP: &[SettingHelp] = &[
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

/// What VSD is.
static ABOUT: About = About {
    settings_help: SETTINGS_HELP,
    import: Import::OwnPage {
        hint: "model rankings, on the VSD page (CSV model,query,candidate,rank[,score] or JSON lines)",
    },
    answer_format: r#"{"label": "1", "0", "unsure" or "broken"}"#,
    // Labels are valid or not whatever the pair.
    answer_reads_item: false,
    answer_flags: &[r#"{"label": "broken"}"#],
    hub_task_categories: &["image-feature-extraction"],
    // One query's pairs are batched together.
    payload_keys_batched: Some(&["query"]),
    demo: Some(demo::campaign),
    // Every expert labels every pair, and may stop and resume any time.
    ..About::new(
        NAME,
        "VSD suspect pairs (EDS)",
        CoreSettings::of(
            Participants::Experts,
            crate::core::campaign::campaigns::DEFAULT_LEASE_MINUTES,
            AnnotatorsPerBatch::Every,
            false,
        ),
    )
};

/// What the task asked, for a release's datasheet.
fn datasheet_task(config: &VsdConfig) -> String {
    let k = config.k;
    format!(
        "Several retrieval models each proposed their top {k} catalog images per query; the union of the \
             proposals, unordered and deduplicated, was shown pair by pair to every expert, who labelled it similar, \
             not similar or unsure (keys y/n/u) without seeing which model proposed it. The label is the majority of \
             the similar / not-similar votes, ties negative; pairs with only unsure votes have no label."
    )
}

/// The VSD kind.
#[derive(Debug, Clone, Copy)]
pub struct Vsd;

/// A "broken" answer with its reason (by default "broken").
fn broken(reason: Option<&str>) -> Result<VsdAnswer, Invalid> {
    let reason = reason.unwrap_or("").trim();
    if reason.chars().count() > 500 {
        return Err(Invalid("reason: at most 500 characters".into()));
    }
    let reason = if reason.is_empty() { "broken" } else { reason };
    Ok(VsdAnswer { label: Label::Broken, reason: Some(reason.to_owned()) })
}

impl TypedKind for Vsd {
    type Config = VsdConfig;
    type Payload = VsdPair;
    type Gold = serde::de::IgnoredAny;
    type Batched = pool::QueryOf;
    type Presentation = ();
    type Answer = VsdAnswer;
    type GroundTruth = VsdResult;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn validate_item(&self, pair: &VsdPair, _gold: Option<&serde::de::IgnoredAny>) -> Result<(), Invalid> {
        for (field, id) in [("query", &pair.query), ("candidate", &pair.candidate)] {
            if id.trim().is_empty() {
                return Err(Invalid(format!("payload.{field} must be an image id")));
            }
        }
        if pair.query == pair.candidate {
            return Err(Invalid("a pair needs two different images".into()));
        }
        Ok(())
    }

    fn validate_answer(&self, _pair: Option<&VsdPair>, answer: VsdAnswer) -> Result<VsdAnswer, Invalid> {
        match answer.label {
            Label::Broken => broken(answer.reason.as_deref()),
            label => Ok(VsdAnswer { label, reason: None }),
        }
    }

    fn policy(&self, config: &VsdConfig) -> Result<Policy, Invalid> {
        config.check()?;
        Ok(Policy {
            // Batches hold one query's pairs: each expert sees them in their own order.
            batches: BatchPolicy { shuffle_items: true, ..BatchPolicy::default() },
            datasheet_task: datasheet_task(config),
            ..Policy::plain(ABOUT.title)
        })
    }

    fn form_batches(
        &self,
        config: &VsdConfig,
        items: &[ItemRef<pool::QueryOf>],
        rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid> {
        Ok(pool::batches_by_query(items, config.pairs_per_batch, rng))
    }

    fn public_payload(&self, pair: VsdPair, _presentation: &()) -> impl serde::Serialize {
        ShownPair { query_image: pair.query_image, candidate_image: pair.candidate_image }
    }

    fn merge_item(&self, existing: VsdPair, incoming: VsdPair) -> Option<VsdPair> {
        // A model's proposals added later join the pair's provenance.
        Some(existing.merged(&incoming))
    }

    fn export(&self, gt: GroundTruthText<'_, VsdResult>, partial: bool, each: &mut dyn FnMut(&[String])) {
        result::table(gt.text(), partial).each(each)
    }

    fn release_tables(
        &self,
        gt: GroundTruthText<'_, VsdResult>,
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        hub::tables(gt.text())
    }

    fn release_files(
        &self,
        config: &VsdConfig,
        snapshot: &crate::core::releases::Snapshot,
        gt: GroundTruthText<'_, VsdResult>,
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        let gt = gt.read().map_err(|e| Invalid(format!("the ground truth does not read: {e}")))?;
        let mut files = result::release_files(&gt).map_err(|e| Invalid(e.to_string()))?;
        if !snapshot.model_scores.is_empty() {
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

    fn aggregate(&self, config: &VsdConfig, input: &AggregationInput<Self>) -> VsdResult {
        result::aggregate(config, input)
    }

    fn release_labels(&self, gt: GroundTruthText<'_, VsdResult>) -> std::collections::BTreeMap<String, String> {
        gt.read()
            .map(|r| {
                r.pairs
                    .iter()
                    .filter_map(|p| Some((format!("{} | {}", p.query, p.candidate), p.label?.to_string())))
                    .collect()
            })
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kind::contract::TaskKind;
    use serde_json::json;

    #[test]
    fn answers_are_judged_without_their_item_as_the_kind_says() {
        assert!(!TaskKind::about(&Vsd).answer_reads_item);
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
            let alone = TaskKind::validate_answer(&Vsd, None, &answer).map_err(|e| e.0);
            assert_eq!(alone, TaskKind::validate_answer(&Vsd, Some(&item), &answer).map_err(|e| e.0), "{answer}");
        }
        assert_eq!(
            TaskKind::validate_answer(&Vsd, None, &json!({"label": "1"})).map_err(|e| e.0),
            Ok(json!({"label": "1"}))
        );
    }

    #[test]
    fn labels_are_read_as_clients_send_them_and_stored_in_one_form() {
        let stored = |answer| TaskKind::validate_answer(&Vsd, None, &answer).map_err(|e| e.0);
        assert_eq!(stored(json!({"label": 1})), Ok(json!({"label": "1"})));
        assert_eq!(stored(json!({"label": 0, "reason": "ignored"})), Ok(json!({"label": "0"})));
        assert_eq!(stored(json!({"label": " Unsure "})), Ok(json!({"label": "unsure"})));
        assert_eq!(stored(json!({"label": "broken"})), Ok(json!({"label": "broken", "reason": "broken"})));
        let refused = stored(json!({"label": "maybe"})).expect_err("not a label");
        assert!(refused.starts_with(r#"answer must be {"label": "1", "0", "unsure" or "broken"}"#), "{refused}");
        assert!(refused.contains("`maybe` is not a label"), "{refused}");
    }
}
