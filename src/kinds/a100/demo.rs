//! The A100 demo campaigns: four questions with drawn outfits, as LAT
//! (crowd majority) and as AAT (with an answer key and dimensions).

use super::question::{self, Choice, OutfitItem, Question};
use crate::core::item::new_item::NewItem;
use crate::core::kind::contract::{DemoCampaign, Simulated};
use serde_json::{json, Value};

/// The demo campaign `atelier demo` seeds for LAT (`aat` false) or AAT.
pub fn campaign(aat: bool) -> DemoCampaign {
    let config = json!({"participants": 50, "background": [
        {"id": "fashion", "question": "Do you have a background in fashion?", "options": ["yes", "no"]},
        {"id": "age", "question": "Your age band", "options": ["18-24", "25-34", "35-49", "50+"]}
    ]});
    let item = |category: &str, n: usize| OutfitItem {
        image: format!("/demo/images/{}/{n}.svg", category.to_lowercase()),
        category: category.into(),
    };
    let dims = [("Color", "Warm Tone"), ("Style", "Minimal"), ("Season", "Winter"), ("Balance", "Proportion")];
    let blanks = ["Shoes", "Bags", "Shoes", "Watches"];
    let questions: Vec<Question> = (0..4)
        .map(|q| {
            let blank = blanks[q];
            let mut outfit = vec![item("Tops", q), item("Pants", q + 1)];
            if blank != "Shoes" {
                outfit.push(item("Shoes", q + 2));
            }
            let choices = (0..5)
                .map(|c| Choice {
                    id: format!("q{q}c{c}"),
                    image: format!("/demo/images/{}/{}.svg", blank.to_lowercase(), q * 5 + c),
                    category: Some(blank.into()),
                })
                .collect();
            Question {
                id: format!("demo-q{q}"),
                outfit,
                blank_category: blank.into(),
                choices,
                answer: aat.then(|| format!("q{q}c{}", q % 5)),
                dimension: aat.then(|| dims[q].0.to_owned()),
                sub_dimension: aat.then(|| dims[q].1.to_owned()),
                attention_check: false,
                overrides: vec![],
            }
        })
        .collect();
    let items = questions
        .iter()
        .map(|q| {
            let (payload, gold) = question::to_item(q);
            NewItem { external_id: q.id.clone(), payload, gold }
        })
        .collect();
    DemoCampaign {
        name: if aat { "Demo: A100 AAT" } else { "Demo: A100 LAT" },
        config,
        settings: Default::default(),
        items,
        seed: 11,
        simulated: (!aat).then_some(Simulated { workers: 12, answer: simulated_choice }),
    }
}

/// How the demo's simulated participants choose: the question's first
/// choice leads, the second and third follow, and questions differ in how
/// much the crowd agrees (so the page has consistencies to rank).
fn simulated_choice(worker: usize, payload: &Value, _gold: Option<&Value>) -> Value {
    let question: usize = payload["choices"][0]["id"].as_str().unwrap_or_default().bytes().map(usize::from).sum();
    let agreeing = 5 + question % 5; // of twelve
    let picked = match worker {
        w if w <= agreeing => 0,
        w if w % 2 == 0 => 1,
        _ => 2,
    };
    json!({ "choice": payload["choices"][picked]["id"] })
}
