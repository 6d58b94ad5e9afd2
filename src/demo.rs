//! Demo data: accounts and one small campaign of each kind, with images the
//! project draws itself (SVG), so `atelier demo` works offline.

use crate::auth::{invitations, users, Role};
use crate::core::items::NewItem;
use crate::core::{batches, campaigns, items, Result};
use serde_json::json;
use sqlx::PgPool;

/// Demo admin login.
pub const ADMIN: (&str, &str) = ("admin", "atelier-admin");
/// Demo expert login.
pub const EXPERT: (&str, &str) = ("expert", "atelier-expert");

const VTON_NAME: &str = "Demo: VTON quality rating";
const LAT_NAME: &str = "Demo: A100 LAT";
const AAT_NAME: &str = "Demo: A100 AAT";

/// Seeds the demo data unless it is already there; returns a guide to print.
pub async fn seed(pool: &PgPool, public_url: &str) -> Result<String> {
    for (role, (name, password)) in [(Role::Admin, ADMIN), (Role::Expert, EXPERT)] {
        if users::by_name(pool, name).await?.is_none() {
            users::create(pool, role, name, password).await?;
        }
    }
    let admin = users::by_name(pool, ADMIN.0).await?.ok_or(crate::core::Error::NotFound("user"))?;
    let existing = campaigns::list(pool).await?;
    let mut links = Vec::new();
    for name in [VTON_NAME, LAT_NAME, AAT_NAME] {
        let campaign = match existing.iter().find(|c| c.name == name) {
            Some(c) => c.clone(),
            None if name == VTON_NAME => seed_vton(pool, admin.id).await?,
            None => seed_a100(pool, admin.id, name, name == AAT_NAME).await?,
        };
        let token = invitations::tokens_of(pool, campaign.id).await?.into_iter().next().unwrap_or_default();
        links.push(format!("  Crowd worker, {name}: {public_url}/join/{token}?worker_id=demo-worker-1"));
    }
    Ok(format!(
        "Atelier demo is ready at {public_url}\n\
         \n  Admin:  {public_url}/login  name `{}` password `{}`\n\
         \x20 Expert: {public_url}/login  name `{}` password `{}`\n{}\n\
         \x20   (any worker_id works; each id is a separate worker)\n\
         \x20 API: {public_url}/api/v1/openapi.json\n",
        ADMIN.0,
        ADMIN.1,
        EXPERT.0,
        EXPERT.1,
        links.join("\n")
    ))
}

async fn seed_vton(pool: &PgPool, admin: uuid::Uuid) -> Result<campaigns::Campaign> {
    let config = json!({"tasks_per_questionnaire": 6, "sanity_per_questionnaire": 2, "appearances": 2, "annotators_per_questionnaire": 3});
    let campaign = campaigns::create(pool, "vton", VTON_NAME, &config).await?;
    let img = |role: &str, n: usize| format!("/demo/images/{role}/{n}.svg");
    let mut new_items: Vec<NewItem> = (0..8)
        .map(|n| NewItem {
            external_id: format!("tryon-{n}"),
            payload: json!({
                "garment": img("garment", n), "person": img("person", n), "tryon": img("tryon", n),
                "reference": img("reference", n), "model": (["model-a", "model-b"][n % 2]), "category": "tops", "dataset": "demo"
            }),
            gold: None,
        })
        .collect();
    for (n, expected) in [(100, 1), (101, 3), (102, 1)] {
        // Sanity tasks must look like any other task to the worker.
        let tryon = img("tryon", n);
        new_items.push(NewItem {
            external_id: format!("sanity-{n}"),
            payload: json!({"garment": img("garment", n), "person": img("person", n), "tryon": tryon,
                            "reference": img("reference", n), "model": "model-a", "category": "tops", "dataset": "demo"}),
            gold: Some(json!({"rating": expected})),
        });
    }
    items::import(pool, campaign.id, &new_items).await?;
    batches::form(pool, campaign.id, 7).await?;
    let campaign = campaigns::set_state(pool, campaign.id, "open").await?;
    invitations::create(pool, campaign.id, admin).await?;
    Ok(campaign)
}

async fn seed_a100(pool: &PgPool, admin: uuid::Uuid, name: &str, aat: bool) -> Result<campaigns::Campaign> {
    use crate::kinds::a100::question::{self, Choice, OutfitItem, Question};
    let kind = if aat { "a100-aat" } else { "a100-lat" };
    let config = json!({"participants": 50, "background": [
        {"id": "fashion", "question": "Do you have a background in fashion?", "options": ["yes", "no"]},
        {"id": "age", "question": "Your age band", "options": ["18-24", "25-34", "35-49", "50+"]}
    ]});
    let campaign = campaigns::create(pool, kind, name, &config).await?;
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
    let items: Vec<NewItem> = questions
        .iter()
        .map(|q| {
            let (payload, gold) = question::to_item(q);
            NewItem { external_id: q.id.clone(), payload, gold }
        })
        .collect();
    items::import(pool, campaign.id, &items).await?;
    batches::form(pool, campaign.id, 11).await?;
    let campaign = campaigns::set_state(pool, campaign.id, "open").await?;
    invitations::create(pool, campaign.id, admin).await?;
    Ok(campaign)
}

/// Draws a demo image: a garment, a person, a try-on (person wearing the
/// garment), a reference, or a visibly broken try-on for sanity tasks.
pub fn svg(role: &str, n: usize) -> Option<String> {
    const COLORS: [&str; 6] = ["#c0392b", "#2874a6", "#229954", "#b7950b", "#7d3c98", "#d35400"];
    let color = COLORS[n % COLORS.len()];
    let shirt = format!(
        r#"<path d="M70 60 L100 45 Q120 60 140 45 L170 60 L190 100 L165 110 L160 90 L160 190 L80 190 L80 90 L75 110 L50 100 Z" fill="{color}"/>"#
    );
    let person = r##"<circle cx="120" cy="30" r="18" fill="#e0b894"/><rect x="85" y="50" width="70" height="140" rx="20" fill="#d5d8dc"/><rect x="90" y="190" width="25" height="60" fill="#566573"/><rect x="125" y="190" width="25" height="60" fill="#566573"/>"##;
    let body = match role {
        "garment" => shirt,
        "person" => person.to_owned(),
        // Demo sanity try-ons 100 and 102 are visibly broken (answer: Unnatural).
        "tryon" if n == 100 || n == 102 => {
            format!(r#"{person}<g transform="rotate(35 120 120) translate(30 -20)">{shirt}</g>"#)
        }
        "tryon" | "reference" => format!("{person}{shirt}"),
        "tops" => shirt,
        "pants" => {
            format!(r#"<path d="M80 30 L160 30 L170 240 L130 240 L120 110 L110 240 L70 240 Z" fill="{color}"/>"#)
        }
        "shoes" => format!(r#"<path d="M40 170 L110 170 Q120 200 200 200 L200 225 L40 225 Z" fill="{color}"/>"#),
        "bags" => format!(
            r#"<rect x="60" y="100" width="120" height="100" rx="12" fill="{color}"/><path d="M90 100 Q120 40 150 100" stroke="{color}" stroke-width="8" fill="none"/>"#
        ),
        "watches" => format!(
            r##"<rect x="105" y="40" width="30" height="180" fill="#555"/><circle cx="120" cy="130" r="38" fill="{color}"/><circle cx="120" cy="130" r="30" fill="#fff"/>"##
        ),
        _ => return None,
    };
    Some(format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 260" width="240" height="260"><rect width="240" height="260" fill="#f4f1ec"/>{body}</svg>"##
    ))
}
