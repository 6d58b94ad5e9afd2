//! Demo data: accounts and one small campaign of each kind, with images the
//! project draws itself (SVG), so `atelier demo` works offline; and, for the
//! kinds that offer simulated workers, an answered copy, so that an admin
//! finds quality figures, ground truth and payouts to look at.

use crate::auth::{users, Role};
use crate::core::campaign::states::CampaignState;
use crate::core::crowd::invitations;
use crate::core::kind::contract::{DemoCampaign, Simulated};
use crate::core::work::record::Recorder;
use crate::core::work::responses::Submission;
use crate::core::{campaign::campaigns, item::items, work::annotator, work::batches, Registry};
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashMap;

/// Demo admin login.
pub const ADMIN: (&str, &str) = ("admin", "atelier-admin");
/// Demo expert login.
pub const EXPERT: (&str, &str) = ("expert", "atelier-expert");
/// A second demo expert (expert campaigns are labelled by several experts).
pub const EXPERT_2: (&str, &str) = ("expert2", "atelier-expert2");

/// Seeds the demo data unless it is already there; returns a guide to print.
/// Every kind that offers a demo campaign gets one.
pub async fn seed(pool: &PgPool, kinds: &Registry, public_url: &str) -> Result<String> {
    for (role, (name, password)) in [(Role::Admin, ADMIN), (Role::Expert, EXPERT), (Role::Expert, EXPERT_2)] {
        if users::by_name(pool, name).await?.is_none() {
            users::create(pool, role, name, password).await?;
        }
    }
    let admin = users::by_name(pool, ADMIN.0).await?.ok_or(crate::error::Error::NotFound("user"))?;
    let existing = campaigns::list(pool).await?;
    let mut links = Vec::new();
    let mut answered = Vec::new();
    for kind in kinds.all() {
        let Some(demo) = kind.about().demo.map(|demo| demo()) else { continue };
        if let Some(simulated) = demo.simulated {
            let name = format!("{} (answered by {} simulated workers)", demo.name, simulated.workers);
            let campaign = match existing.iter().find(|c| c.name == name) {
                Some(c) => c.clone(),
                None => {
                    let campaign = seed_one(pool, kinds, kind.name(), &name, demo.clone(), admin.id).await?;
                    simulate(pool, kinds, &campaign, simulated).await?;
                    campaign
                }
            };
            answered.push(format!("    {name}: {public_url}/admin/campaigns/{}", campaign.id));
        }
        let campaign = match existing.iter().find(|c| c.name == demo.name) {
            Some(c) => c.clone(),
            None => seed_one(pool, kinds, kind.name(), demo.name, demo, admin.id).await?,
        };
        if campaign.settings.crowd() {
            let token = invitations::tokens_of(pool, campaign.id).await?.into_iter().next().unwrap_or_default();
            links.push(format!("  Crowd worker, {}: {public_url}/join/{token}?worker_id=demo-worker-1", campaign.name));
        } else {
            links.push(format!("  Experts, {}: log in as either expert, then {public_url}/expert", campaign.name));
        }
    }
    Ok(format!(
        "Atelier demo is ready at {public_url}\n\
         \n  Admin:  {public_url}/login  name `{}` password `{}`\n\
         \x20 Experts: {public_url}/login  name `{}` password `{}`, or `{}` / `{}`\n{}\n\
         \x20   (any worker_id works; each id is a separate worker)\n\
         \x20 Already answered, to look at as the admin (quality, ground truth, payouts):\n{}\n\
         \x20 API: {public_url}/api/v1/openapi.json\n",
        ADMIN.0,
        ADMIN.1,
        EXPERT.0,
        EXPERT.1,
        EXPERT_2.0,
        EXPERT_2.1,
        links.join("\n"),
        answered.join("\n")
    ))
}

/// Creates, batches and opens one demo campaign; crowd campaigns get an
/// invitation link.
async fn seed_one(
    pool: &PgPool,
    kinds: &Registry,
    kind: &str,
    name: &str,
    demo: DemoCampaign,
    admin: uuid::Uuid,
) -> Result<campaigns::Campaign> {
    let campaign = campaigns::create(pool, kinds, kind, name, &demo.config, &demo.settings).await?;
    items::import(pool, kinds, campaign.id, &demo.items).await?;
    batches::form(pool, kinds, campaign.id, demo.seed).await?;
    let campaign = campaigns::set_state(pool, campaign.id, CampaignState::Open).await?;
    if campaign.settings.crowd() {
        invitations::create(pool, campaign.id, admin, &invitations::NewLink::default()).await?;
    }
    Ok(campaign)
}

/// Has the simulated workers answer the campaign as workers would: each
/// answers the background questions, then takes batches until none is left
/// for them (or the kind stops them), answers every task and submits.
async fn simulate(pool: &PgPool, kinds: &Registry, campaign: &campaigns::Campaign, sim: Simulated) -> Result<()> {
    let items: HashMap<uuid::Uuid, (Value, Option<Value>)> =
        items::list(pool, campaign.id).await?.into_iter().map(|i| (i.id, (i.payload, i.gold))).collect();
    let questions = kinds.rules(campaign)?.policy().background.clone();
    // Answers are stored as the service stores them: through the Recorder,
    // with the same checks and the same statements.
    let recorder = Recorder::new(pool.clone(), crate::db::statements::StatementPool::beside(pool), Default::default());
    for worker in 1..=sim.workers {
        let user = users::worker(pool, &format!("demo-sim-{worker:02}")).await?;
        let background: Vec<(String, String)> = questions
            .iter()
            .filter_map(|q| Some((format!("bg_{}", q.id), q.options.get(worker % q.options.len().max(1))?.clone())))
            .collect();
        loop {
            let assignment = match annotator::start(pool, kinds, campaign, user.id, &background, true).await {
                Ok(Some(a)) => a,
                // No batch left for them, or stopped by the kind's checks.
                Ok(None) | Err(Error::Forbidden(_)) => break,
                Err(e) => return Err(e),
            };
            for item_id in assignment.item_order() {
                let Some((payload, gold)) = items.get(&item_id) else { continue };
                let answer = (sim.answer)(worker, payload, gold.as_ref());
                let time_on_task_ms = Some(3_000 + 250 * worker as i32);
                let sub = Submission { item_id, answer, time_on_task_ms, change: false };
                recorder.record(kinds, assignment.id, user.id, &sub).await?;
            }
            annotator::complete(pool, kinds, assignment.id, user.id).await?;
            recorder.forget(assignment.id);
        }
    }
    Ok(())
}

/// Draws a demo picture of a garment category (`tops`, `pants`, `shoes`,
/// `bags`, `watches`), coloured by `n`: the pictures every kind's demo
/// items may link to (`/demo/images/{role}/{n}.svg`); a kind draws its own
/// roles first (`TaskKind::demo_picture`).
pub fn svg(role: &str, n: usize) -> Option<String> {
    let color = color(n);
    let body = match role {
        "tops" => shirt(n),
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
    Some(picture(&body))
}

/// The colour of picture `n`.
fn color(n: usize) -> &'static str {
    const COLORS: [&str; 6] = ["#c0392b", "#2874a6", "#229954", "#b7950b", "#7d3c98", "#d35400"];
    COLORS[n % COLORS.len()]
}

/// A shirt in the colour of picture `n` (SVG elements, not a picture).
pub fn shirt(n: usize) -> String {
    format!(
        r#"<path d="M70 60 L100 45 Q120 60 140 45 L170 60 L190 100 L165 110 L160 90 L160 190 L80 190 L80 90 L75 110 L50 100 Z" fill="{}"/>"#,
        color(n)
    )
}

/// A standing person, facing out (SVG elements, not a picture).
pub const PERSON: &str = r##"<circle cx="120" cy="30" r="18" fill="#e0b894"/><rect x="85" y="50" width="70" height="140" rx="20" fill="#d5d8dc"/><rect x="90" y="190" width="25" height="60" fill="#566573"/><rect x="125" y="190" width="25" height="60" fill="#566573"/>"##;

/// A whole demo picture (240 x 260, a light background) around `body`.
pub fn picture(body: &str) -> String {
    format!(
        r##"<svg xmlns="http://www.w3.org/2000/svg" viewBox="0 0 240 260" width="240" height="260"><rect width="240" height="260" fill="#f4f1ec"/>{body}</svg>"##
    )
}
