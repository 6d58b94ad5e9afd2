//! The values the VSD folder shares: the kind's stored name, its
//! campaign configuration and its answer.

use super::eds;
use crate::core::kind::contract::Invalid;
use serde_json::Value;

/// Stored name of the kind.
pub const NAME: &str = "vsd";

/// Campaign settings of a VSD campaign.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VsdConfig {
    /// Each model's top k become suspects (the paper: 6).
    #[serde(default = "default_k")]
    pub k: u32,
    /// Regex with one capture group extracting a product id from an image
    /// id: pairs of the same product are left out.
    #[serde(default)]
    pub same_product: Option<String>,
    /// Prefix turning an image id into its address (e.g. `https://cdn/` or
    /// `/kinds/vsd/images/` for files under the server's `ATELIER_VSD_IMAGE_ROOT`);
    /// ids that are addresses already are used as they are.
    #[serde(default)]
    pub image_base_url: String,
    /// Pairs per batch (pairs of one query stay together).
    #[serde(default = "default_pairs_per_batch")]
    pub pairs_per_batch: usize,
    /// |Q|, for the estimates (default: the queries of the suspects).
    #[serde(default)]
    pub queries: Option<u64>,
    /// |D|, the catalog's size, for the estimates.
    #[serde(default)]
    pub catalog: Option<u64>,
    /// Queries are not catalog images ("in the wild").
    #[serde(default)]
    pub wild: bool,
}

fn default_k() -> u32 {
    6
}
fn default_pairs_per_batch() -> usize {
    60
}

impl Default for VsdConfig {
    fn default() -> Self {
        Self {
            k: default_k(),
            same_product: None,
            image_base_url: String::new(),
            pairs_per_batch: default_pairs_per_batch(),
            queries: None,
            catalog: None,
            wild: false,
        }
    }
}

impl VsdConfig {
    /// Parses and checks a campaign's configuration.
    pub fn parse(config: &Value) -> Result<Self, Invalid> {
        let c: Self = crate::core::campaign::config_text::parse(config)?;
        c.check()?;
        Ok(c)
    }

    /// Checks what the types cannot: `k`'s range, a batch's size, the
    /// same-product pattern.
    pub fn check(&self) -> Result<(), Invalid> {
        if self.k == 0 || self.k > 1000 {
            return Err(Invalid("configuration: k must be from 1 to 1000".into()));
        }
        if self.pairs_per_batch == 0 {
            return Err(Invalid("configuration: pairs_per_batch must be at least 1".into()));
        }
        if let Some(re) = &self.same_product {
            crate::stats::retrieval::product_pattern(re)
                .map_err(|e| Invalid(format!("configuration: same_product: {e}")))?;
        }
        Ok(())
    }

    /// The address of an image id.
    pub fn image_url(&self, id: &str) -> String {
        if id.starts_with("http://") || id.starts_with("https://") || id.starts_with('/') {
            id.to_owned()
        } else {
            format!("{}{id}", self.image_base_url)
        }
    }
}

/// An expert's answer.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Answer {
    /// A vote (similar, not similar, unsure).
    Vote(eds::Vote),
    /// The pair is broken (an image missing, the same product...).
    Broken,
}

/// A VSD answer, as `POST .../assignments/{id}/responses` takes it in
/// `answer` and as it is stored: `label` is `"1"` (similar), `"0"` (not
/// similar), `"unsure"` (abstains: one similar and two unsure is positive)
/// or `"broken"` (with a `reason`, goes to the admin).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[schema(example = json!({"label": "1"}))]
pub struct VsdAnswer {
    /// The expert's label.
    pub label: Label,
    /// With `"broken"`: what is wrong (image missing, the same product...).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// A VSD label as stored; read from `"1"`, `"0"`, `"unsure"` (any case),
/// `"broken"` or the numbers 1 and 0, as annotators' clients send them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[schema(as = VsdLabel)]
pub enum Label {
    /// Similar.
    #[serde(rename = "1")]
    Similar,
    /// Not similar.
    #[serde(rename = "0")]
    NotSimilar,
    /// The expert cannot tell.
    #[serde(rename = "unsure")]
    Unsure,
    /// The pair is broken.
    #[serde(rename = "broken")]
    Broken,
}

impl Label {
    /// The label as stored and exported: `1`, `0`, `unsure` or `broken`.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Similar => "1",
            Self::NotSimilar => "0",
            Self::Unsure => "unsure",
            Self::Broken => "broken",
        }
    }

    /// What the label counts as: a vote, or a broken pair.
    pub fn answer(self) -> Answer {
        match self {
            Self::Similar => Answer::Vote(eds::Vote::Similar),
            Self::NotSimilar => Answer::Vote(eds::Vote::NotSimilar),
            Self::Unsure => Answer::Vote(eds::Vote::Unsure),
            Self::Broken => Answer::Broken,
        }
    }

    /// The label a text names: `1`, `0`, `unsure` (any case), `broken`.
    pub fn parse(text: &str) -> Option<Self> {
        if text == "broken" {
            return Some(Self::Broken);
        }
        eds::Vote::parse(text).map(|vote| match vote {
            eds::Vote::Similar => Self::Similar,
            eds::Vote::NotSimilar => Self::NotSimilar,
            eds::Vote::Unsure => Self::Unsure,
        })
    }
}

impl<'de> serde::Deserialize<'de> for Label {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        /// A label as sent: text or a number.
        #[derive(serde::Deserialize)]
        #[serde(untagged)]
        enum Sent {
            Text(String),
            Number(u64),
        }
        let text = match Sent::deserialize(deserializer)? {
            Sent::Text(text) => text,
            Sent::Number(n) => n.to_string(),
        };
        Self::parse(&text).ok_or_else(|| serde::de::Error::custom(format!("`{text}` is not a label")))
    }
}
