//! The campaign a vsd route's path names, checked to be of this kind.

use crate::http::kind_routes::{CampaignKind, KindCampaign};

/// The routes of VSD campaigns (see [`KindCampaign`]).
pub struct Vsd;

impl CampaignKind for Vsd {
    const KINDS: &'static [&'static str] = &[super::super::NAME];
    const WHAT: &'static str = "a VSD";
    type Config = super::super::VsdConfig;
}

/// The VSD campaign the path names.
pub type VsdCampaign = KindCampaign<Vsd>;
