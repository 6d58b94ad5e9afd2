//! What one service keeps in memory between requests: the ground truths it
//! computed and the small results derived from them (see
//! [`super::aggregate_cache`]) and the counts and computations in flight
//! that concurrent views share (see [`super::coalesce`]). Owned by the
//! service (its `AppState`), so two services in one process, as in the
//! tests, share nothing; the command line makes its own.
//!
//! The heavy-work thread ([`super::heavy`]) is not here on purpose: one per
//! process is its point (it reuses the memory it frees).

use super::aggregate_cache::{DerivedValue, GroundTruths};
use super::coalesce::Coalesced;
use super::progress::{AnnotatorProgress, CampaignProgress};
use std::sync::Arc;
use uuid::Uuid;

/// A service's caches and shared computations.
#[derive(Default)]
pub struct Caches {
    /// Ground truths and what is derived from them, by campaign.
    pub(super) ground_truths: GroundTruths,
    /// Summaries being derived, by campaign and name.
    pub(super) summaries: Coalesced<(Uuid, &'static str), DerivedValue, super::Error>,
    /// Campaign figures being counted, by campaign.
    pub(super) progress: Coalesced<Uuid, CampaignProgress, super::Error>,
    /// Per-annotator rows being counted, by campaign and row limit.
    pub(super) per_annotator: Coalesced<(Uuid, Option<i64>), Arc<Vec<AnnotatorProgress>>, super::Error>,
}
