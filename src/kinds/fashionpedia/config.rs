//! The values the Fashionpedia folder shares: the kind's stored name, its
//! campaign configuration and its answer.

use crate::core::kind::contract::Invalid;
use serde_json::Value;
use std::collections::BTreeMap;

/// Stored name of the kind.
pub const NAME: &str = "fashionpedia";

/// Campaign settings of a Fashionpedia campaign.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct FpConfig {
    /// Category name -> the attribute super-categories asked for its masks;
    /// `null` for the paper's default (13 main garments; sleeve, neckline,
    /// pocket, lapel, collar).
    #[serde(default)]
    pub applies: Option<BTreeMap<String, Vec<String>>>,
    /// Masks per batch (one super-category per batch).
    #[serde(default = "default_masks_per_batch")]
    pub masks_per_batch: usize,
    /// Prefix turning an image's `file_name` into its address.
    #[serde(default)]
    pub image_base_url: String,
    /// Super-category -> the experts (account names) who annotate it (one or
    /// two in the paper); a super-category not listed goes to any expert.
    #[serde(default)]
    pub experts: BTreeMap<String, Vec<String>>,
    /// DeepFashion2 category -> ontology category, over the default of the
    /// obvious name matches (e.g. `trousers` -> `pants`).
    #[serde(default)]
    pub df2_categories: BTreeMap<String, String>,
    /// Attribute id -> name, from the ontology (written when it is imported).
    #[serde(default)]
    pub attribute_names: BTreeMap<u32, String>,
}

/// The configuration `{}` parses to.
impl Default for FpConfig {
    fn default() -> Self {
        Self {
            applies: None,
            masks_per_batch: default_masks_per_batch(),
            image_base_url: String::new(),
            experts: BTreeMap::new(),
            df2_categories: BTreeMap::new(),
            attribute_names: BTreeMap::new(),
        }
    }
}

fn default_masks_per_batch() -> usize {
    20
}

impl FpConfig {
    /// Parses and checks a campaign's configuration.
    pub fn parse(config: &Value) -> Result<Self, Invalid> {
        let c: Self = crate::core::campaign::config_text::parse(config)?;
        c.check()?;
        Ok(c)
    }

    /// Checks what the types cannot: at least one mask per batch.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.masks_per_batch == 0 {
            return Err(Invalid("configuration: masks_per_batch must be at least 1".into()));
        }
        Ok(())
    }
}

/// A Fashionpedia answer, as `POST .../assignments/{id}/responses` takes
/// it in `answer` and as it is stored: the attribute ids ticked (among the
/// task's options), or `not_sure` (with none ticked), or `not_on_list` with
/// the missing attribute named in `missing` (at most 200 characters);
/// `not_sure` and `not_on_list` exclude each other.
#[derive(Debug, Clone, PartialEq, Eq, Default, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(as = FashionpediaAnswer, example = json!({"attributes": [115, 160], "not_sure": false, "not_on_list": false}))]
pub struct Answer {
    /// Attribute ids ticked.
    #[serde(default)]
    pub attributes: Vec<u32>,
    /// The expert cannot tell (occlusion, viewpoint).
    #[serde(default)]
    pub not_sure: bool,
    /// The right attribute is missing from the ontology.
    #[serde(default)]
    pub not_on_list: bool,
    /// With `not_on_list`: the missing attribute, in the expert's words.
    #[serde(default, skip_serializing_if = "String::is_empty")]
    pub missing: String,
}

impl Answer {
    /// Reads a stored answer.
    pub fn of(v: &Value) -> Option<Self> {
        serde_json::from_value(v.clone()).ok()
    }
}
