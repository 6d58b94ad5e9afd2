//! VTON admin routes: import triplets, run curation, re-queue, score a
//! quality predictor, and the questionnaire table.

use crate::core::{campaigns, ground_truth, items, Error};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Path};
use crate::http::AppState;
use crate::kinds::vton::ground_truth::score_predictor;
use crate::kinds::vton::service::{self, Triplets};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use serde_json::{json, Value};
use std::collections::HashMap;
use uuid::Uuid;

async fn vton_campaign(s: &AppState, id: Uuid) -> AppResult<campaigns::Campaign> {
    super::campaign_with_page(s, id, "vton", "not_vton", "a VTON").await
}

fn is_csv(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/csv"))
}

fn utf8(body: &Bytes) -> AppResult<&str> {
    std::str::from_utf8(body).map_err(|_| Error::invalid("invalid_body", "the body is not UTF-8").into())
}

/// Import try-on triplets (JSON `{"triplets": [...]}` or `text/csv` with
/// header `id,garment,person,tryon,reference,model,category,dataset[,expected]`).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/triplets", tag = "vton", params(("id" = Uuid, Path)),
    request_body(content = Triplets, description = "JSON, or CSV with content type text/csv"),
    responses((status = 201, body = crate::http::api::admin::Imported), (status = 422, body = ErrorBody)))]
pub async fn import_triplets(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    vton_campaign(&s, id).await?;
    // The same parser as the campaign page's import box: JSON or CSV by content.
    let new = service::parse_triplets(utf8(&body)?)?;
    let imported = items::import(&s.pool, id, &new).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "imported": imported }))))
}

/// Which curation rules to run.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct CurationRequest {
    /// `paper` or `vton-qbench-code`; kept as the campaign's preset.
    #[schema(value_type = Option<String>)]
    pub preset: Option<crate::kinds::vton::curation::Preset>,
}

/// Run curation and record which responses it excludes (re-runnable). An
/// optional `{"preset": "paper" | "vton-qbench-code"}` first changes the
/// campaign's preset.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/curation", tag = "vton", params(("id" = Uuid, Path)),
    request_body(content = Option<CurationRequest>), responses((status = 200, body = Object)))]
pub async fn run_curation(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    body: Option<axum::Json<CurationRequest>>,
) -> AppResult<axum::Json<Value>> {
    vton_campaign(&s, id).await?;
    if let Some(preset) = body.and_then(|b| b.0.preset) {
        service::set_preset(&s.pool, id, preset).await?;
    }
    Ok(axum::Json(service::run_curation(&s.pool, id).await?))
}

/// Re-queue questionnaires with too few reliable annotators to new workers.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/requeue", tag = "vton", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object)))]
pub async fn requeue(_: Admin, State(s): State<AppState>, Path(id): Path<Uuid>) -> AppResult<axum::Json<Value>> {
    vton_campaign(&s, id).await?;
    Ok(axum::Json(json!({ "requeued": service::requeue_dropped(&s.pool, id).await? })))
}

/// A predictor's scores as JSON.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct PredictorScores {
    /// Image id -> predicted quality.
    pub scores: HashMap<String, f64>,
}

/// Score a quality predictor against the curated human scores (JSON
/// `{"scores": {...}}` or `text/csv` with header `image_id,score`), next to
/// the human ceiling.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/predictor", tag = "vton", params(("id" = Uuid, Path)),
    request_body(content = PredictorScores, description = "JSON, or CSV with content type text/csv"),
    responses((status = 200, body = Object), (status = 422, body = ErrorBody)))]
pub async fn predictor(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult<axum::Json<Value>> {
    vton_campaign(&s, id).await?;
    let scores = if is_csv(&headers) {
        parse_scores(utf8(&body)?)?
    } else {
        serde_json::from_slice::<PredictorScores>(&body)
            .map_err(|e| Error::invalid("invalid_body", e.to_string()))?
            .scores
    };
    let aggregate = ground_truth::aggregate(&s.pool, id).await?;
    let known: std::collections::HashSet<&str> =
        aggregate["images"].as_array().into_iter().flatten().filter_map(|i| i["image"].as_str()).collect();
    let mut unknown: Vec<&String> = scores.keys().filter(|k| !known.contains(k.as_str())).collect();
    unknown.sort();
    if let Some(u) = unknown.first() {
        return Err(
            Error::invalid("unknown_image", format!("`{u}` has no curated human score in this campaign")).into()
        );
    }
    Ok(axum::Json(score_predictor(&aggregate, &scores)))
}

fn parse_scores(text: &str) -> Result<HashMap<String, f64>, Error> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| Error::invalid("invalid_csv", e.to_string()))?.clone();
    if header.iter().collect::<Vec<_>>() != ["image_id", "score"] {
        return Err(Error::invalid("invalid_csv", "line 1: the header must be `image_id,score`"));
    }
    let mut out = HashMap::new();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| Error::invalid("invalid_csv", format!("line {line}: {e}")))?;
        let score = row[1].parse::<f64>().ok().filter(|v| v.is_finite());
        let Some(score) = score else {
            return Err(Error::invalid("invalid_csv", format!("line {line}: score `{}` is not a number", &row[1])));
        };
        if out.insert(row[0].to_owned(), score).is_some() {
            return Err(Error::invalid("invalid_csv", format!("line {line}: image `{}` is scored twice", &row[0])));
        }
    }
    Ok(out)
}

/// The questionnaire table: alpha before and after, annotators kept, kept or dropped.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vton/questionnaires.csv", tag = "vton", params(("id" = Uuid, Path)),
    responses((status = 200, content_type = "text/csv", body = String)))]
pub async fn questionnaires_csv(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::response::Response> {
    use axum::response::IntoResponse;
    vton_campaign(&s, id).await?;
    let aggregate = ground_truth::aggregate(&s.pool, id).await?;
    let mut table = crate::core::kind::Table {
        header: ["questionnaire", "alpha_before", "alpha_after", "annotators_kept", "kept"]
            .iter()
            .map(|h| (*h).to_owned())
            .collect(),
        rows: Vec::new(),
    };
    for q in aggregate["curation"]["questionnaires"].as_array().into_iter().flatten() {
        let cell = |v: &Value| {
            if v.is_null() {
                String::new()
            } else {
                v.as_str().map(str::to_owned).unwrap_or_else(|| v.to_string())
            }
        };
        table.rows.push(
            ["questionnaire", "alpha_before", "alpha_after", "annotators_kept", "kept"]
                .iter()
                .map(|k| cell(&q[*k]))
                .collect(),
        );
    }
    let csv = ground_truth::to_csv(&table)?;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], csv).into_response())
}
