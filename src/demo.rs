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

/// Seeds the demo data unless it is already there; returns a guide to print.
pub async fn seed(pool: &PgPool, public_url: &str) -> Result<String> {
    for (role, (name, password)) in [(Role::Admin, ADMIN), (Role::Expert, EXPERT)] {
        if users::by_name(pool, name).await?.is_none() {
            users::create(pool, role, name, password).await?;
        }
    }
    let admin = users::by_name(pool, ADMIN.0).await?.ok_or(crate::core::Error::NotFound("user"))?;
    let existing = campaigns::list(pool).await?.into_iter().find(|c| c.name == VTON_NAME);
    let vton = match existing {
        Some(c) => c,
        None => seed_vton(pool, admin.id).await?,
    };
    let token = invitations::tokens_of(pool, vton.id).await?.into_iter().next().unwrap_or_default();
    Ok(format!(
        "Atelier demo is ready at {public_url}\n\
         \n  Admin:  {public_url}/login  name `{}` password `{}`\n\
         \x20 Expert: {public_url}/login  name `{}` password `{}`\n\
         \x20 Crowd worker (VTON): {public_url}/join/{token}?worker_id=demo-worker-1\n\
         \x20   (any worker_id works; each id is a separate worker)\n\
         \x20 API: {public_url}/api/v1/openapi.json\n",
        ADMIN.0, ADMIN.1, EXPERT.0, EXPERT.1
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
        _ => return None,
    };
    Some(format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 260" width="240" height="260"><rect width="240" height="260" fill="#f4f1ec"/>{body}</svg>"##
    ))
}
