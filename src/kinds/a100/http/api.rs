//! A100 admin routes: import a question set, score models, pilot rounds.

use super::A100Campaign;
use crate::core::item::items;
use crate::error::Code;
use crate::error::Error;
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Query};
use crate::http::kind_routes::KindCampaign;
use crate::http::AppState;
use crate::kinds::a100::models::{self, ModelScore};
use crate::kinds::a100::pilot::{self, PilotQuestion, PilotReport};
use crate::kinds::a100::pilot_data;
use crate::kinds::a100::question::{self, QuestionSet};
use axum::extract::State;
use axum::http::StatusCode;
use std::collections::HashMap;
use uuid::Uuid;

/// How many questions were imported.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct QuestionsImported {
    /// Count.
    pub imported: usize,
}

/// Import an A100 question set (all or nothing; every rule failure is
/// reported with its question id).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/a100/questions", tag = "a100", params(("id" = Uuid, Path)), request_body = QuestionSet,
    responses((status = 201, body = QuestionsImported), (status = 422, body = ErrorBody)))]
pub async fn import_questions(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: A100Campaign,
    Json(set): Json<QuestionSet>,
) -> AppResult<(StatusCode, axum::Json<QuestionsImported>)> {
    let imported = items::import(&s.pool, &s.kinds, id, &question::to_items(&set)).await?;
    Ok((StatusCode::CREATED, axum::Json(QuestionsImported { imported })))
}

/// A model's answers to score.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct ModelAnswers {
    /// Model name; scoring again under the same name replaces the score.
    pub model: String,
    /// Question id -> choice id.
    pub answers: HashMap<String, String>,
}

/// Score a model against the campaign's current ground truth.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/a100/models", tag = "a100", params(("id" = Uuid, Path)), request_body = ModelAnswers,
    responses((status = 201, body = ModelScore), (status = 422, body = ErrorBody)))]
pub async fn score_model(
    Admin(admin): Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: A100Campaign,
    Json(body): Json<ModelAnswers>,
) -> AppResult<(StatusCode, axum::Json<ModelScore>)> {
    let score = models::score(&s.pool, &s.kinds, &s.caches, id, admin.id, &body.model, &body.answers).await?;
    Ok((StatusCode::CREATED, axum::Json(score)))
}

/// Scores of all models, side by side.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/a100/models", tag = "a100", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<ModelScore>)))]
pub async fn list_models(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: A100Campaign,
) -> AppResult<axum::Json<Vec<ModelScore>>> {
    Ok(axum::Json(models::list(&s.pool, id).await?))
}

/// Which campaigns are the pilot's rounds, and the selection's cut-offs.
#[derive(serde::Deserialize, utoipa::IntoParams)]
pub struct PilotRounds {
    /// Campaign ids of the rounds, comma-separated, in order.
    #[param(
        pattern = r"^[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12}(,[0-9a-fA-F]{8}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{4}-[0-9a-fA-F]{12})*$"
    )]
    pub rounds: String,
    /// Keep the N most consistent questions (default: all).
    #[param(maximum = 100_000_000)]
    pub top: Option<usize>,
    /// Of those, keep questions with at least this consistency (default 1.0, i.e. 100 %).
    #[param(minimum = 0, maximum = 1)]
    pub min_consistency: Option<f64>,
}

/// The rounds' answers and the selection asked for.
async fn pilot_input(
    s: &AppState,
    q: &PilotRounds,
) -> AppResult<(Vec<Uuid>, Vec<pilot::PilotAnswer>, pilot::Selection)> {
    let mut rounds = Vec::new();
    for raw in q.rounds.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let id: Uuid =
            raw.parse().map_err(|_| Error::invalid(Code::InvalidRound, format!("`{raw}` is not a campaign id")))?;
        A100Campaign::of(s, id).await?;
        rounds.push(id);
    }
    if rounds.is_empty() {
        return Err(Error::invalid(Code::NoRounds, "give the rounds' campaign ids in `rounds`").into());
    }
    let min_consistency = q.min_consistency.unwrap_or(1.0);
    if !(0.0..=1.0).contains(&min_consistency) {
        return Err(Error::invalid(Code::InvalidSelection, "min_consistency must be between 0 and 1").into());
    }
    let answers = pilot_data::answers(&s.pool, &rounds).await?;
    Ok((rounds, answers, pilot::Selection { top: q.top, min_consistency }))
}

/// Rank questions by answer consistency across the pilot members and rounds.
#[utoipa::path(get, path = "/api/v1/admin/a100/pilot", tag = "a100", params(PilotRounds),
    responses((status = 200, body = Vec<PilotQuestion>), (status = 422, body = ErrorBody)))]
pub async fn pilot_ranking(
    _: Admin,
    State(s): State<AppState>,
    Query(q): Query<PilotRounds>,
) -> AppResult<axum::Json<Vec<PilotQuestion>>> {
    let (rounds, answers, _) = pilot_input(&s, &q).await?;
    Ok(axum::Json(pilot::rank(&answers, rounds.len())))
}

/// The pilot report: questions, members (by worker id) with their
/// consistency across rounds, and the questions the cut-offs select.
#[utoipa::path(get, path = "/api/v1/admin/a100/pilot/report", tag = "a100", params(PilotRounds),
    responses((status = 200, body = PilotReport), (status = 422, body = ErrorBody)))]
pub async fn pilot_report(
    _: Admin,
    State(s): State<AppState>,
    Query(q): Query<PilotRounds>,
) -> AppResult<axum::Json<PilotReport>> {
    let (rounds, answers, selection) = pilot_input(&s, &q).await?;
    Ok(axum::Json(pilot::report(&answers, rounds.len(), selection)))
}

/// The selected questions as a question set (`{"questions": [...]}`),
/// ready to import as the final LAT.
#[utoipa::path(get, path = "/api/v1/admin/a100/pilot/selection", tag = "a100", params(PilotRounds),
    responses((status = 200, body = Object), (status = 422, body = ErrorBody)))]
pub async fn pilot_selection(
    _: Admin,
    State(s): State<AppState>,
    Query(q): Query<PilotRounds>,
) -> AppResult<axum::response::Response> {
    use axum::response::IntoResponse;
    let (rounds, answers, selection) = pilot_input(&s, &q).await?;
    let report = pilot::report(&answers, rounds.len(), selection);
    let set = pilot_data::selection_set(&s.pool, rounds[0], &report.selected).await?;
    Ok(([(axum::http::header::CONTENT_DISPOSITION, "attachment; filename=\"lat-questions.json\"")], axum::Json(set))
        .into_response())
}
