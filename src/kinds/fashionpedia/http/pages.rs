//! The Fashionpedia page of a campaign: ontology and masks in, which
//! super-categories apply to which categories, and the statistics (the
//! paper's Table 5 layout, attributes per mask, review acceptance,
//! suggestions for the ontology). Also serves the task page's script.

use super::FashionpediaCampaign;
use crate::core::{campaign::campaigns, truth::ground_truth};
use crate::http::extract::{Admin, Path};
use crate::http::kind_routes::KindCampaign;
use crate::http::kind_routes::{asset, CSS, JAVASCRIPT};
use crate::http::pages::{render_with, upload, OnPage, PageResult, Refusal};
use crate::http::{csrf, AppState};
use crate::kinds::fashionpedia::result::FpResult;
use crate::kinds::fashionpedia::store;
use askama::Template;
use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use std::collections::BTreeMap;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    let limit = axum::extract::DefaultBodyLimit::max(crate::http::import_limit());
    Router::new()
        .route("/admin/campaigns/{id}/fashionpedia", get(page))
        .route("/admin/campaigns/{id}/fashionpedia/ontology", post(import_ontology).layer(limit))
        .route("/admin/campaigns/{id}/fashionpedia/coco", post(import_coco).layer(limit))
        .route("/admin/campaigns/{id}/fashionpedia/deepfashion2", post(import_df2).layer(limit))
        .route("/kinds/fashionpedia/task.js", asset(JAVASCRIPT, include_str!("../task.js")))
        .route("/kinds/fashionpedia/style.css", asset(CSS, include_str!("../style.css")))
}

#[derive(Template)]
#[template(path = "kinds/fashionpedia/templates/admin.html")]
struct FpPage {
    campaign: campaigns::Campaign,
    csrf_token: String,
    ontology: Option<(usize, usize)>,
    applies: BTreeMap<String, Vec<String>>,
    result: FpResult,
    /// A refused import (`ontology` or `masks`), shown beside its form.
    refused: Option<Refusal>,
}

fn pct(v: &Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |x| format!("{:.1} %", x * 100.0))
}

impl FpPage {
    fn pct(&self, v: &Option<f64>) -> String {
        pct(v)
    }

    fn num(&self, v: &Option<f64>) -> String {
        v.map_or_else(|| "–".to_owned(), |x| format!("{x:.3}"))
    }

    fn refusal(&self, form: &str) -> Option<String> {
        Refusal::of_form(&self.refused, form)
    }

    fn kept(&self, form: &str, field: &str) -> String {
        Refusal::kept_in(&self.refused, form, field)
    }

    fn attribute(&self, id: &u32) -> String {
        self.result.attribute_names.get(id).cloned().unwrap_or_else(|| id.to_string())
    }
}

async fn page(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    show_page(&s, &session, id, None).await
}

/// The page, with a refused import beside its form (and the refusal's status).
async fn show_page(s: &AppState, session: &Session, id: Uuid, refused: Option<Refusal>) -> PageResult {
    let campaign = FashionpediaCampaign::of(s, id).await?;
    let config = FashionpediaCampaign::config(s, &campaign)?;
    let ontology = store::ontology(&s.pool, id).await?;
    let applies = match (&config.applies, &ontology) {
        (Some(a), _) => a.clone(),
        (None, Some(o)) => o.default_applicability(),
        (None, None) => BTreeMap::new(),
    };
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    render_with(
        status,
        &FpPage {
            ontology: ontology.as_ref().map(|o| (o.categories.len(), o.attributes.len())),
            result: FpResult::from_json(&ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?)?,
            csrf_token: csrf::token(session).await?,
            campaign,
            applies,
            refused,
        },
    )
}

/// An import's outcome: its message flashed and back to the page, or the
/// refusal beside the form with the pasted text.
async fn act(
    s: &AppState,
    session: &Session,
    id: Uuid,
    form: &'static str,
    kept: Vec<(String, String)>,
    outcome: Result<String, crate::error::Error>,
) -> PageResult {
    let to = format!("/admin/campaigns/{id}/fashionpedia");
    crate::http::pages::act(session, outcome, &to, form, kept, |r| show_page(s, session, id, Some(r))).await
}

async fn import_ontology(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: FashionpediaCampaign,
    req: axum::extract::Request,
) -> PageResult {
    let upload = upload::read(req).await?;
    let outcome = async { store::save_ontology(&s.pool, &s.kinds, id, upload.text()?).await }
        .await
        .map(|o| format!("Ontology stored: {} categories, {} attributes.", o.categories.len(), o.attributes.len()));
    act(&s, &session, id, "ontology", Refusal::keep_pasted(&upload), outcome).await
}

async fn import_df2(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: FashionpediaCampaign,
    req: axum::extract::Request,
) -> PageResult {
    let upload = upload::read(req).await?;
    let outcome = async { store::import_df2(&s.pool, &s.kinds, id, upload.text()?, None).await }
        .await
        .map(|r| format!("{} DeepFashion2 item(s) read; {} task(s) created.", r.masks, r.tasks));
    act(&s, &session, id, "masks", Vec::new(), outcome).await
}

async fn import_coco(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: FashionpediaCampaign,
    req: axum::extract::Request,
) -> PageResult {
    let upload = upload::read(req).await?;
    let outcome = async { store::import_coco(&s.pool, &s.kinds, id, upload.text()?).await }.await.map(|r| {
        format!(
            "{} mask(s) read, {} with zero area left out; {} task(s) created. Form batches on the campaign page.",
            r.masks, r.zero_area, r.tasks
        )
    });
    act(&s, &session, id, "masks", Refusal::keep_pasted(&upload), outcome).await
}
