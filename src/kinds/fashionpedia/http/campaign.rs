//! The campaign a fashionpedia route's path names, checked to be of this kind.

use crate::http::kind_routes::{CampaignKind, KindCampaign};

/// The routes of Fashionpedia campaigns (see [`KindCampaign`]).
pub struct Fashionpedia;

impl CampaignKind for Fashionpedia {
    const KINDS: &'static [&'static str] = &[super::super::NAME];
    const WHAT: &'static str = "a Fashionpedia";
    type Config = super::super::FpConfig;
}

/// The Fashionpedia campaign the path names.
pub type FashionpediaCampaign = KindCampaign<Fashionpedia>;
