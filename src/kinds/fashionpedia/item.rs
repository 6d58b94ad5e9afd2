//! A Fashionpedia task as the kind stores and reads it: one mask of one
//! image, one super-category of attributes to choose from. Written by the
//! COCO import ([`super::store::tasks`]) and read back by every hook, one
//! type both ways.

use super::ontology::AttributeChoice;
use serde_json::{Map, Value};

/// One task as stored: what the expert sees and the attributes the source
/// file already gave, which are kept for reference and never shown (they
/// would prompt the answer).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FpItem {
    /// What the expert sees.
    #[serde(flatten)]
    pub task: FpTask,
    /// Attributes the source file already gave.
    #[serde(default)]
    pub attribute_ids: Vec<u32>,
}

/// One task as an expert sees it: a mask and the attributes offered for
/// one super-category.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct FpTask {
    /// The mask's annotation id in the COCO file.
    pub annotation_id: u64,
    /// Its image's id in the file.
    pub image_id: u64,
    /// The image's file name.
    #[serde(default)]
    pub file_name: String,
    /// The image's address (the file name under the campaign's prefix).
    #[serde(default)]
    pub image_url: String,
    /// Image width in pixels.
    pub width: u32,
    /// Image height in pixels.
    pub height: u32,
    /// The mask's category id.
    #[serde(default)]
    pub category_id: u32,
    /// The category's name.
    #[serde(default)]
    pub category: String,
    /// The attribute super-category asked.
    #[serde(default)]
    pub supercategory: String,
    /// The segmentation as the COCO file gave it (polygons or RLE; read by
    /// [`super::masks::Mask::parse`]).
    #[serde(default)]
    pub segmentation: Value,
    /// [x, y, width, height].
    #[serde(default)]
    pub bbox: [f64; 4],
    /// The mask's area.
    #[serde(default)]
    pub area: f64,
    /// COCO's crowd flag.
    #[serde(default)]
    pub iscrowd: u8,
    /// The ids of the attributes offered.
    #[serde(default)]
    pub option_ids: Vec<u32>,
    /// The attributes offered, with names and groups.
    #[serde(default)]
    pub options: Vec<AttributeChoice>,
    /// DeepFashion2's fields, as given.
    #[serde(default)]
    pub deepfashion2: Map<String, Value>,
    /// Attributes DeepFashion2's fields suggest (shown as a hint).
    #[serde(default)]
    pub suggested: Vec<u32>,
}
