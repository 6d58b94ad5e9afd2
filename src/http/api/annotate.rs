//! Annotator routes: crowd workers under `/api/v1/work/`, experts under
//! `/api/v1/expert/`. Both get the next assignment, see it (never gold, never
//! anyone else's answers), answer, and submit.

use crate::auth::users::User;
use crate::core::assignments::{self, Assignment};
use crate::core::kind::PublicItem;
use crate::core::progress::{self, AssignmentProgress};
use crate::core::responses::{self, Outcome, Response, Submission};
use crate::core::{campaigns, kinds_of, Error};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Expert, Json, Path, Worker};
use crate::http::AppState;
use axum::extract::State;
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeMap;
use tower_sessions::Session;
use uuid::Uuid;

/// Session key listing the campaigns a worker joined through a link.
pub const JOINED_KEY: &str = "joined_campaigns";

/// An assignment as its annotator sees it.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct AssignmentView {
    /// The assignment.
    pub assignment: Assignment,
    /// Items in this annotator's order, as shown to them.
    pub items: Vec<PublicItem>,
    /// The annotator's own answers so far, by item id.
    pub answers: BTreeMap<Uuid, Value>,
    /// Progress.
    pub progress: AssignmentProgress,
    /// In a review assignment: the answers under review, by item id.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewing: Option<BTreeMap<Uuid, Value>>,
}

/// The result of a submission.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Submitted {
    /// The stored response.
    pub response: Response,
    /// Created, unchanged (a retry) or changed.
    pub outcome: Outcome,
    /// Progress after the submission.
    pub progress: AssignmentProgress,
}

/// Builds the annotator's view of an assignment.
pub async fn view(pool: &PgPool, assignment: Assignment) -> AppResult<AssignmentView> {
    let campaign = campaigns::get(pool, assignment.campaign_id).await?;
    let kind = kinds_of(&campaign)?;
    let order = assignment.item_order();
    let payloads: Vec<(Uuid, Value)> =
        sqlx::query_as("SELECT id, payload FROM items WHERE id = ANY($1)").bind(&order).fetch_all(pool).await?;
    let by_id: BTreeMap<Uuid, Value> = payloads.into_iter().collect();
    let items = order
        .iter()
        .filter_map(|id| {
            let payload = by_id.get(id)?;
            Some(PublicItem { id: *id, payload: kind.public_payload(payload, &assignment.item_presentation(*id)) })
        })
        .collect();
    let answers =
        responses::own_in_assignment(pool, assignment.id).await?.into_iter().map(|r| (r.item_id, r.answer)).collect();
    let progress = progress::of_assignment(pool, assignment.id, assignment.batch_id).await?;
    let reviewing = assignments::reviewed_answers(pool, &assignment).await?;
    Ok(AssignmentView { assignment, items, answers, progress, reviewing })
}

/// Checks that the campaign is for this kind of annotator (and, for a
/// worker, that they joined it through an invitation).
pub async fn check_access(pool: &PgPool, user: &User, campaign_id: Uuid, session: Option<&Session>) -> AppResult<()> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds_of(&campaign)?;
    let is_worker = user.role == "worker";
    if kind.crowd() != is_worker {
        return Err(Error::Forbidden("this campaign is not for your role".into()).into());
    }
    if is_worker {
        let joined: Vec<Uuid> = match session {
            Some(s) => s.get(JOINED_KEY).await?.unwrap_or_default(),
            None => Vec::new(),
        };
        if !joined.contains(&campaign_id) {
            return Err(Error::Forbidden("open the campaign's invitation link first".into()).into());
        }
    }
    Ok(())
}

/// Options when asking for the next assignment.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct NextRequest {
    /// Answers to the campaign's background questions (question id -> option),
    /// required before the first assignment when the campaign asks any.
    #[serde(default)]
    pub background: BTreeMap<String, String>,
}

async fn next_for(
    pool: &PgPool,
    user: &User,
    campaign_id: Uuid,
    session: Option<&Session>,
    request: &NextRequest,
) -> AppResult<Option<AssignmentView>> {
    check_access(pool, user, campaign_id, session).await?;
    let campaign = campaigns::get(pool, campaign_id).await?;
    let questions = kinds_of(&campaign)?.background(&campaign.kind_config());
    if !questions.is_empty() && !crate::core::profiles::exists(pool, campaign_id, user.id).await? {
        let fields: Vec<(String, String)> =
            request.background.iter().map(|(k, v)| (format!("bg_{k}"), v.clone())).collect();
        let answers = crate::core::profiles::validate(&questions, &fields)?;
        crate::core::profiles::save(pool, campaign_id, user.id, &answers).await?;
    }
    match assignments::next(pool, campaign_id, user.id).await? {
        Some(a) => Ok(Some(view(pool, a).await?)),
        None => Ok(None),
    }
}

async fn respond_for(pool: &PgPool, user: &User, id: Uuid, sub: &Submission) -> AppResult<Submitted> {
    let assignment = assignments::get_own(pool, id, user.id).await?;
    let (response, outcome) = responses::submit(pool, &assignment, sub).await?;
    let progress = progress::of_assignment(pool, assignment.id, assignment.batch_id).await?;
    Ok(Submitted { response, outcome, progress })
}

/// Get (or resume) the worker's assignment in a campaign; `null` when none is left.
#[utoipa::path(post, path = "/api/v1/work/campaigns/{id}/assignment", tag = "work", params(("id" = Uuid, Path)), request_body = NextRequest,
    responses((status = 200, body = Option<AssignmentView>), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn work_next(
    Worker(user): Worker,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(request): Json<NextRequest>,
) -> AppResult<axum::Json<Option<AssignmentView>>> {
    Ok(axum::Json(next_for(&s.pool, &user, id, Some(&session), &request).await?))
}

/// The worker's own assignment.
#[utoipa::path(get, path = "/api/v1/work/assignments/{id}", tag = "work", params(("id" = Uuid, Path)),
    responses((status = 200, body = AssignmentView), (status = 404, body = ErrorBody)))]
pub async fn work_view(
    Worker(user): Worker,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<AssignmentView>> {
    Ok(axum::Json(view(&s.pool, assignments::get_own(&s.pool, id, user.id).await?).await?))
}

/// Answer an item; a retry with the same answer is harmless.
#[utoipa::path(post, path = "/api/v1/work/assignments/{id}/responses", tag = "work", params(("id" = Uuid, Path)), request_body = Submission,
    responses((status = 200, body = Submitted), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn work_respond(
    Worker(user): Worker,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(sub): Json<Submission>,
) -> AppResult<axum::Json<Submitted>> {
    Ok(axum::Json(respond_for(&s.pool, &user, id, &sub).await?))
}

/// Completion of an assignment: the code to paste into the crowd platform.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Completed {
    /// The assignment.
    pub assignment: Assignment,
    /// Completion code (crowd campaigns).
    pub completion_code: Option<String>,
}

async fn complete_for(pool: &PgPool, user: &User, id: Uuid) -> AppResult<Completed> {
    let assignment = assignments::complete(pool, id, user.id).await?;
    let campaign = campaigns::get(pool, assignment.campaign_id).await?;
    let code = kinds_of(&campaign)?.crowd().then_some(campaign.completion_code);
    Ok(Completed { assignment, completion_code: code })
}

/// Submit the assignment (every item answered).
#[utoipa::path(post, path = "/api/v1/work/assignments/{id}/complete", tag = "work", params(("id" = Uuid, Path)),
    responses((status = 200, body = Completed), (status = 409, body = ErrorBody)))]
pub async fn work_complete(
    Worker(user): Worker,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Completed>> {
    Ok(axum::Json(complete_for(&s.pool, &user, id).await?))
}

/// Open campaigns for experts.
#[utoipa::path(get, path = "/api/v1/expert/campaigns", tag = "expert",
    responses((status = 200, body = Vec<campaigns::Campaign>), (status = 403, body = ErrorBody)))]
pub async fn expert_campaigns(_: Expert, State(s): State<AppState>) -> AppResult<axum::Json<Vec<campaigns::Campaign>>> {
    let all = campaigns::list(&s.pool).await?;
    let open = all.into_iter().filter(|c| c.state == "open" && kinds_of(c).is_ok_and(|k| !k.crowd())).collect();
    Ok(axum::Json(open))
}

/// Get (or resume) the expert's assignment in a campaign.
#[utoipa::path(post, path = "/api/v1/expert/campaigns/{id}/assignment", tag = "expert", params(("id" = Uuid, Path)), request_body = NextRequest,
    responses((status = 200, body = Option<AssignmentView>), (status = 403, body = ErrorBody)))]
pub async fn expert_next(
    Expert(user): Expert,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(request): Json<NextRequest>,
) -> AppResult<axum::Json<Option<AssignmentView>>> {
    Ok(axum::Json(next_for(&s.pool, &user, id, None, &request).await?))
}

/// The expert's own assignment.
#[utoipa::path(get, path = "/api/v1/expert/assignments/{id}", tag = "expert", params(("id" = Uuid, Path)),
    responses((status = 200, body = AssignmentView), (status = 404, body = ErrorBody)))]
pub async fn expert_view(
    Expert(user): Expert,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<AssignmentView>> {
    Ok(axum::Json(view(&s.pool, assignments::get_own(&s.pool, id, user.id).await?).await?))
}

/// Answer an item as an expert.
#[utoipa::path(post, path = "/api/v1/expert/assignments/{id}/responses", tag = "expert", params(("id" = Uuid, Path)), request_body = Submission,
    responses((status = 200, body = Submitted), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn expert_respond(
    Expert(user): Expert,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(sub): Json<Submission>,
) -> AppResult<axum::Json<Submitted>> {
    Ok(axum::Json(respond_for(&s.pool, &user, id, &sub).await?))
}

/// Submit the expert's assignment.
#[utoipa::path(post, path = "/api/v1/expert/assignments/{id}/complete", tag = "expert", params(("id" = Uuid, Path)),
    responses((status = 200, body = Completed), (status = 409, body = ErrorBody)))]
pub async fn expert_complete(
    Expert(user): Expert,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Completed>> {
    Ok(axum::Json(complete_for(&s.pool, &user, id).await?))
}
