//! A100 admin routes: import a question set, score models, pilot rounds.

use crate::core::items;
use crate::core::{campaigns, ground_truth, Error};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Path};
use crate::http::AppState;
use crate::kinds::a100::models::{self, ModelScore};
use crate::kinds::a100::pilot::{self, PilotQuestion};
use crate::kinds::a100::question::{self, QuestionSet};
use axum::extract::{Query, State};
use axum::http::StatusCode;
use std::collections::HashMap;
use uuid::Uuid;

async fn a100_campaign(s: &AppState, id: Uuid) -> AppResult<campaigns::Campaign> {
    super::campaign_with_page(s, id, "a100", "not_a100", "an A100").await
}

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
    Path(id): Path<Uuid>,
    Json(set): Json<QuestionSet>,
) -> AppResult<(StatusCode, axum::Json<QuestionsImported>)> {
    a100_campaign(&s, id).await?;
    let imported = items::import(&s.pool, id, &question::to_items(&set)).await?;
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
    Path(id): Path<Uuid>,
    Json(body): Json<ModelAnswers>,
) -> AppResult<(StatusCode, axum::Json<ModelScore>)> {
    a100_campaign(&s, id).await?;
    let score = models::score(&s.pool, id, admin.id, &body.model, &body.answers).await?;
    Ok((StatusCode::CREATED, axum::Json(score)))
}

/// Scores of all models, side by side.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/a100/models", tag = "a100", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<ModelScore>)))]
pub async fn list_models(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<ModelScore>>> {
    a100_campaign(&s, id).await?;
    Ok(axum::Json(models::list(&s.pool, id).await?))
}

/// Which campaigns are the pilot's rounds.
#[derive(serde::Deserialize, utoipa::IntoParams)]
pub struct PilotRounds {
    /// Campaign ids of the rounds, comma-separated, in order.
    pub rounds: String,
}

/// Rank questions by answer consistency across participants and pilot rounds.
#[utoipa::path(get, path = "/api/v1/admin/a100/pilot", tag = "a100", params(PilotRounds),
    responses((status = 200, body = Vec<PilotQuestion>), (status = 422, body = ErrorBody)))]
pub async fn pilot_ranking(
    _: Admin,
    State(s): State<AppState>,
    Query(q): Query<PilotRounds>,
) -> AppResult<axum::Json<Vec<PilotQuestion>>> {
    let mut rounds = Vec::new();
    for raw in q.rounds.split(',').map(str::trim).filter(|r| !r.is_empty()) {
        let id: Uuid =
            raw.parse().map_err(|_| Error::invalid("invalid_round", format!("`{raw}` is not a campaign id")))?;
        a100_campaign(&s, id).await?;
        rounds.push(ground_truth::aggregate(&s.pool, id).await?);
    }
    if rounds.is_empty() {
        return Err(Error::invalid("no_rounds", "give the rounds' campaign ids in `rounds`").into());
    }
    Ok(axum::Json(pilot::rank(&rounds)))
}
