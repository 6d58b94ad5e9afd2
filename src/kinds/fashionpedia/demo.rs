//! The Fashionpedia demo campaign: a drawn image with two masks (a shirt as
//! a polygon, its sleeve as RLE) and a small ontology written for the demo.

use super::coco::{Annotation, Image};
use super::masks::encode_counts;
use super::ontology::Ontology;
use super::{store, FpConfig};
use crate::core::kind::contract::DemoCampaign;
use serde_json::json;

/// A small ontology in the released layout.
pub const ONTOLOGY: &str = r#"{"categories": [
  {"id": 0, "name": "shirt, blouse", "supercategory": "upperbody", "level": 2, "taxonomy_id": "demo-c0"},
  {"id": 31, "name": "sleeve", "supercategory": "garment parts", "level": 2, "taxonomy_id": "demo-c31"}],
 "attributes": [
  {"id": 115, "name": "symmetrical", "supercategory": "silhouette", "level": 1, "taxonomy_id": "demo-a115"},
  {"id": 116, "name": "asymmetrical", "supercategory": "silhouette", "level": 1, "taxonomy_id": "demo-a116"},
  {"id": 160, "name": "wrist-length", "supercategory": "length", "level": 1, "taxonomy_id": "demo-a160"},
  {"id": 161, "name": "elbow-length", "supercategory": "length", "level": 1, "taxonomy_id": "demo-a161"},
  {"id": 230, "name": "plain (pattern)", "supercategory": "textile pattern", "level": 1, "taxonomy_id": "demo-a230"},
  {"id": 231, "name": "stripe", "supercategory": "textile pattern", "level": 1, "taxonomy_id": "demo-a231"},
  {"id": 286, "name": "leopard", "supercategory": "animal", "level": 2, "taxonomy_id": "demo-a286"}]}"#;

/// The demo campaign `atelier demo` seeds.
pub fn campaign() -> DemoCampaign {
    let ontology = Ontology::parse(ONTOLOGY).expect("the demo ontology parses");
    let names: std::collections::BTreeMap<String, String> =
        ontology.attributes.iter().map(|a| (a.id.to_string(), a.name.clone())).collect();
    let config_json = json!({"masks_per_batch": 5, "attribute_names": names});
    let config = FpConfig::parse(&config_json).expect("demo config");
    let image = Image { id: 1, width: 240, height: 260, file_name: "/demo/images/tops/0.svg".into() };
    // The demo shirt's outline, and its left sleeve as a run-length mask.
    let shirt = json!([[
        70, 60, 100, 45, 140, 45, 170, 60, 190, 100, 165, 110, 160, 90, 160, 190, 80, 190, 80, 90, 75, 110, 50, 100
    ]]);
    let mut counts = Vec::new();
    let mut last_end = 0u64;
    for x in 50u64..80 {
        let (top, bottom) = (60 + (80 - x) / 3, 105);
        let start = x * 260 + top;
        counts.push(start - last_end);
        counts.push(bottom - top);
        last_end = x * 260 + bottom;
    }
    counts.push(240 * 260 - last_end);
    let sleeve = json!({"size": [260, 240], "counts": encode_counts(&counts)});
    let annotations = vec![
        Annotation {
            id: 1,
            image: image.clone(),
            category_id: 0,
            segmentation: shirt,
            area: 11_000.0,
            bbox: [50.0, 45.0, 140.0, 145.0],
            attribute_ids: vec![],
            iscrowd: 0,
            deepfashion2: Default::default(),
        },
        Annotation {
            id: 2,
            image,
            category_id: 31,
            segmentation: sleeve,
            area: 1_000.0,
            bbox: [50.0, 60.0, 30.0, 45.0],
            attribute_ids: vec![],
            iscrowd: 0,
            deepfashion2: Default::default(),
        },
    ];
    DemoCampaign {
        name: "Demo: Fashionpedia attributes",
        config: config_json,
        settings: Default::default(),
        items: store::tasks(&config, &ontology, &annotations),
        seed: 3,
        simulated: None,
    }
}
