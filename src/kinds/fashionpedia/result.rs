//! The Fashionpedia ground truth as a typed result: per mask the accepted
//! attributes (the reviewed answer wins; with several independent
//! annotations, the per-attribute majority), per task its status, and the
//! statistics of the paper's Table 5 and for ontology curation.

use super::Answer;
use crate::core::kind::contract::{Records, ResponseRecord};
use crate::stats::alpha::{alpha, Level, ReliabilityData};
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet, HashMap};
use uuid::Uuid;

/// A campaign's ground truth.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct FpResult {
    /// Per mask.
    pub annotations: Vec<MaskResult>,
    /// Statistics.
    pub stats: Stats,
    /// Attribute id -> name, for the tasks' attributes.
    pub attribute_names: BTreeMap<u32, String>,
}

/// One mask's result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct MaskResult {
    /// The mask's id in the imported file.
    pub annotation_id: u64,
    /// Its image's id.
    pub image_id: u64,
    /// Its image's file.
    pub file_name: String,
    /// Category id.
    pub category_id: u32,
    /// Category name.
    pub category: String,
    /// Accepted attributes over every super-category whose task is done
    /// (reviewed, when the campaign reviews; else answered).
    pub attribute_ids: Vec<u32>,
    /// The super-categories whose task is done.
    #[serde(default)]
    pub done: Vec<String>,
    /// Attributes of answers still awaiting review (not in `attribute_ids`;
    /// exported only on request, marked).
    #[serde(default)]
    pub pending_attribute_ids: Vec<u32>,
    /// Per super-category: the final answer and how it came about.
    pub tasks: BTreeMap<String, TaskResult>,
}

/// One task's outcome.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct TaskResult {
    /// `open` (no submitted answer), `annotated`, or `reviewed`.
    pub status: String,
    /// The final answer.
    pub answer: Option<Answer>,
    /// Who annotated (names in admins' live view, ids otherwise).
    pub annotators: Vec<String>,
    /// Who reviewed, if anyone.
    pub reviewer: Option<String>,
}

/// The statistics page's numbers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Stats {
    /// Per super-category (Table 5): masks answered, and "not sure" / "not
    /// on the list" counts and shares of them.
    pub per_supercategory: BTreeMap<String, SuperStats>,
    /// Accepted attributes per mask with any answer: mean.
    pub attributes_per_mask_mean: Option<f64>,
    /// And max.
    pub attributes_per_mask_max: usize,
    /// Category -> attribute id -> masks with it.
    pub attribute_counts: BTreeMap<String, BTreeMap<u32, usize>>,
    /// Annotator -> (annotations reviewed, accepted as they were).
    pub review_acceptance: BTreeMap<String, Acceptance>,
    /// "Not on the list" suggestions, grouped by their text (lower case) -> count.
    pub suggestions: BTreeMap<String, usize>,
    /// With independent annotations: Krippendorff's nominal alpha per
    /// super-category on attribute presence.
    pub alpha: BTreeMap<String, Option<f64>>,
}

/// One super-category's row.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct SuperStats {
    /// Masks with an answer for it.
    pub masks: usize,
    /// Answered "not sure".
    pub not_sure: usize,
    /// Answered "not on the list".
    pub not_on_list: usize,
    /// not_sure / masks.
    pub not_sure_share: Option<f64>,
    /// not_on_list / masks.
    pub not_on_list_share: Option<f64>,
}

/// Review outcomes of one annotator's work.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize, Default)]
pub struct Acceptance {
    /// Tasks of theirs reviewed.
    pub reviewed: usize,
    /// Accepted unchanged.
    pub accepted: usize,
    /// accepted / reviewed.
    pub rate: Option<f64>,
}

impl FpResult {
    /// Reads it back from its compact JSON text (what the ground-truth
    /// cache keeps).
    pub fn from_json(aggregate: &[u8]) -> Result<Self, crate::error::Error> {
        serde_json::from_slice(aggregate)
            .map_err(|e| crate::error::Error::internal("not a Fashionpedia ground truth", e))
    }

    /// Reads a ground truth back from its JSON.
    pub fn from_value(v: &Value) -> Result<Self, crate::error::Error> {
        Self::deserialize(v).map_err(|e| crate::error::Error::internal("not a Fashionpedia ground truth", e))
    }

    /// Each task's outcome in words, by its item's external id
    /// (`annotation id:super-category`): the accepted attributes' names,
    /// "not sure", "not on the list", or its status while open.
    pub fn labels(&self) -> BTreeMap<String, String> {
        let mut labels = BTreeMap::new();
        for mask in &self.annotations {
            for (super_category, task) in &mask.tasks {
                let label = match &task.answer {
                    Some(answer) => {
                        let mut words: Vec<String> = answer
                            .attributes
                            .iter()
                            .map(|id| self.attribute_names.get(id).cloned().unwrap_or_else(|| format!("#{id}")))
                            .collect();
                        words.extend(answer.not_sure.then(|| "not sure".to_owned()));
                        words.extend(answer.not_on_list.then(|| "not on the list".to_owned()));
                        format!("{} ({})", words.join(", "), task.status)
                    }
                    None => task.status.clone(),
                };
                labels.insert(format!("{}:{super_category}", mask.annotation_id), label);
            }
        }
        labels
    }

    /// The JSON exported.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }
}

/// Per-attribute majority of independent answers.
fn majority(answers: &[Answer]) -> Answer {
    let n = answers.len();
    let half = |count: usize| 2 * count > n;
    let mut counts: BTreeMap<u32, usize> = BTreeMap::new();
    for a in answers {
        for id in &a.attributes {
            *counts.entry(*id).or_default() += 1;
        }
    }
    let not_on_list = half(answers.iter().filter(|a| a.not_on_list).count());
    Answer {
        attributes: counts.into_iter().filter(|(_, c)| half(*c)).map(|(id, _)| id).collect(),
        not_sure: half(answers.iter().filter(|a| a.not_sure).count()),
        not_on_list,
        missing: if not_on_list {
            answers.iter().map(|a| a.missing.as_str()).find(|m| !m.is_empty()).unwrap_or("").to_owned()
        } else {
            String::new()
        },
    }
}

/// What a Fashionpedia campaign aggregates: the kind's `AggregationInput`
/// (no gold answers).
pub type FpInput = Records<serde::de::IgnoredAny, Answer>;

/// Builds the ground truth.
pub fn aggregate(config: &super::FpConfig, input: &FpInput) -> FpResult {
    let who = |id: &Uuid| input.worker_ids.get(id).cloned().unwrap_or_else(|| id.to_string());
    let submitted: Vec<&ResponseRecord<Answer>> = input.responses.iter().filter(|r| r.submitted).collect();
    // Reviews by (reviewed assignment, item).
    let reviews: HashMap<(Uuid, Uuid), &ResponseRecord<Answer>> =
        submitted.iter().filter_map(|r| Some(((r.reviews?, r.item_id), *r))).collect();
    let mut originals: HashMap<Uuid, Vec<&ResponseRecord<Answer>>> = HashMap::new();
    for r in submitted.iter().filter(|r| r.reviews.is_none()) {
        originals.entry(r.item_id).or_default().push(r);
    }
    let mut stats = Stats::default();
    let mut masks: BTreeMap<u64, MaskResult> = BTreeMap::new();
    let mut presence: BTreeMap<String, Vec<Vec<f64>>> = BTreeMap::new();
    let attribute_names = &config.attribute_names;
    for item in &input.items {
        let p = &item.payload.value();
        let (Some(annotation_id), Some(sc)) = (p["annotation_id"].as_u64(), p["supercategory"].as_str()) else {
            continue;
        };
        let mask = masks.entry(annotation_id).or_insert_with(|| MaskResult {
            annotation_id,
            image_id: p["image_id"].as_u64().unwrap_or(0),
            file_name: p["file_name"].as_str().unwrap_or_default().to_owned(),
            category_id: u32::try_from(p["category_id"].as_u64().unwrap_or(0)).unwrap_or(0),
            category: p["category"].as_str().unwrap_or_default().to_owned(),
            attribute_ids: Vec::new(),
            done: Vec::new(),
            pending_attribute_ids: Vec::new(),
            tasks: BTreeMap::new(),
        });
        let given = originals.get(&item.id).cloned().unwrap_or_default();
        let mut finals = Vec::new();
        let mut reviewer = None;
        for r in &given {
            let original = Answer::clone(&r.answer);
            match reviews.get(&(r.assignment_id, item.id)).map(|rv| (rv, Answer::clone(&rv.answer))) {
                Some((rv, verdict)) => {
                    let row = stats.review_acceptance.entry(who(&r.annotator_id)).or_default();
                    row.reviewed += 1;
                    row.accepted += usize::from(verdict == original);
                    reviewer = Some(who(&rv.annotator_id));
                    finals.push(verdict);
                }
                None => finals.push(original),
            }
        }
        if given.len() >= 2 {
            let options: Vec<u32> =
                p["option_ids"].as_array().into_iter().flatten().filter_map(Value::as_u64).map(|v| v as u32).collect();
            let units = presence.entry(sc.to_owned()).or_default();
            for id in options {
                units.push(finals.iter().map(|a| f64::from(u8::from(a.attributes.contains(&id)))).collect());
            }
        }
        let answer = match finals.len() {
            0 => None,
            1 => finals.pop(),
            _ => Some(majority(&finals)),
        };
        if let Some(a) = &answer {
            let row = stats.per_supercategory.entry(sc.to_owned()).or_default();
            row.masks += 1;
            row.not_sure += usize::from(a.not_sure);
            row.not_on_list += usize::from(a.not_on_list);
            if a.not_on_list && !a.missing.is_empty() {
                *stats.suggestions.entry(a.missing.to_lowercase()).or_default() += 1;
            }
            // With review on, an answer is final once reviewed; until then
            // its attributes are pending.
            if reviewer.is_some() || !input.review {
                mask.attribute_ids.extend(a.attributes.iter().copied());
                mask.done.push(sc.to_owned());
            } else {
                mask.pending_attribute_ids.extend(a.attributes.iter().copied());
            }
        }
        let status = match (&answer, &reviewer) {
            (None, _) => "open",
            (Some(_), Some(_)) => "reviewed",
            (Some(_), None) => "annotated",
        };
        mask.tasks.insert(
            sc.to_owned(),
            TaskResult {
                status: status.to_owned(),
                answer,
                annotators: given.iter().map(|r| who(&r.annotator_id)).collect(),
                reviewer,
            },
        );
    }
    for row in stats.per_supercategory.values_mut() {
        let share = |c: usize| (row.masks > 0).then(|| c as f64 / row.masks as f64);
        row.not_sure_share = share(row.not_sure);
        row.not_on_list_share = share(row.not_on_list);
    }
    for row in stats.review_acceptance.values_mut() {
        row.rate = (row.reviewed > 0).then(|| row.accepted as f64 / row.reviewed as f64);
    }
    stats.alpha = presence
        .into_iter()
        .map(|(sc, units)| (sc, alpha(&ReliabilityData::from_units(units), Level::Nominal).alpha.ok()))
        .collect();
    let mut per_mask = Vec::new();
    for m in masks.values_mut() {
        let set: BTreeSet<u32> = m.attribute_ids.iter().copied().collect();
        m.attribute_ids = set.into_iter().collect();
        let pending: BTreeSet<u32> =
            m.pending_attribute_ids.iter().copied().filter(|id| !m.attribute_ids.contains(id)).collect();
        m.pending_attribute_ids = pending.into_iter().collect();
        if m.tasks.values().any(|t| t.answer.is_some()) {
            per_mask.push(m.attribute_ids.len());
            let counts = stats.attribute_counts.entry(m.category.clone()).or_default();
            for id in &m.attribute_ids {
                *counts.entry(*id).or_default() += 1;
            }
        }
    }
    stats.attributes_per_mask_mean =
        (!per_mask.is_empty()).then(|| per_mask.iter().sum::<usize>() as f64 / per_mask.len() as f64);
    stats.attributes_per_mask_max = per_mask.iter().copied().max().unwrap_or(0);
    FpResult { annotations: masks.into_values().collect(), stats, attribute_names: attribute_names.clone() }
}
