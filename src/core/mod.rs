//! The generic annotation core: campaigns, items, batches, assignments,
//! responses and progress. Task kinds plug in through [`kind::TaskKind`];
//! nothing here depends on which kinds exist.

pub mod assignments;
pub mod batches;
pub mod campaigns;
mod error;
pub mod ground_truth;
pub mod history;
pub mod images;
pub mod items;
pub mod kind;
pub mod payouts;
pub mod profiles;
pub mod progress;
pub mod releases;
pub mod responses;

pub use error::{Error, Result};

/// The kind plug-in of a campaign.
pub fn kinds_of(campaign: &campaigns::Campaign) -> Result<&'static dyn kind::TaskKind> {
    crate::kinds::find(&campaign.kind).ok_or(Error::NotFound("kind"))
}
