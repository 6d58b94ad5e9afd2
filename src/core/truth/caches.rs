//! What one service keeps in memory between requests: the ground truths it
//! computed and the small results derived from them (see
//! [`crate::core::truth::aggregate_cache`]) and the counts and computations in flight
//! that concurrent views share (see [`crate::core::support::coalesce`]). Owned by the
//! service (its `AppState`), so two services in one process, as in the
//! tests, share nothing; the command line makes its own.
//!
//! The heavy-work thread ([`crate::core::support::heavy`]) is not here on purpose: one per
//! process is its point (it reuses the memory it frees).

use crate::core::support::coalesce::Coalesced;
use crate::core::truth::aggregate_cache::{DerivedValue, GroundTruths};
use crate::core::truth::progress::{AnnotatorProgress, CampaignProgress};
use std::sync::Arc;
use uuid::Uuid;

/// A service's caches and shared computations.
#[derive(Default)]
pub struct Caches {
    /// Ground truths and what is derived from them, by campaign.
    pub(in crate::core) ground_truths: GroundTruths,
    /// Summaries being derived, by campaign and name.
    pub(in crate::core) summaries: Coalesced<(Uuid, &'static str), DerivedValue, crate::error::Error>,
    /// Campaign figures being counted, by campaign.
    pub(in crate::core) progress: Coalesced<Uuid, CampaignProgress, crate::error::Error>,
    /// Per-annotator rows being counted, by campaign and row limit.
    pub(in crate::core) per_annotator: Coalesced<(Uuid, Option<i64>), Arc<Vec<AnnotatorProgress>>, crate::error::Error>,
}
