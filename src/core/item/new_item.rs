//! An item as an import hands it over, before the kind has checked it.

use serde_json::Value;

/// An item to import.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
pub struct NewItem {
    /// The caller's id for the item, unique within the campaign.
    #[schema(pattern = r"\S")]
    pub external_id: String,
    /// Kind-specific payload (image URLs, choices, ...).
    pub payload: Value,
    /// Known answer; stored apart and never sent to annotators.
    #[serde(default)]
    pub gold: Option<Value>,
}
