//! The campaign a a100 route's path names, checked to be of this kind.

use crate::http::kind_routes::{CampaignKind, KindCampaign};

/// The routes of A100 (LAT or AAT) campaigns (see [`KindCampaign`]).
pub struct A100;

impl CampaignKind for A100 {
    const KINDS: &'static [&'static str] = &[super::super::LAT, super::super::AAT];
    const WHAT: &'static str = "an A100";
    type Config = super::super::A100Config;
}

/// The A100 (LAT or AAT) campaign the path names.
pub type A100Campaign = KindCampaign<A100>;
