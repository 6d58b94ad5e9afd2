//! The VTON demo campaign: eight try-ons of two models and three sanity
//! tasks, drawn by [`picture`] from the shared demo shapes.

use crate::core::item::new_item::NewItem;
use crate::core::kind::contract::{DemoCampaign, Simulated};
use serde_json::{json, Value};

/// The demo campaign `atelier demo` seeds.
pub fn campaign() -> DemoCampaign {
    let img = |role: &str, n: usize| format!("/demo/images/{role}/{n}.svg");
    let mut items: Vec<NewItem> = (0..8)
        .map(|n| NewItem {
            external_id: format!("tryon-{n}"),
            payload: json!({
                "garment": img("garment", n), "person": img("person", n), "tryon": img("tryon", n),
                "reference": img("reference", n), "model": (["model-a", "model-b"][n % 2]), "category": "tops", "dataset": "demo"
            }),
            gold: None,
        })
        .collect();
    for n in 8..=10 {
        // Sanity tasks must look like any other task to the worker: their
        // images are numbered on from the others'. A broken try-on is
        // Unnatural (1), an intact one Natural (3).
        let expected = if BROKEN.contains(&n) { 1 } else { 3 };
        items.push(NewItem {
            external_id: format!("sanity-{n}"),
            payload: json!({"garment": img("garment", n), "person": img("person", n), "tryon": img("tryon", n),
                            "reference": img("reference", n), "model": "model-a", "category": "tops", "dataset": "demo"}),
            gold: Some(json!({"rating": expected})),
        });
    }
    DemoCampaign {
        name: "Demo: VTON quality rating",
        config: json!({"tasks_per_questionnaire": 6, "sanity_per_questionnaire": 2, "appearances": 2, "annotators_per_questionnaire": 3}),
        settings: Default::default(),
        items,
        seed: 7,
        simulated: Some(Simulated { workers: 12, answer: simulated_rating }),
    }
}

/// How the demo's simulated workers rate: model A's try-ons look natural,
/// model B's slightly off, each worker now and then one step away; sanity
/// tasks as expected, except by worker 4, who rates everything natural
/// (and so fails the sanity checks and is curated out).
fn simulated_rating(worker: usize, payload: &Value, gold: Option<&Value>) -> Value {
    let seen: i64 = if payload["model"] == "model-a" { 3 } else { 2 };
    let image = payload["tryon"].as_str().unwrap_or_default().bytes().map(usize::from).sum::<usize>() + worker * 7;
    let rating = match gold.and_then(|g| g["rating"].as_i64()) {
        _ if worker == 4 => 3,
        Some(expected) => expected,
        None if image.is_multiple_of(5) => (seen - 1).max(1),
        None => seen,
    };
    json!({ "rating": rating })
}

/// The try-ons drawn visibly broken: the sanity tasks whose expected answer
/// is Unnatural. Their addresses are numbered as any other's, so nothing in
/// a task's payload tells a worker it is a sanity task.
const BROKEN: [usize; 2] = [8, 10];

/// Draws a picture of the demo's items (`/demo/images/{role}/{n}.svg`): a
/// garment, a person, a try-on (the person wearing the garment; broken for
/// the sanity tasks in [`BROKEN`]) or a reference; `None` for other roles.
pub fn picture(role: &str, n: usize) -> Option<String> {
    use crate::demo::{shirt, PERSON};
    let body = match role {
        "garment" => shirt(n),
        "person" => PERSON.to_owned(),
        "tryon" if BROKEN.contains(&n) => {
            format!(r#"{PERSON}<g transform="rotate(35 120 120) translate(30 -20)">{}</g>"#, shirt(n))
        }
        "tryon" | "reference" => format!("{PERSON}{}", shirt(n)),
        _ => return None,
    };
    Some(crate::demo::picture(&body))
}
