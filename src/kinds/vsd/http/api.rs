//! VSD admin API: rankings in, the pool built from them, a random sample,
//! the benchmark-format export, and model scoring.

use super::VsdCampaign;
use crate::core::truth::ground_truth;
use crate::error::Error;
use crate::http::api::{attachment, body_text};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Query};
use crate::http::kind_routes::KindCampaign;
use crate::http::AppState;
use crate::kinds::vsd::eds::Suspects;
use crate::kinds::vsd::pool::{self, PoolChange};
use crate::kinds::vsd::result::VsdResult;
use crate::kinds::vsd::{import, scoring};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{json, Value};

/// Import model rankings: CSV `model,query,candidate,rank[,score]` (rank
/// zero-based) or JSON lines with those fields. All or nothing; a row
/// imported again replaces the stored one.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vsd/rankings", tag = "vsd", params(("id" = Uuid, Path)),
    request_body(content = String, content_type = "text/csv"),
    responses((status = 201, body = Object), (status = 422, body = ErrorBody)))]
pub async fn import_rankings(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    let stored = import::store_text(&s.pool, id, body_text(&body)?).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "stored": stored }))))
}

/// The suspects the stored rankings give at the campaign's k (before they
/// are added to the pool): sizes, overlap, pairs.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vsd/suspects", tag = "vsd", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object)))]
pub async fn suspects(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
) -> AppResult<axum::Json<Suspects>> {
    Ok(axum::Json(pool::suspects(&s.pool, id).await?.1))
}

/// Add the suspects to the pool (new pairs are added, pairs already there
/// gain the new proposers); then form batches to ask the new pairs.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vsd/pool", tag = "vsd", params(("id" = Uuid, Path)),
    responses((status = 200, body = PoolChange), (status = 409, body = ErrorBody)))]
pub async fn add_to_pool(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
) -> AppResult<axum::Json<PoolChange>> {
    Ok(axum::Json(pool::add_suspects(&s.pool, &s.kinds, id).await?))
}

/// Add a seeded random sample of pairs uniform over A (a drawn suspect joins
/// the sample with its own label, never labelled twice)
/// (`b` pairs, or ⌈1 / (ε q)⌉ from `epsilon` and `q`; D is `catalog`, else
/// the candidates the rankings name; the seed is recorded with every pair).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vsd/sample", tag = "vsd", params(("id" = Uuid, Path)),
    request_body = pool::SampleRequest, responses((status = 200, body = pool::SampleAdded), (status = 422, body = ErrorBody)))]
pub async fn add_sample(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
    Json(req): Json<pool::SampleRequest>,
) -> AppResult<axum::Json<pool::SampleAdded>> {
    Ok(axum::Json(pool::add_sample(&s.pool, &s.kinds, id, &req).await?))
}

/// The ground truth in the benchmark's format `[{"key": [query, candidate],
/// "value": 0|1}]` (labelled suspects; pairs with only unsure votes are left
/// out; pairs not every expert has answered only with `partial=true`; the
/// `X-Atelier-Incomplete-Pairs` header says how many were left out).
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vsd/benchmark.json", tag = "vsd",
    params(("id" = Uuid, Path), crate::http::api::admin::PartialQuery),
    responses((status = 200, body = Vec<Object>)))]
pub async fn benchmark(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, campaign, .. }: VsdCampaign,
    crate::http::extract::Query(query): crate::http::extract::Query<crate::http::api::admin::PartialQuery>,
) -> AppResult<axum::response::Response> {
    let gt = VsdResult::from_json(&ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?)?;
    let body = serde_json::to_string(&gt.benchmark(query.partial))
        .map_err(|e| Error::internal("writing the benchmark JSON", e))?;
    let name = crate::http::api::export_file_name(&campaign, "benchmark", "json");
    let mut response = attachment("application/json", &name, body);
    let left_out = if query.partial { 0 } else { gt.incomplete };
    response.headers_mut().insert("x-atelier-incomplete-pairs", axum::http::HeaderValue::from(left_out));
    Ok(response)
}

/// Which model the scores are of.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
pub struct ModelName {
    /// The model's name (scoring again under it replaces its scores).
    pub model: String,
}

/// Upload a model's scores (CSV `query,candidate,score`, higher = more similar).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vsd/models", tag = "vsd", params(("id" = Uuid, Path), ModelName),
    request_body(content = String, content_type = "text/csv"),
    responses((status = 201, body = Object), (status = 422, body = ErrorBody)))]
pub async fn score_model(
    Admin(admin): Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
    Query(q): Query<ModelName>,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    let scores = scoring::parse_scores(body_text(&body)?)?;
    let stored = scoring::store(&s.pool, id, admin.id, &q.model, &scores).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "model": q.model.trim(), "pairs": stored }))))
}

/// Every scored model side by side (HR@5/9, MRR@5/9, the four AUCs, in
/// both negative settings; generators marked) and the leave-one-model-out table.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vsd/models", tag = "vsd", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object)))]
pub async fn models(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VsdCampaign,
) -> AppResult<axum::Json<scoring::ScoringReport>> {
    Ok(axum::Json(scoring::report(&s.pool, &s.kinds, &s.caches, id).await?))
}
