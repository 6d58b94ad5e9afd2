//! How A100 plugs into the core: the kind's unit struct and its
//! [`TypedKind`](crate::core::TypedKind) implementation.

use super::config::{A100Answer, A100Config, A100Gold, ChoiceOrder, PublicChoice, PublicQuestion, AAT, LAT};
use super::question::Question;
use super::{aggregate, demo, hub, question, release, result};
use crate::core::campaign::setting_help::SettingHelp;
use crate::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use crate::core::kind::contract::{
    About, BatchPlan, BatchPolicy, Import, Invalid, ItemRef, Judgement, Policy, SubmitVerdict,
};
use crate::core::kind::ground_truth_text::GroundTruthText;
use crate::core::kind::typed::{AggregationInput, Answered};
use crate::core::TypedKind;
use rand::rngs::StdRng;
use rand::seq::SliceRandom;
use result::A100Result;
use serde::de::IgnoredAny;
use serde_json::Value;

/// LAT: crowd votes are the ground truth.
#[derive(Debug, Clone, Copy)]
pub struct Lat;
/// AAT: an expert key is the ground truth.
#[derive(Debug, Clone, Copy)]
pub struct Aat;

/// Shared behaviour of LAT and AAT: the question with its key (the gold
/// answer) follows the outfit rules.
fn validate_item(question: &Question, gold: Option<&A100Gold>, aat: bool) -> Result<(), Invalid> {
    let keyed = Question { answer: gold.and_then(|g| g.answer.clone()), ..question.clone() };
    question::validate(&keyed, aat).map_err(Invalid)
}

fn validate_answer(question: Option<&Question>, answer: A100Answer) -> Result<A100Answer, Invalid> {
    let known = question.is_some_and(|q| q.choices.iter().any(|c| c.id == answer.choice));
    if !known {
        return Err(Invalid(format!("`{}` is not one of this question's choices", answer.choice)));
    }
    Ok(answer)
}

fn form_batches(c: &A100Config, items: &[ItemRef<IgnoredAny>]) -> Result<Vec<BatchPlan>, Invalid> {
    // The whole question set is one questionnaire, answered by many participants.
    Ok(vec![BatchPlan { items: items.iter().map(|i| i.id).collect(), overlap: Some(c.participants), group: None }])
}

/// A per-participant order of the five choices.
fn shuffle_choices(question: &Question, rng: &mut StdRng) -> ChoiceOrder {
    let mut choices: Vec<String> = question.choices.iter().map(|c| c.id.clone()).collect();
    choices.shuffle(rng);
    ChoiceOrder { choices }
}

/// The question with choices in the participant's order; the
/// attention-check flag, dimension and overrides stay hidden.
fn public(question: Question, order: &ChoiceOrder) -> PublicQuestion {
    let mut choices = question.choices;
    choices.sort_by_key(|c| order.choices.iter().position(|o| *o == c.id).unwrap_or(usize::MAX));
    PublicQuestion {
        outfit: question.outfit,
        blank_category: question.blank_category,
        choices: choices.into_iter().map(|c| PublicChoice { id: c.id, image: c.image }).collect(),
    }
}

/// Whether the answer is the gold one (an attention check's).
fn chose_gold(gold: Option<&A100Gold>, answer: Option<&A100Answer>) -> bool {
    match (gold, answer) {
        (Some(g), Some(a)) => g.answer.as_deref() == Some(a.choice.as_str()),
        (Some(g), None) => g.answer.is_none(),
        (None, _) => false,
    }
}

/// A participant who misses an attention check is excluded (answers kept).
fn attention<K: TypedKind<Payload = Question, Gold = A100Gold, Answer = A100Answer>>(
    answered: &[Answered<K>],
) -> Option<String> {
    let failed = answered
        .iter()
        .any(|a| a.payload.attention_check && a.gold.is_some() && !chose_gold(a.gold.as_ref(), a.answer.as_ref()));
    failed.then(|| "attention_check_failed".to_owned())
}

/// Each A100 setting in words.
const SETTINGS_HELP: &[SettingHelp] = &[
    SettingHelp::new(
        "participants",
        "Participants per questionnaire",
        "people who answer the questionnaire (the ground truth is their majority)",
    )
    .unit("people"),
    SettingHelp::new(
        "shuffle_questions",
        "Shuffle the questions",
        "show the questions in a random order per participant",
    ),
    SettingHelp::new("background", "Background questions", "asked once before the first task")
        .editor(crate::core::campaign::setting_help::Editor::Questions),
    SettingHelp::new(
        "review",
        "Review by a second annotator",
        "a different annotator reviews every submitted questionnaire (expert campaigns)",
    ),
];

/// What LAT and AAT share of [`About`]: crowd questionnaires of two-hour
/// leases, imported as a question set.
const fn about(name: &'static str, title: &'static str) -> About {
    About {
        settings_help: SETTINGS_HELP,
        answer_format: "{\"choice\": <choice id>}",
        import: Import::Format {
            hint: "A100 question set JSON: {\"questions\": [{\"id\", \"outfit\", \"blank_category\", \"choices\", ...}]} (see README)",
            parse: question::parse_set,
        },
        hub_task_categories: &["multiple-choice", "visual-question-answering"],
        // The question set is one questionnaire: formation reads no payload.
        payload_keys_batched: Some(&[]),
        ..About::new(name, title, CoreSettings::of(Participants::Crowd, 120, AnnotatorsPerBatch::AsPlanned, false))
    }
}

/// What LAT is: its crowd's majority decides a question, so an adaptive
/// overlap may be set.
static LAT_ABOUT: About = About {
    adaptive_overlap: true,
    demo: Some(|| demo::campaign(false)),
    ..about(LAT, "A100 LAT (crowd aesthetic test)")
};

/// What AAT is: scored against its key, every participant answers everything.
static AAT_ABOUT: About =
    About { demo: Some(|| demo::campaign(true)), ..about(AAT, "A100 AAT (expert-keyed aesthetic test)") };

/// What the configuration decides: the question order and background questions.
fn policy(config: &A100Config, aat: bool) -> Result<Policy, Invalid> {
    if config.participants < 1 {
        return Err(Invalid("configuration: participants must be at least 1".into()));
    }
    Ok(Policy {
        batches: BatchPolicy { shuffle_items: config.shuffle_questions, ..BatchPolicy::default() },
        background: config.background.clone(),
        release_parameters: release::parameters(),
        datasheet_task: release::task(aat),
        ..Policy::plain("A100")
    })
}

/// An attention check's outcome and, for the LAT, the vote for deciding the
/// question (a choice of its choices).
fn judge(question: &Question, gold: Option<&A100Gold>, answer: Option<&A100Answer>, aat: bool) -> Judgement {
    let options = question.choices.len();
    Judgement {
        check: question.attention_check.then(|| chose_gold(gold, answer)),
        vote: answer
            .filter(|_| !aat)
            .map(|a| crate::stats::adaptive::Vote::Choice { picked: a.choice.clone(), options }),
    }
}

macro_rules! a100_kind {
    ($ty:ty, $about:expr, $aat:literal) => {
        impl TypedKind for $ty {
            type Config = A100Config;
            type Payload = Question;
            type Gold = A100Gold;
            type Batched = IgnoredAny;
            type Presentation = ChoiceOrder;
            type Answer = A100Answer;
            type GroundTruth = A100Result;

            fn about(&self) -> &'static About {
                &$about
            }
            fn validate_item(&self, question: &Question, gold: Option<&A100Gold>) -> Result<(), Invalid> {
                validate_item(question, gold, $aat)
            }
            fn validate_answer(&self, question: Option<&Question>, answer: A100Answer) -> Result<A100Answer, Invalid> {
                validate_answer(question, answer)
            }
            fn judge(&self, question: &Question, gold: Option<&A100Gold>, answer: Option<&A100Answer>) -> Judgement {
                judge(question, gold, answer, $aat)
            }
            fn presentation(&self, question: &Question, rng: &mut StdRng) -> ChoiceOrder {
                shuffle_choices(question, rng)
            }
            fn public_payload(&self, question: Question, order: &ChoiceOrder) -> impl serde::Serialize {
                public(question, order)
            }
            fn policy(&self, config: &A100Config) -> Result<Policy, Invalid> {
                policy(config, $aat)
            }
            fn form_batches(
                &self,
                config: &A100Config,
                items: &[ItemRef<IgnoredAny>],
                _rng: &mut StdRng,
            ) -> Result<Vec<BatchPlan>, Invalid> {
                form_batches(config, items)
            }
            fn on_submit(&self, _config: &A100Config, answered: &[Answered<Self>]) -> SubmitVerdict {
                SubmitVerdict { exclude: attention(answered), block: None }
            }
            fn aggregate(&self, _config: &A100Config, input: &AggregationInput<Self>) -> A100Result {
                aggregate::aggregate(input, $aat)
            }
            fn export(&self, gt: GroundTruthText<'_, A100Result>, _partial: bool, each: &mut dyn FnMut(&[String])) {
                aggregate::table(gt.text()).each(each)
            }
            fn release_tables(
                &self,
                gt: GroundTruthText<'_, A100Result>,
            ) -> crate::error::Result<Vec<crate::core::releases::hf::ReleaseTable>> {
                hub::tables(gt.text())
            }
            fn release_labels(
                &self,
                gt: GroundTruthText<'_, A100Result>,
            ) -> std::collections::BTreeMap<String, String> {
                release::labels(gt.text())
            }
            fn datasheet_quality(&self, gt: GroundTruthText<'_, A100Result>) -> String {
                gt.read_as::<Value>().map(|gt| release::quality(&gt)).unwrap_or_default()
            }
        }
    };
}

a100_kind!(Lat, LAT_ABOUT, false);
a100_kind!(Aat, AAT_ABOUT, true);
