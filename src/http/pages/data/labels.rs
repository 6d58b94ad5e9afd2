//! The labels an item carries in the data browser: the kind's flags and
//! the ground truth's label per item.

use crate::core::campaign::campaigns;
use crate::core::kind::contract::TaskKind;
use crate::core::truth::ground_truth;
use crate::error::Result;
use crate::http::AppState;
use std::sync::Arc;

/// Each item's ground-truth label in words, by external id.
pub(super) type Labels = std::collections::BTreeMap<String, String>;

pub(super) fn labels(kind: &dyn TaskKind, json: &[u8]) -> Result<Labels> {
    Ok(kind.release_labels(json))
}

/// The labels the page shows (none while the first are computed) and,
/// when they are not current, what the page says about them.
pub(in crate::http::pages) async fn current_labels(
    s: &AppState,
    campaign: &campaigns::Campaign,
) -> Result<(Arc<Labels>, Option<String>)> {
    let (labels, freshness) =
        ground_truth::summary(&s.pool, &s.kinds, &s.caches, campaign, "item-labels", labels).await?;
    Ok((labels.unwrap_or_default(), freshness.notice()))
}

pub(in crate::http::pages) fn flags(kind: &dyn TaskKind) -> Vec<serde_json::Value> {
    kind.about().answer_flags.iter().filter_map(|f| serde_json::from_str(f).ok()).collect()
}
