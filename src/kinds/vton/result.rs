//! The VTON ground truth as a typed result: what `aggregate` computes and
//! exports as JSON, and what the kind's pages, exports and services read
//! back (never by string keys).

use super::curation::{Curation, Thresholds};
use crate::stats::split_half::SplitHalf;
use serde::{Deserialize, Serialize};
use serde_json::Value;
use std::collections::BTreeMap;

/// A VTON campaign's ground truth. Its fields, and those of every type
/// in it, are declared in alphabetical order: serialized directly it is then
/// the same text as through a `Value` (whose keys are sorted), so the live
/// views can skip the `Value` and releases keep their bytes.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct VtonGroundTruth {
    /// Everything curation decided.
    pub curation: Curation,
    /// Split-half agreement of the annotators: the human ceiling.
    pub human_ceiling: SplitHalf,
    /// Curated score of every image.
    pub images: Vec<ImageScore>,
    /// Try-on models ranked: slice (`all`, `category`, `dataset`) -> value -> ranks.
    pub models: BTreeMap<String, BTreeMap<String, Vec<ModelRank>>>,
    /// The curation thresholds used (with the preset).
    pub thresholds: Thresholds,
    /// Atelier's annotator id -> the crowd platform's worker id (admins'
    /// live view only; empty in releases).
    pub workers: BTreeMap<String, String>,
}

impl VtonGroundTruth {
    /// Its compact JSON text (as [`crate::core::support::json_text::exact`] writes
    /// it), each image freed once written: the images and the text at once
    /// would be the top of a release cut.
    pub fn into_text(self) -> serde_json::Result<String> {
        let length = crate::core::support::json_text::length(&self)?;
        let Self { curation, human_ceiling, images, models, thresholds, workers } = self;
        let consumed = Consumed {
            curation: &curation,
            human_ceiling: &human_ceiling,
            images: ImagesOnce(std::cell::RefCell::new(images)),
            models: &models,
            thresholds: &thresholds,
            workers: &workers,
        };
        crate::core::support::json_text::written(length, &consumed)
    }
}

/// [`VtonGroundTruth`] as written by [`VtonGroundTruth::into_text`]: the same
/// fields in the same order, its images handed over.
#[derive(Serialize)]
struct Consumed<'a> {
    curation: &'a Curation,
    human_ceiling: &'a SplitHalf,
    images: ImagesOnce,
    models: &'a BTreeMap<String, BTreeMap<String, Vec<ModelRank>>>,
    thresholds: &'a Thresholds,
    workers: &'a BTreeMap<String, String>,
}

/// Images written once, each dropped after it is (a second write finds none).
struct ImagesOnce(std::cell::RefCell<Vec<ImageScore>>);

impl Serialize for ImagesOnce {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        use serde::ser::SerializeSeq;
        let images = std::mem::take(&mut *self.0.borrow_mut());
        let mut seq = serializer.serialize_seq(Some(images.len()))?;
        for image in images {
            seq.serialize_element(&image)?;
        }
        seq.end()
    }
}

/// One image's curated score.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ImageScore {
    /// Annotators whose ratings count (shared text: each annotator rates
    /// hundreds of images).
    pub annotators: Vec<std::sync::Arc<str>>,
    /// Garment category.
    pub category: Option<Value>,
    /// Source dataset.
    pub dataset: Option<Value>,
    /// Garment image.
    pub garment: Option<Value>,
    /// The (garment, person) pair it belongs to, for pairwise metrics.
    pub group: String,
    /// The image (the item's external id).
    pub image: String,
    /// Mean rating (1-3).
    pub mean: f64,
    /// Ratings used.
    pub n_annotation: usize,
    /// Person image.
    pub person: Option<Value>,
    /// Reference image.
    pub reference: Option<Value>,
    /// The mean on [-1, 1].
    pub reward: f64,
    /// Try-on image.
    pub tryon: Option<Value>,
    /// Count of ratings 1, 2 and 3.
    pub votes: [usize; 3],
    /// The try-on model that made it.
    pub vton_model_id: Option<Value>,
    /// Their crowd platform ids (admins' live view only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub worker_ids: Option<Vec<Option<String>>>,
}

/// One try-on model's place in a ranking.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ModelRank {
    /// 95 % bootstrap interval of the mean.
    pub ci95: [f64; 2],
    /// Images scored.
    pub images: usize,
    /// Mean image score.
    pub mean: f64,
    /// The model.
    pub model: String,
    /// 1-based rank (highest mean first).
    pub rank: usize,
}

impl VtonGroundTruth {
    /// Reads it back from its compact JSON text (what the ground-truth
    /// cache keeps).
    pub fn from_json(aggregate: &[u8]) -> Result<Self, crate::error::Error> {
        serde_json::from_slice(aggregate).map_err(|e| crate::error::Error::internal("not a VTON ground truth", e))
    }

    /// Reads a VTON ground truth back from its JSON (as `aggregate` made it).
    pub fn from_value(aggregate: &Value) -> Result<Self, crate::error::Error> {
        Self::deserialize(aggregate).map_err(|e| crate::error::Error::internal("not a VTON ground truth", e))
    }

    /// The JSON exported and stored in releases.
    pub fn to_value(&self) -> Value {
        serde_json::to_value(self).unwrap_or(Value::Null)
    }

    /// The worker id of an annotator, or the annotator id when unknown.
    pub fn worker(&self, annotator: &str) -> String {
        self.workers.get(annotator).cloned().unwrap_or_else(|| annotator.to_owned())
    }
}
