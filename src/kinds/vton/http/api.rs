//! VTON admin routes: import triplets, run curation, re-queue, score a
//! quality predictor, and the questionnaire table.

use super::VtonCampaign;
use crate::core::{item::items, truth::ground_truth};
use crate::error::Code;
use crate::error::Error;
use crate::http::api::{body_text, chunks_attachment};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Query};
use crate::http::kind_routes::KindCampaign;
use crate::http::AppState;
use crate::kinds::vton::predictor::PredictorOptions;
use crate::kinds::vton::qbench;
use crate::kinds::vton::service::{self, Triplets};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::{header, HeaderMap, StatusCode};
use serde_json::{json, Value};
use std::collections::HashMap;

fn is_csv(headers: &HeaderMap) -> bool {
    headers.get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).is_some_and(|v| v.starts_with("text/csv"))
}

/// Import try-on triplets (JSON `{"triplets": [...]}` or `text/csv` with
/// header `id,garment,person,tryon,reference,model,category,dataset[,expected]`).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/triplets", tag = "vton", params(("id" = Uuid, Path)),
    request_body(content = Triplets, description = "JSON, or CSV with content type text/csv"),
    responses((status = 201, body = crate::http::api::admin::Imported), (status = 422, body = ErrorBody)))]
pub async fn import_triplets(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VtonCampaign,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    // The same parser as the campaign page's import box: JSON or CSV by content.
    let new = service::parse_triplets(body_text(&body)?)?;
    let imported = items::import_with_store(&s.pool, &s.config.storage, &s.kinds, id, &new).await?;
    Ok((StatusCode::CREATED, axum::Json(json!({ "imported": imported }))))
}

/// Which curation rules to run.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct CurationRequest {
    /// `paper` or `vton-qbench-code`; kept as the campaign's preset.
    #[schema(value_type = Option<String>, pattern = "^(paper|vton-qbench-code)$")]
    pub preset: Option<crate::kinds::vton::curation::Preset>,
}

/// Run curation and record which responses it excludes (re-runnable). An
/// optional `{"preset": "paper" | "vton-qbench-code"}` first changes the
/// campaign's preset.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/curation", tag = "vton", params(("id" = Uuid, Path)),
    request_body(content = Option<CurationRequest>), responses((status = 200, body = service::CurationSummary)))]
pub async fn run_curation(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VtonCampaign,
    // The body is optional: empty (or `null`) means "with the campaign's preset".
    crate::http::extract::MaybeJson(request): crate::http::extract::MaybeJson<CurationRequest>,
) -> AppResult<axum::Json<service::CurationSummary>> {
    if let Some(preset) = request.and_then(|r| r.preset) {
        service::set_preset(&s.pool, &s.kinds, id, preset).await?;
    }
    Ok(axum::Json(service::run_curation(&s.pool, &s.kinds, &s.caches, id).await?))
}

/// Re-queue questionnaires with too few reliable annotators to new workers.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/requeue", tag = "vton", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object)))]
pub async fn requeue(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VtonCampaign,
) -> AppResult<axum::Json<Value>> {
    Ok(axum::Json(json!({ "requeued": service::requeue_dropped(&s.pool, &s.kinds, &s.caches, id).await? })))
}

/// A predictor's scores as JSON.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct PredictorScores {
    /// Image id -> predicted quality.
    pub scores: HashMap<String, f64>,
}

/// Score a quality predictor against the curated human scores (JSON
/// `{"scores": {...}}` or `text/csv` with header `image_id,score`), next to
/// the human ceiling. Query options: `labels=all|half` (half: labels from
/// half of the annotators, the split-half ceiling's halvings),
/// `ties=zero|half` (prediction ties in pairwise accuracy), `known=m1,m2`
/// (models seen in training: KK / UU / KU blocks), `temperature` (τ of the
/// calibration table, default 0.5).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/predictor", tag = "vton",
    params(("id" = Uuid, Path), ("labels" = Option<String>, Query, pattern = "^(all|half)$"),
           ("ties" = Option<String>, Query, pattern = "^(zero|half)$"),
           ("known" = Option<String>, Query), ("temperature" = Option<f64>, Query, exclusive_minimum = 0)),
    request_body(content = PredictorScores, description = "JSON, or CSV with content type text/csv"),
    responses((status = 200, body = Object), (status = 422, body = ErrorBody)))]
pub async fn predictor(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VtonCampaign,
    Query(options): Query<PredictorOptions>,
    headers: HeaderMap,
    body: Bytes,
) -> AppResult<axum::Json<Value>> {
    let scores = if is_csv(&headers) {
        parse_scores(body_text(&body)?)?
    } else {
        serde_json::from_slice::<PredictorScores>(&body)
            .map_err(|e| Error::invalid(Code::InvalidBody, e.to_string()))?
            .scores
    };
    Ok(axum::Json(service::score_predictor(&s.pool, &s.kinds, &s.caches, id, &scores, &options).await?))
}

fn parse_scores(text: &str) -> Result<HashMap<String, f64>, Error> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let header = reader.headers().map_err(|e| Error::invalid(Code::InvalidCsv, e.to_string()))?.clone();
    if header.iter().collect::<Vec<_>>() != ["image_id", "score"] {
        return Err(Error::invalid(Code::InvalidCsv, "line 1: the header must be `image_id,score`"));
    }
    let mut out = HashMap::new();
    for (i, row) in reader.records().enumerate() {
        let line = i + 2;
        let row = row.map_err(|e| Error::invalid(Code::InvalidCsv, format!("line {line}: {e}")))?;
        let score = row[1].parse::<f64>().ok().filter(|v| v.is_finite());
        let Some(score) = score else {
            return Err(Error::invalid(Code::InvalidCsv, format!("line {line}: score `{}` is not a number", &row[1])));
        };
        if out.insert(row[0].to_owned(), score).is_some() {
            return Err(Error::invalid(Code::InvalidCsv, format!("line {line}: image `{}` is scored twice", &row[0])));
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
    KindCampaign { id, .. }: VtonCampaign,
) -> AppResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let aggregate = ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?;
    // Reads the whole ground truth back: off the async workers.
    let csv = crate::core::support::heavy::run(move || {
        crate::kinds::vton::ground_truth::questionnaire_table(&aggregate).to_csv()
    })
    .await??;
    Ok(([(header::CONTENT_TYPE, "text/csv; charset=utf-8")], csv).into_response())
}

/// The campaign's submitted questionnaires in VTON-QBench's `answers.csv` layout.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vton/qbench/answers.csv", tag = "vton", params(("id" = Uuid, Path)),
    responses((status = 200, content_type = "text/csv", body = String)))]
pub async fn qbench_answers(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, campaign, .. }: VtonCampaign,
) -> AppResult<axum::response::Response> {
    let name = crate::http::api::export_file_name(&campaign, "answers", "csv");
    Ok(chunks_attachment("text/csv; charset=utf-8", &name, qbench::export_answers(&s.pool, id).await?))
}

/// The campaign's questionnaires in VTON-QBench's `images.csv` layout.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/vton/qbench/images.csv", tag = "vton", params(("id" = Uuid, Path)),
    responses((status = 200, content_type = "text/csv", body = String)))]
pub async fn qbench_images(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, campaign, .. }: VtonCampaign,
) -> AppResult<axum::response::Response> {
    let name = crate::http::api::export_file_name(&campaign, "images", "csv");
    Ok(chunks_attachment("text/csv; charset=utf-8", &name, qbench::export_images(&s.pool, id).await?))
}

/// An attention position of the imported release.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct AttentionPosition {
    /// 1-based position in every questionnaire.
    #[schema(minimum = 1)]
    pub position: usize,
    /// The expected rating (1-3).
    #[schema(minimum = 1, maximum = 3)]
    pub expected: u8,
    /// |rating - expected| <= tolerance passes.
    #[serde(default)]
    #[schema(maximum = 2)]
    pub tolerance: u8,
}

/// A VTON-QBench release to import.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct QbenchImport {
    /// The text of `answers.csv`.
    pub answers: String,
    /// The text of `images.csv`.
    pub images: String,
    /// The attention positions and their expected answers (none: every position is rated).
    #[serde(default)]
    pub attention: Vec<AttentionPosition>,
}

/// Import a VTON-QBench release (`answers.csv` and `images.csv`) into an empty
/// VTON campaign, to curate and score it here.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/vton/qbench", tag = "vton", params(("id" = Uuid, Path)),
    request_body = QbenchImport, responses((status = 201, body = Object), (status = 422, body = ErrorBody)))]
pub async fn qbench_import(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: VtonCampaign,
    Json(body): Json<QbenchImport>,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    let attention = attention_map(&body.attention)?;
    let release = qbench::parse(&body.answers, &body.images)?;
    Ok((StatusCode::CREATED, axum::Json(qbench::import(&s.pool, &s.kinds, id, &release, &attention).await?)))
}

fn attention_map(
    positions: &[AttentionPosition],
) -> Result<std::collections::BTreeMap<usize, crate::kinds::vton::curation::SanityTask>, Error> {
    let mut out = std::collections::BTreeMap::new();
    for a in positions {
        if a.position == 0 || !(1..=3).contains(&a.expected) || a.tolerance > 2 {
            return Err(Error::invalid(
                Code::InvalidAttention,
                format!("attention position {}: positions start at 1, expected is 1-3, tolerance 0-2", a.position),
            ));
        }
        let task = crate::kinds::vton::curation::SanityTask { expected: a.expected, tolerance: a.tolerance };
        if out.insert(a.position, task).is_some() {
            return Err(Error::invalid(
                Code::InvalidAttention,
                format!("attention position {} given twice", a.position),
            ));
        }
    }
    Ok(out)
}
