//! The VSD demo campaign: twelve drawn catalog images, three models' top 3
//! for four queries, so an expert has a few pairs to label.

use super::eds::{self, Ranked};
use super::{pool, VsdConfig};
use crate::core::kind::contract::DemoCampaign;
use serde_json::json;

/// The demo campaign `atelier demo` seeds.
pub fn campaign() -> DemoCampaign {
    let image = |n: usize| format!("/demo/images/{}/{n}.svg", ["tops", "pants", "bags"][n % 3]);
    let mut rankings = Vec::new();
    for (m, model) in ["clip", "dino", "beit"].iter().enumerate() {
        for q in 0..4 {
            for rank in 0..3u32 {
                // Each model ranks a slightly different neighbourhood of the query.
                let c = (q * 3 + 1 + m + rank as usize * 2) % 12;
                if c != q * 3 {
                    rankings.push(Ranked { model: (*model).into(), query: image(q * 3), candidate: image(c), rank });
                }
            }
        }
    }
    let config = VsdConfig::parse(&json!({"k": 3, "pairs_per_batch": 20, "catalog": 12})).expect("demo config");
    let s = eds::suspects(&rankings, 3, None);
    let items = pool::items(&config, &s.pairs, false);
    DemoCampaign {
        name: "Demo: VSD suspect pairs",
        config: json!({"k": 3, "pairs_per_batch": 20, "catalog": 12}),
        settings: Default::default(),
        items,
        seed: 5,
        simulated: None,
    }
}
