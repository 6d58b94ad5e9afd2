//! How VTON plugs into the core: the kind's unit struct and its
//! [`TypedKind`](crate::core::TypedKind) implementation.

use super::config::{VtonAnswer, VtonConfig, VtonGold, VtonImages, NAME};
use super::{batches, demo, ground_truth, hub, release, result, service};
use crate::core::campaign::setting_help::{Editor, SettingHelp};
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use crate::core::kind::contract::{
    About, BatchPlan, BatchPolicy, Import, Invalid, ItemRef, Judgement, Policy, SubmitVerdict,
};
use crate::core::kind::ground_truth_text::GroundTruthText;
use crate::core::kind::typed::{AggregationInput, Answered};
use crate::core::TypedKind;
use rand::rngs::StdRng;
use result::VtonGroundTruth;

/// What VTON is.
static ABOUT: About = About {
    settings_help: SETTINGS_HELP,
    import: Import::Format {
        hint: "CSV with header id,garment,person,tryon,reference,model,category,dataset,expected (expected only for sanity tasks), or JSON {\"triplets\": [...]}",
        parse: |text| service::parse_triplets(text).map_err(|e| Invalid(e.to_string())),
    },
    answer_format: r#"{"rating": 1, 2 or 3}"#,
    // Ratings are valid or not whatever the image.
    answer_reads_item: false,
    adaptive_overlap: true,
    hub_task_categories: &["image-classification"],
    // Questionnaires are drawn from ids and the sanity flag alone.
    payload_keys_batched: Some(&[]),
    demo: Some(demo::campaign),
    ..About::new(
        NAME,
        "VTON quality rating",
        CoreSettings::of(
            Participants::Crowd,
            crate::core::campaign::campaigns::DEFAULT_LEASE_MINUTES,
            AnnotatorsPerBatch::AsPlanned,
            false,
        ),
    )
};

/// Where the defaults come from.
const PAPER: &str = "VTON-QBench paper, §3.2 and §3.3";
/// Each VTON setting in words.
const SETTINGS_HELP: &[SettingHelp] = &[
    SettingHelp::new(
        "tasks_per_questionnaire",
        "Tasks per questionnaire",
        "tasks in every questionnaire, sanity tasks included (the paper: 50)",
    )
    .unit("tasks")
    .source(PAPER),
    SettingHelp::new(
        "sanity_per_questionnaire",
        "Sanity tasks per questionnaire",
        "shared sanity tasks with known answers hidden in each questionnaire (the paper: 5)",
    )
    .unit("tasks")
    .source(PAPER),
    SettingHelp::new(
        "sanity_positions",
        "Positions of the sanity tasks",
        "1-based positions of the sanity tasks (default: evenly spaced, 5, 15, 25, 35, 45 of 50)",
    )
    .editor(Editor::Numbers),
    SettingHelp::new(
        "sanity_placement",
        "Where sanity tasks sit",
        "fixed (default, the paper: the same positions in every questionnaire) or per_questionnaire \
             (positions drawn for each). Fixed: workers who compare questionnaires see which positions repeat. \
             Per questionnaire: positions no longer tell, but the released VTON-QBench code's curation, which \
             finds sanity tasks by position, cannot be run on the export (Atelier's own curation can). Either \
             way the images are the same, so workers comparing screenshots can match them",
    ),
    SettingHelp::new("appearances", "Questionnaires per image", "questionnaires each image appears in")
        .unit("questionnaires"),
    SettingHelp::new(
        "annotators_per_questionnaire",
        "Workers per questionnaire",
        "workers who rate each questionnaire (VTON-QBench: about 7 ratings per image)",
    )
    .unit("workers")
    .source(PAPER),
    SettingHelp::new(
        "max_questionnaires_per_worker",
        "Questionnaires one worker may take",
        "more than one needs disjoint sets of sanity tasks",
    )
    .unit("questionnaires"),
    SettingHelp::new(
        "fill_last_questionnaire",
        "Fill the last questionnaire",
        "fill the last questionnaire with images of others so every one is full",
    ),
    SettingHelp::new(
        "stop_sanity_failures",
        "Stop workers who fail sanity tasks",
        "live mode: a worker who fails the sanity tasks gets no further questionnaire",
    ),
    SettingHelp::new(
        "background",
        "Background questions",
        "asked once before the first task (default: gender, age, experience)",
    )
    .editor(Editor::Questions),
    SettingHelp::new(
        "curation",
        "Curation rules",
        "preset (paper or vton-qbench-code) and thresholds: at most 0 sanity failures, 80 % identical \
             answers, 60 % disagreement with the majority; questionnaires with alpha at or below 0.4 dropped",
    )
    .source("VTON-QBench paper, §3.3"),
];

/// The VTON kind.
#[derive(Debug, Clone, Copy)]
pub struct Vton;

impl TypedKind for Vton {
    type Config = VtonConfig;
    // Only the images are read, and shown: the try-on model's name or the
    // dataset would bias ratings, and nothing may hint which tasks are
    // sanity checks.
    type Payload = VtonImages;
    type Gold = VtonGold;
    type Batched = serde::de::IgnoredAny;
    type Presentation = ();
    type Answer = VtonAnswer;
    type GroundTruth = VtonGroundTruth;

    fn about(&self) -> &'static About {
        &ABOUT
    }

    fn validate_item(&self, images: &VtonImages, gold: Option<&VtonGold>) -> Result<(), Invalid> {
        for (field, image) in images.fields() {
            if image.trim().is_empty() {
                return Err(Invalid(format!("payload.{field} must be an image URL or path")));
            }
        }
        if let Some(g) = gold {
            if g.task().is_none() {
                return Err(Invalid(
                    "gold must be {\"rating\": 1, 2 or 3} with an optional \"tolerance\" of 0 to 2".into(),
                ));
            }
        }
        Ok(())
    }

    fn validate_answer(&self, _images: Option<&VtonImages>, answer: VtonAnswer) -> Result<VtonAnswer, Invalid> {
        match answer.rating {
            1..=3 => Ok(answer),
            other => Err(Invalid(format!("answer must be {}: {other} is not a rating", ABOUT.answer_format))),
        }
    }

    fn judge(&self, _images: &VtonImages, gold: Option<&VtonGold>, answer: Option<&VtonAnswer>) -> Judgement {
        Judgement {
            check: gold.and_then(VtonGold::task).map(|task| answer.is_some_and(|a| task.passes(a.rating))),
            vote: answer.map(|a| crate::stats::adaptive::Vote::Rating(f64::from(a.rating))),
        }
    }

    fn policy(&self, c: &VtonConfig) -> Result<Policy, Invalid> {
        c.check()?;
        Ok(Policy {
            batches: BatchPolicy {
                // Questionnaire order is already random per questionnaire;
                // workers of one questionnaire see the same order, as in the
                // benchmark.
                shuffle_items: false,
                max_batches_per_annotator: i64::try_from(c.max_questionnaires_per_worker).ok(),
                shares_gold_across_batches: true,
                // A worker who met a sanity image before would recognise it as one.
                gold_may_repeat: false,
                ..BatchPolicy::default()
            },
            background: c.background.clone(),
            release_parameters: release::parameters(),
            datasheet_task: release::task(),
            ..Policy::plain(ABOUT.title)
        })
    }

    fn form_batches(
        &self,
        c: &VtonConfig,
        items: &[ItemRef<serde::de::IgnoredAny>],
        rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid> {
        batches::form(c, items, rng)
    }

    fn aggregate(&self, c: &VtonConfig, input: &AggregationInput<Self>) -> VtonGroundTruth {
        ground_truth::aggregate(input, &c.curation)
    }

    fn aggregate_json(&self, c: &VtonConfig, input: AggregationInput<Self>) -> String {
        // Straight from the typed result, the input freed while the images
        // are scored: the result's `Value` would be several times the size
        // of its text, beside the input. The result's fields are declared
        // in alphabetical order, so the text is the `Value`'s byte for byte
        // (tested).
        let scored = tracing::debug_span!("score").in_scope(|| ground_truth::score_owned_input(input, &c.curation));
        let ranked = tracing::debug_span!("rank models").in_scope(|| ground_truth::rank_models(scored));
        tracing::debug_span!("to JSON").in_scope(|| ranked.into_text().unwrap_or_else(|_| "null".to_owned()))
    }

    fn export(&self, gt: GroundTruthText<'_, VtonGroundTruth>, _partial: bool, each: &mut dyn FnMut(&[String])) {
        ground_truth::rows(gt.text(), each)
    }

    fn on_submit(&self, c: &VtonConfig, answered: &[Answered<Self>]) -> SubmitVerdict {
        let failures = answered
            .iter()
            .filter(|a| {
                a.gold
                    .as_ref()
                    .and_then(VtonGold::task)
                    .is_some_and(|s| a.answer.is_none_or(|answer| !s.passes(answer.rating)))
            })
            .count();
        let block = (c.stop_sanity_failures && failures > c.curation.max_sanity_failures)
            .then(|| format!("failed {failures} sanity task(s)"));
        SubmitVerdict { exclude: None, block }
    }

    fn release_tables(
        &self,
        gt: GroundTruthText<'_, VtonGroundTruth>,
    ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
        hub::tables(gt.text())
    }

    fn release_files(
        &self,
        _config: &VtonConfig,
        snapshot: &crate::core::releases::Snapshot,
        _gt: GroundTruthText<'_, VtonGroundTruth>,
    ) -> Result<Vec<(String, Vec<u8>)>, Invalid> {
        release::files(snapshot).map_err(|e| Invalid(e.to_string()))
    }

    fn release_labels(&self, gt: GroundTruthText<'_, VtonGroundTruth>) -> std::collections::BTreeMap<String, String> {
        release::labels(gt.text())
    }

    fn datasheet_quality(&self, gt: GroundTruthText<'_, VtonGroundTruth>) -> String {
        release::quality(gt.text())
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kind::contract::TaskKind;
    use serde_json::json;

    #[test]
    fn an_item_reads_as_its_images_and_workers_see_nothing_else() {
        let item =
            json!({"garment": "/g", "person": "/p", "tryon": "/t", "reference": "/r", "model": "m", "dataset": "d"});
        assert_eq!(TaskKind::validate_item(&Vton, &item, None), Ok(()));
        let shown = TaskKind::public_payload(&Vton, &item, &serde_json::Value::Null).expect("reads");
        assert_eq!(shown, json!({"garment": "/g", "person": "/p", "tryon": "/t", "reference": "/r"}));
        let no_tryon = json!({"garment": "/g", "person": "/p", "reference": "/r"});
        let refused = TaskKind::validate_item(&Vton, &no_tryon, None).expect_err("refused");
        assert!(refused.0.contains("payload") && refused.0.contains("tryon"), "{}", refused.0);
        let blank = json!({"garment": " ", "person": "/p", "tryon": "/t", "reference": "/r"});
        assert!(TaskKind::validate_item(&Vton, &blank, None).is_err_and(|e| e.0.contains("payload.garment")));
        let out_of_scale = TaskKind::validate_item(&Vton, &item, Some(&json!({"rating": 4})));
        assert!(out_of_scale.is_err_and(|e| e.0.contains("1, 2 or 3")));
        // A sanity task is judged by its gold answer, a plain one not at all.
        let gold = json!({"rating": 3, "tolerance": 1});
        assert_eq!(TaskKind::judge(&Vton, &item, Some(&gold), &json!({"rating": 2})).check, Some(true));
        assert_eq!(TaskKind::judge(&Vton, &item, Some(&gold), &json!({"rating": 1})).check, Some(false));
        assert_eq!(TaskKind::judge(&Vton, &item, None, &json!({"rating": 1})).check, None);
    }

    #[test]
    fn answers_are_judged_without_their_item_as_the_kind_says() {
        assert!(!TaskKind::about(&Vton).answer_reads_item);
        let item = json!({"garment": "/g", "person": "/p", "tryon": "/t", "reference": "/r", "model": "m"});
        for answer in [json!({"rating": 1}), json!({"rating": 3}), json!({"rating": 4}), json!({"x": 1}), json!(null)] {
            let alone = TaskKind::validate_answer(&Vton, None, &answer).map_err(|e| e.0);
            assert_eq!(alone, TaskKind::validate_answer(&Vton, Some(&item), &answer).map_err(|e| e.0), "{answer}");
        }
        assert_eq!(
            TaskKind::validate_answer(&Vton, None, &json!({"rating": 2})).map_err(|e| e.0),
            Ok(json!({"rating": 2}))
        );
    }
}
