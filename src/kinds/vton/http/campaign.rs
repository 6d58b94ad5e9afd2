//! The campaign a vton route's path names, checked to be of this kind.

use crate::http::kind_routes::{CampaignKind, KindCampaign};

/// The routes of VTON campaigns (see [`KindCampaign`]).
pub struct Vton;

impl CampaignKind for Vton {
    const KINDS: &'static [&'static str] = &[super::super::NAME];
    const WHAT: &'static str = "a VTON";
    type Config = super::super::VtonConfig;
}

/// The VTON campaign the path names.
pub type VtonCampaign = KindCampaign<Vton>;
