//! How Fashionpedia plugs into the core: the kind's unit struct and its
//! [`TypedKind`](crate::core::TypedKind) implementation.

use super::config::{Answer, FpConfig, NAME};
use super::item::FpItem;
use super::{demo, export, hub, masks, result};
use crate::core::campaign::setting_help::{Editor, SettingHelp};
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use crate::core::kind::contract::{About, BatchPlan, BatchPolicy, Import, Invalid, ItemRef, Policy};
use crate::core::kind::ground_truth_text::GroundTruthText;
use crate::core::kind::typed::AggregationInput;
use crate::core::TypedKind;
use rand::rngs::StdRng;
use result::FpResult;
use std::collections::BTreeMap;

/// Each Fashionpedia setting in words.
const SETTINGS_HELP: &[SettingHelp] = &[
    SettingHelp::new(
        "applies",
        "Attribute groups per category",
        "category name -> attribute super-categories asked for its masks (null: the paper's default)",
    )
    .source("Fashionpedia paper, the ontology's category-attribute links"),
    SettingHelp::new("masks_per_batch", "Masks per batch", "a batch holds one super-category").unit("masks"),
    SettingHelp::new("image_base_url", "Image address prefix", "prefix turning an image's file_name into its address"),
    SettingHelp::new(
        "experts",
        "Experts per super-category",
        "super-category -> expert account names who annotate it (others: any expert)",
    )
    .editor(Editor::NamesPerKey),
    SettingHelp::new(
        "df2_categories",
        "DeepFashion2 categories",
        "DeepFashion2 category -> ontology category, over the obvious name matches",
    ),
    SettingHelp::new(
        "attribute_names",
        "Attribute names",
        "attribute id -> name, written from the ontology when it is imported",
    ),
];

/// What Fashionpedia is.
static ABOUT: About = About {
    settings_help: SETTINGS_HELP,
    import: Import::OwnPage { hint: "the ontology, then COCO JSON with images and masks, on the Fashionpedia page" },
    answer_format: r#"{"attributes": [ids], "not_sure", "not_on_list", "missing"}"#,
    answer_flags: &[r#"{"not_sure": true}"#, r#"{"not_on_list": true}"#],
    // The choices' names come from the configuration, their ids from `option_ids`.
    payload_keys_not_aggregated: &[
        "segmentation",
        "bbox",
        "area",
        "iscrowd",
        "attribute_ids",
        "image_url",
        "width",
        "height",
        "options",
    ],
    hub_task_categories: &["image-classification"],
    // One super-category per batch.
    payload_keys_batched: Some(&["supercategory"]),
    demo: Some(demo::campaign),
    // One expert annotates each task, a second reviews it.
    ..About::new(
        NAME,
        "Fashionpedia attributes",
        CoreSettings::of(Participants::Experts, 240, AnnotatorsPerBatch::Exactly(1), true),
    )
};

/// The Fashionpedia kind.
#[derive(Debug, Clone, Copy)]
pub struct Fashionpedia;

/// What batch formation reads of a task: its super-category.
#[derive(Debug, serde::Deserialize)]
pub struct Supercategory {
    /// The super-category whose attributes the task offers.
    #[serde(default)]
    pub supercategory: String,
}

impl TypedKind for Fashionpedia {
    type Config = FpConfig;
    type Payload = FpItem;
    type Gold = serde::de::IgnoredAny;
    type Batched = Supercategory;
    type Presentation = ();
    type Answer = Answer;
    type GroundTruth = FpResult;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn validate_item(&self, item: &FpItem, _gold: Option<&serde::de::IgnoredAny>) -> Result<(), Invalid> {
        let task = &item.task;
        if task.options.is_empty() {
            return Err(Invalid("payload.options: no attribute to choose from".into()));
        }
        masks::Mask::parse(&task.segmentation, task.width, task.height)
            .map_err(|e| Invalid(format!("segmentation: {e}")))?;
        Ok(())
    }

    fn validate_answer(&self, item: Option<&FpItem>, mut a: Answer) -> Result<Answer, Invalid> {
        let allowed: Vec<u32> = item.into_iter().flat_map(|i| &i.task.options).map(|o| o.id).collect();
        a.attributes.sort_unstable();
        a.attributes.dedup();
        if let Some(bad) = a.attributes.iter().find(|id| !allowed.contains(id)) {
            return Err(Invalid(format!("attribute {bad} is not one of this super-category's")));
        }
        if a.not_sure && !a.attributes.is_empty() {
            return Err(Invalid("\"not sure\" cannot go with ticked attributes".into()));
        }
        if a.not_sure && a.not_on_list {
            return Err(Invalid("\"not sure\" and \"not on the list\" contradict each other: choose one".into()));
        }
        if a.not_on_list && a.missing.trim().is_empty() {
            return Err(Invalid("\"not on the list\": say which attribute is missing".into()));
        }
        if a.attributes.is_empty() && !a.not_sure && !a.not_on_list {
            return Err(Invalid("tick at least one attribute, or answer \"not sure\" or \"not on the list\"".into()));
        }
        a.missing = a.missing.trim().to_owned();
        if !a.not_on_list {
            a.missing.clear();
        }
        if a.missing.chars().count() > 200 {
            return Err(Invalid("missing: at most 200 characters".into()));
        }
        Ok(a)
    }

    fn policy(&self, config: &FpConfig) -> Result<Policy, Invalid> {
        config.check()?;
        Ok(Policy {
            // Super-categories assigned to experts go to them only; the others to anyone.
            batches: BatchPolicy { reserved_groups: config.experts.clone(), ..BatchPolicy::default() },
            // The aggregate applies reviews itself, to count acceptance.
            reviewed_answer_wins: false,
            ..Policy::plain(ABOUT.title)
        })
    }

    fn form_batches(
        &self,
        c: &FpConfig,
        items: &[ItemRef<Supercategory>],
        _rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid> {
        // One super-category per batch: that is how the protocol keeps experts consistent.
        let mut by: BTreeMap<String, Vec<uuid::Uuid>> = BTreeMap::new();
        for i in items {
            by.entry(i.payload.supercategory.clone()).or_default().push(i.id);
        }
        Ok(by
            .into_iter()
            .flat_map(|(sc, ids)| {
                ids.chunks(c.masks_per_batch)
                    .map(|ch| BatchPlan { items: ch.to_vec(), overlap: Some(1), group: Some(sc.clone()) })
                    .collect::<Vec<_>>()
            })
            .collect())
    }

    fn public_payload(&self, item: FpItem, _presentation: &()) -> impl serde::Serialize {
        // Everything but attributes the source file already had.
        item.task
    }

    fn export(&self, gt: GroundTruthText<'_, FpResult>, _partial: bool, each: &mut dyn FnMut(&[String])) {
        export::flat_table(gt.text()).each(each)
    }

    fn release_labels(&self, gt: GroundTruthText<'_, FpResult>) -> BTreeMap<String, String> {
        gt.read().map(|r| r.labels()).unwrap_or_default()
    }

    fn release_tables(
        &self,
        gt: GroundTruthText<'_, FpResult>,
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        hub::tables(gt.text())
    }

    fn release_files(
        &self,
        _config: &FpConfig,
        snapshot: &crate::core::releases::Snapshot,
        gt: GroundTruthText<'_, FpResult>,
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        let coco = export::coco_of_release(snapshot, gt.text()).map_err(|e| Invalid(e.to_string()))?;
        Ok(vec![("fashionpedia_attributes.json".to_owned(), coco)])
    }

    fn aggregate(&self, config: &FpConfig, input: &AggregationInput<Self>) -> FpResult {
        result::aggregate(config, input)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn contradictory_or_empty_flags_are_refused_with_a_clear_message() {
        let item: FpItem = serde_json::from_value(json!({"annotation_id": 1, "image_id": 1, "width": 4, "height": 4,
            "options": [{"id": 115, "name": "symmetrical"}]}))
        .expect("an item");
        let check = |answer: serde_json::Value| {
            let answer: Answer = serde_json::from_value(answer).map_err(|e| e.to_string())?;
            Fashionpedia.validate_answer(Some(&item), answer).map_err(|e| e.0)
        };
        let both = check(json!({"not_sure": true, "not_on_list": true, "missing": "boxy"}));
        assert!(both.as_ref().is_err_and(|e| e.contains("contradict")), "{both:?}");
        let unnamed = check(json!({"not_on_list": true, "missing": "   "}));
        assert!(unnamed.as_ref().is_err_and(|e| e.contains("which attribute")), "{unnamed:?}");
        assert!(check(json!({"not_on_list": true, "missing": "boxy"})).is_ok());
        assert!(check(json!({"not_sure": true})).is_ok());
        assert!(check(json!({"attributes": [115]})).is_ok());
        assert!(check(json!({"attributes": [116]})).is_err_and(|e| e.contains("not one of")));
    }
}
