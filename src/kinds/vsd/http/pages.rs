//! The VSD page of a campaign: build the pool (rankings in, the suspects at
//! k with sizes, overlap, pairs per query and the cost against brute
//! force), the results (estimates, agreement, flagged pairs, exports) and
//! model scoring side by side with the leave-one-model-out table. Also
//! serves images under `ATELIER_VSD_IMAGE_ROOT`.

use super::VsdCampaign;
use crate::core::{campaign::campaigns, truth::ground_truth};
use crate::http::extract::{Admin, Path};
use crate::http::kind_routes::KindCampaign;
use crate::http::kind_routes::{asset, CSS};
use crate::http::pages::paging::{PageQuery, Pager};
use crate::http::pages::{render_with, upload, OnPage, PageResult, Refusal};
use crate::http::{csrf, AppState};
use crate::kinds::vsd::eds::Suspects;
use crate::kinds::vsd::result::VsdResult;
use crate::kinds::vsd::scoring::{ModelReport, ScoringReport};
use crate::kinds::vsd::{import, pool, scoring, VsdConfig};
use askama::Template;
use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    let limit = axum::extract::DefaultBodyLimit::max(crate::http::import_limit());
    let router = Router::new()
        .route("/admin/campaigns/{id}/vsd", get(page))
        .route("/admin/campaigns/{id}/vsd/rankings", post(import_rankings).layer(limit))
        .route("/admin/campaigns/{id}/vsd/pool", post(add_to_pool))
        .route("/admin/campaigns/{id}/vsd/sample", post(add_sample))
        .route("/admin/campaigns/{id}/vsd/models", post(score_model).layer(limit))
        .route("/kinds/vsd/style.css", asset(CSS, include_str!("../style.css")));
    match std::env::var_os("ATELIER_VSD_IMAGE_ROOT") {
        Some(root) => router.nest_service("/kinds/vsd/images", tower_http::services::ServeDir::new(root)),
        None => router,
    }
}

/// Pairs per query, summarised.
struct PerQuery {
    min: usize,
    max: usize,
    mean: f64,
}

#[derive(Template)]
#[template(path = "kinds/vsd/templates/admin.html")]
struct VsdPage {
    campaign: campaigns::Campaign,
    config: VsdConfig,
    csrf_token: String,
    rankings: Vec<(String, i64)>,
    suspects: Suspects,
    per_query: PerQuery,
    pool_size: usize,
    result: VsdResult,
    /// This page's flagged pairs (the result's `flagged` is emptied).
    flagged: Vec<crate::kinds::vsd::result::Flag>,
    flagged_pager: Pager,
    scoring: ScoringReport,
    /// A refused form (`rankings`, `suspects` or `models`), shown beside it.
    refused: Option<Refusal>,
}

fn show(v: &Option<f64>) -> String {
    v.map_or_else(|| "–".to_owned(), |x| format!("{x:.4}"))
}

fn per_query(s: &Suspects) -> PerQuery {
    let mut counts: std::collections::BTreeMap<&str, usize> = std::collections::BTreeMap::new();
    for p in &s.pairs {
        *counts.entry(p.query.as_str()).or_default() += 1;
    }
    let n = counts.len();
    PerQuery {
        min: counts.values().copied().min().unwrap_or(0),
        max: counts.values().copied().max().unwrap_or(0),
        mean: if n > 0 { s.pairs.len() as f64 / n as f64 } else { 0.0 },
    }
}

async fn page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    query: axum::extract::RawQuery,
) -> PageResult {
    show_page(&s, &session, id, &PageQuery::parse(query.0.as_deref()), None).await
}

/// The page, with a refused form beside its section (and the refusal's status).
async fn show_page(
    s: &AppState,
    session: &Session,
    id: Uuid,
    query: &PageQuery,
    refused: Option<Refusal>,
) -> PageResult {
    let campaign = VsdCampaign::of(s, id).await?;
    let (config, suspects) = pool::suspects(&s.pool, id).await?;
    let mut result = VsdResult::from_json(&ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?)?;
    let flagged_pager = Pager::new(result.flagged.len(), query, "flagged", "flagged");
    let flagged = flagged_pager.keep(std::mem::take(&mut result.flagged));
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    render_with(
        status,
        &VsdPage {
            refused,
            flagged,
            flagged_pager,
            rankings: import::models(&s.pool, id).await?,
            per_query: per_query(&suspects),
            pool_size: result.pairs.len(),
            scoring: scoring::report(&s.pool, &s.kinds, &s.caches, id).await?,
            csrf_token: csrf::token(session).await?,
            campaign,
            config,
            suspects,
            result,
        },
    )
}

/// A page form's outcome: its message flashed and back to the page, or the
/// refusal beside the form with what was typed.
async fn act(
    s: &AppState,
    session: &Session,
    id: Uuid,
    form: &'static str,
    kept: Vec<(String, String)>,
    outcome: Result<String, crate::error::Error>,
) -> PageResult {
    let to = format!("/admin/campaigns/{id}/vsd");
    let first = PageQuery::default();
    crate::http::pages::act(session, outcome, &to, form, kept, |r| show_page(s, session, id, &first, Some(r))).await
}

async fn import_rankings(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VsdCampaign,
    req: axum::extract::Request,
) -> PageResult {
    let upload = upload::read(req).await?;
    let kept = Refusal::keep_pasted(&upload);
    let outcome = async { import::store_text(&s.pool, id, upload.text()?).await }
        .await
        .map(|n| format!("{n} ranking row(s) stored. Check the suspects below, then add them to the pool."));
    act(&s, &session, id, "rankings", kept, outcome).await
}

async fn add_to_pool(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VsdCampaign,
) -> PageResult {
    let outcome = pool::add_suspects(&s.pool, &s.kinds, id).await.map(|change| {
        format!(
            "{} new pair(s) added to the pool, {} existing pair(s) gained proposers. Form batches on the campaign page to ask the new pairs.",
            change.added, change.merged
        )
    });
    act(&s, &session, id, "suspects", Vec::new(), outcome).await
}

#[derive(serde::Deserialize)]
struct SampleForm {
    b: usize,
    #[serde(default)]
    seed: u64,
}

async fn add_sample(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VsdCampaign,
    axum::Form(form): axum::Form<SampleForm>,
) -> PageResult {
    let request = pool::SampleRequest { b: Some(form.b), seed: form.seed, ..Default::default() };
    let outcome = pool::add_sample(&s.pool, &s.kinds, id, &request).await.map(|added| {
        format!(
            "{} random pair(s) added (seed {}), candidates drawn from the {} images the rankings name \
             (the API takes the whole catalog).",
            added.added, added.seed, added.candidates
        )
    });
    act(&s, &session, id, "suspects", Vec::new(), outcome).await
}

async fn score_model(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VsdCampaign,
    req: axum::extract::Request,
) -> PageResult {
    let form = upload::read(req).await?;
    let model = form.field("model").trim().to_owned();
    let outcome = async {
        let scores = scoring::parse_scores(form.text()?)?;
        let n = scoring::store(&s.pool, id, admin.id, form.field("model"), &scores).await?;
        Ok(format!("{n} score(s) of `{model}` stored."))
    }
    .await;
    act(&s, &session, id, "models", vec![("model".to_owned(), model.clone())], outcome).await
}

/// Template helpers.
impl VsdPage {
    /// The refusal of the form in section `form`, if it was refused.
    fn refusal(&self, form: &str) -> Option<String> {
        Refusal::of_form(&self.refused, form)
    }

    /// What the admin typed in `field` of the refused form `form`.
    fn kept(&self, form: &str, field: &str) -> String {
        Refusal::kept_in(&self.refused, form, field)
    }

    fn fmt(&self, v: &Option<f64>) -> String {
        show(v)
    }

    fn metric(&self, m: &ModelReport, sampled: &bool, key: &str) -> String {
        let r = if *sampled { &m.sampled_negatives } else { &m.labelled_negatives };
        match key {
            "hr5" => show(&r.hr.get(&5).copied()),
            "hr9" => show(&r.hr.get(&9).copied()),
            "mrr5" => show(&r.mrr.get(&5).copied()),
            "mrr9" => show(&r.mrr.get(&9).copied()),
            "roc_micro" => show(&r.roc_auc_micro),
            "roc_macro" => show(&r.roc_auc_macro),
            "pr_micro" => show(&r.pr_auc_micro),
            _ => show(&r.pr_auc_macro),
        }
    }
}
