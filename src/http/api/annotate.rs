//! Annotator routes: crowd workers under `/api/v1/work/`, experts under
//! `/api/v1/expert/`. Both get the next assignment, see it (never gold, never
//! anyone else's answers), answer, and submit.

use crate::auth::users::User;
use crate::auth::Role;
use crate::core::campaign::campaigns;
use crate::core::work::annotator::{self, AssignmentView, Completed, Submitted};
use crate::core::work::assignments;
use crate::core::work::responses::Submission;
use crate::error::Code;
use crate::error::Error;
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Expert, Json, Path, Worker};
use crate::http::AppState;
use axum::extract::State;
use std::collections::BTreeMap;
use tower_sessions::Session;
use uuid::Uuid;

/// Session key listing the campaigns a worker joined through a link.
pub const JOINED_KEY: &str = "joined_campaigns";

/// The campaign, if the caller may work on it: it is for their role and,
/// for a worker, they joined it through an invitation in this session.
pub async fn check_access(
    s: &AppState,
    user: &User,
    campaign_id: Uuid,
    session: Option<&Session>,
) -> AppResult<campaigns::Campaign> {
    let is_worker = user.role == Role::Worker;
    // One read: the single-statement pool.
    let campaign = annotator::campaign_for(s.statements.executor(), campaign_id, is_worker).await?;
    if is_worker {
        let joined: Vec<Uuid> = match session {
            Some(s) => s.get(JOINED_KEY).await?.unwrap_or_default(),
            None => Vec::new(),
        };
        if !joined.contains(&campaign_id) {
            return Err(Error::Forbidden("open the campaign's invitation link first".into()).into());
        }
    }
    Ok(campaign)
}

/// A worker whose every link to the campaign was revoked starts no new
/// questionnaire; one they hold they may finish (and see their code).
pub async fn ensure_may_start(s: &AppState, user: &User, campaign_id: Uuid) -> AppResult<()> {
    if user.role != Role::Worker
        || crate::core::crowd::invitations::may_start_new(&s.pool, campaign_id, user.id).await?
    {
        return Ok(());
    }
    if assignments::active_of(&s.pool, campaign_id, user.id).await?.is_some() {
        return Ok(());
    }
    Err(Error::conflict(
        Code::InvitationRevoked,
        "the link you joined through was closed by the study's team: no new questionnaire can start. \
         A completion code you earned is still shown on the campaign's page",
    )
    .into())
}

/// Options when asking for the next assignment.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct NextRequest {
    /// Answers to the campaign's background questions (question id -> option),
    /// required before the first assignment when the campaign asks any.
    #[serde(default)]
    pub background: BTreeMap<String, String>,
    /// Agreement to the campaign's consent text, required before the first
    /// assignment when the campaign has one.
    #[serde(default)]
    pub consent: bool,
}

async fn next_for(
    s: &AppState,
    user: &User,
    campaign_id: Uuid,
    session: Option<&Session>,
    request: &NextRequest,
) -> AppResult<Option<AssignmentView>> {
    let campaign = check_access(s, user, campaign_id, session).await?;
    ensure_may_start(s, user, campaign_id).await?;
    let background: Vec<(String, String)> =
        request.background.iter().map(|(k, v)| (format!("bg_{k}"), v.clone())).collect();
    match annotator::start(&s.pool, &s.kinds, &campaign, user.id, &background, request.consent).await? {
        // The view is read as every view is (one statement, on the
        // single-statement pool: reads only).
        Some(a) => Ok(Some(annotator::own_view(s.statements.executor(), &s.kinds, a.id, user.id).await?.1)),
        None => Ok(None),
    }
}

/// What differs between the two roles that annotate, known from their
/// extractor: the handlers below are written once, generic over it, and the
/// routes of each role are one-line wrappers carrying their OpenAPI paths
/// (utoipa's `routes!` takes no generic handler).
pub trait Annotator: Send {
    /// A crowd worker: reaches only the campaigns this session joined
    /// through a link, and knows items by their per-assignment handles.
    /// Experts reach every open expert campaign and see item ids.
    const CROWD: bool;

    /// The signed-in annotator.
    fn user(&self) -> &User;
}

impl Annotator for Worker {
    const CROWD: bool = true;

    fn user(&self) -> &User {
        &self.0
    }
}

impl Annotator for Expert {
    const CROWD: bool = false;

    fn user(&self) -> &User {
        &self.0
    }
}

/// Whether this session may reach the assignment's campaign: worker ids are
/// global, so whoever joined another campaign with the same id reaches only
/// the campaigns this session joined.
async fn ensure_reaches<R: Annotator>(session: &Session, assignment: &assignments::Assignment) -> AppResult<()> {
    if R::CROWD {
        let joined: Vec<Uuid> = session.get(JOINED_KEY).await?.unwrap_or_default();
        if !joined.contains(&assignment.campaign_id) {
            return Err(Error::NotFound("assignment").into());
        }
    }
    Ok(())
}

async fn next<R: Annotator>(
    role: R,
    session: &Session,
    s: &AppState,
    id: Uuid,
    request: &NextRequest,
) -> AppResult<axum::Json<Option<AssignmentView>>> {
    Ok(axum::Json(next_for(s, role.user(), id, Some(session), request).await?))
}

async fn view<R: Annotator>(
    role: R,
    session: &Session,
    s: &AppState,
    id: Uuid,
) -> AppResult<axum::Json<AssignmentView>> {
    let (_, view) = annotator::own_view(s.statements.executor(), &s.kinds, id, role.user().id).await?;
    ensure_reaches::<R>(session, &view.assignment).await?;
    Ok(axum::Json(view))
}

async fn respond<R: Annotator>(role: R, s: &AppState, id: Uuid, sub: &Submission) -> AppResult<axum::Json<Submitted>> {
    let mut submitted = annotator::respond(&s.recorder, &s.kinds, id, role.user().id, sub).await?;
    if R::CROWD {
        submitted.response.item_id = crate::core::work::handles::handle(id, submitted.response.item_id);
    }
    Ok(axum::Json(submitted))
}

async fn complete<R: Annotator>(
    role: R,
    session: &Session,
    s: &AppState,
    id: Uuid,
) -> AppResult<axum::Json<Completed>> {
    if R::CROWD {
        ensure_reaches::<R>(session, &assignments::get_own(s.statements.executor(), id, role.user().id).await?).await?;
    }
    let completed = annotator::complete(&s.pool, &s.kinds, id, role.user().id).await?;
    s.forget_submitted(id);
    Ok(axum::Json(completed))
}

/// Get (or resume) the worker's assignment in a campaign; `null` when none is left.
#[utoipa::path(post, path = "/api/v1/work/campaigns/{id}/assignment", tag = "work", params(("id" = Uuid, Path)), request_body = NextRequest,
    responses((status = 200, body = Option<AssignmentView>), (status = 403, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn work_next(
    worker: Worker,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(request): Json<NextRequest>,
) -> AppResult<axum::Json<Option<AssignmentView>>> {
    next(worker, &session, &s, id, &request).await
}

/// The worker's own assignment.
#[utoipa::path(get, path = "/api/v1/work/assignments/{id}", tag = "work", params(("id" = Uuid, Path)),
    responses((status = 200, body = AssignmentView), (status = 404, body = ErrorBody)))]
pub async fn work_view(
    worker: Worker,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<AssignmentView>> {
    view(worker, &session, &s, id).await
}

/// Answer an item; a retry with the same answer is harmless.
#[utoipa::path(post, path = "/api/v1/work/assignments/{id}/responses", tag = "work", params(("id" = Uuid, Path)), request_body = Submission,
    responses((status = 200, body = Submitted), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn work_respond(
    worker: Worker,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(sub): Json<Submission>,
) -> AppResult<axum::Json<Submitted>> {
    respond(worker, &s, id, &sub).await
}

/// Submit the assignment (every item answered).
#[utoipa::path(post, path = "/api/v1/work/assignments/{id}/complete", tag = "work", params(("id" = Uuid, Path)),
    responses((status = 200, body = Completed), (status = 409, body = ErrorBody)))]
pub async fn work_complete(
    worker: Worker,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Completed>> {
    complete(worker, &session, &s, id).await
}

/// Open campaigns for experts.
#[utoipa::path(get, path = "/api/v1/expert/campaigns", tag = "expert",
    responses((status = 200, body = Vec<campaigns::Campaign>), (status = 403, body = ErrorBody)))]
pub async fn expert_campaigns(_: Expert, State(s): State<AppState>) -> AppResult<axum::Json<Vec<campaigns::Campaign>>> {
    Ok(axum::Json(campaigns::open_for_experts(&s.pool).await?))
}

/// Get (or resume) the expert's assignment in a campaign.
#[utoipa::path(post, path = "/api/v1/expert/campaigns/{id}/assignment", tag = "expert", params(("id" = Uuid, Path)), request_body = NextRequest,
    responses((status = 200, body = Option<AssignmentView>), (status = 403, body = ErrorBody)))]
pub async fn expert_next(
    expert: Expert,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(request): Json<NextRequest>,
) -> AppResult<axum::Json<Option<AssignmentView>>> {
    next(expert, &session, &s, id, &request).await
}

/// The expert's own assignment.
#[utoipa::path(get, path = "/api/v1/expert/assignments/{id}", tag = "expert", params(("id" = Uuid, Path)),
    responses((status = 200, body = AssignmentView), (status = 404, body = ErrorBody)))]
pub async fn expert_view(
    expert: Expert,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<AssignmentView>> {
    view(expert, &session, &s, id).await
}

/// Answer an item as an expert.
#[utoipa::path(post, path = "/api/v1/expert/assignments/{id}/responses", tag = "expert", params(("id" = Uuid, Path)), request_body = Submission,
    responses((status = 200, body = Submitted), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn expert_respond(
    expert: Expert,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(sub): Json<Submission>,
) -> AppResult<axum::Json<Submitted>> {
    respond(expert, &s, id, &sub).await
}

/// Submit the expert's assignment.
#[utoipa::path(post, path = "/api/v1/expert/assignments/{id}/complete", tag = "expert", params(("id" = Uuid, Path)),
    responses((status = 200, body = Completed), (status = 409, body = ErrorBody)))]
pub async fn expert_complete(
    expert: Expert,
    session: Session,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Completed>> {
    complete(expert, &session, &s, id).await
}
