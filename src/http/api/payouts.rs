//! Payouts by worker id, in the shapes crowd platforms take, and the
//! workers' background answers.

use crate::core::campaign::campaigns;
use crate::core::crowd::payouts::{self, Format, Payout};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Path, Query};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::Response;
use uuid::Uuid;

/// Every worker who submitted work: time, checks, exclusions, recommendation.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/payouts", tag = "payouts", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<Payout>), (status = 404, body = ErrorBody)))]
pub async fn list_payouts(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<Payout>>> {
    Ok(axum::Json(payouts::table(&s.pool, &s.kinds, id).await?))
}

/// Which export, for whom.
#[derive(Debug, serde::Deserialize, utoipa::IntoParams)]
pub struct ExportQuery {
    /// `full` (default), `prolific-approve`, `prolific-bonus` or `mturk`.
    #[param(inline)]
    pub format: Option<Format>,
    /// Platform formats: include workers already marked paid (default: only unpaid ones).
    #[serde(default)]
    pub all: bool,
    /// The bonus per approved worker, for `prolific-bonus` (e.g. `0.50`):
    /// more than 0, below 100, at most two decimals.
    #[param(pattern = r"^([1-9][0-9]?(\.[0-9]{1,2})?|0?\.([1-9][0-9]?|0[1-9]))$")]
    pub amount: Option<String>,
}

/// The payout table as a file for the crowd platform's bulk actions.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/payouts.csv", tag = "payouts", params(("id" = Uuid, Path), ExportQuery),
    responses((status = 200, content((String = "text/csv"), (String = "text/plain")),
               description = "CSV; `prolific-approve` is plain text, one worker id per line"),
               (status = 422, body = ErrorBody)))]
pub async fn export_payouts(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Query(q): Query<ExportQuery>,
) -> AppResult<Response> {
    // A malformed bonus is refused whatever the format.
    if let Some(amount) = &q.amount {
        payouts::check_amount(amount)?;
    }
    let rows = payouts::table(&s.pool, &s.kinds, id).await?;
    let format = q.format.unwrap_or(Format::Full);
    let body = payouts::export(&rows, format, !q.all, q.amount.as_deref())?;
    let (kind, what, extension) = match format {
        Format::ProlificApprove => ("text/plain; charset=utf-8", "prolific-approve", "txt"),
        Format::ProlificBonus => ("text/csv; charset=utf-8", "prolific-bonus", "csv"),
        Format::Mturk => ("text/csv; charset=utf-8", "mturk-results", "csv"),
        Format::Full => ("text/csv; charset=utf-8", "payouts", "csv"),
    };
    let campaign = campaigns::get(&s.pool, id).await?;
    Ok(super::attachment(kind, &super::export_file_name(&campaign, what, extension), body))
}

/// Workers to mark as paid.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct MarkPaid {
    /// Their worker ids.
    #[schema(min_items = 1)]
    pub worker_ids: Vec<String>,
}

/// Mark workers' payouts as done.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/payouts/paid", tag = "payouts", params(("id" = Uuid, Path)),
    request_body = MarkPaid, responses((status = 200, body = Object), (status = 422, body = ErrorBody)))]
pub async fn mark_paid(
    Admin(admin): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<MarkPaid>,
) -> AppResult<axum::Json<serde_json::Value>> {
    campaigns::get(&s.pool, id).await?;
    let marked = payouts::mark_paid(&s.pool, id, admin.id, &body.worker_ids).await?;
    Ok(axum::Json(serde_json::json!({ "marked": marked })))
}

/// An admin's decision on one worker, over the recommendation.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct WorkerDecision {
    /// The worker's id on the crowd platform.
    #[schema(min_length = 1)]
    pub worker_id: String,
    /// `approve`, `reject`, or absent to follow the recommendation.
    #[serde(default)]
    pub decision: Option<Verdict>,
    /// Why, with a rejection (the platform shows it to the worker).
    #[serde(default)]
    pub reason: String,
    /// A bonus like `0.50`, or absent for none.
    #[serde(default)]
    #[schema(pattern = r"^([1-9][0-9]?(\.[0-9]{1,2})?|0?\.([1-9][0-9]?|0[1-9]))$")]
    pub bonus: Option<String>,
}

/// An admin's verdict on a worker.
#[derive(Debug, Clone, Copy, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    /// Approve (pay).
    Approve,
    /// Reject, with a reason.
    Reject,
}

/// Decide on one worker: approve or reject over the recommendation, and a
/// bonus; every payouts file follows it. Nothing decided clears it.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/payouts/decision", tag = "payouts", params(("id" = Uuid, Path)),
    request_body = WorkerDecision,
    responses((status = 204), (status = 404, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn decide(
    Admin(admin): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<WorkerDecision>,
) -> AppResult<StatusCode> {
    campaigns::get(&s.pool, id).await?;
    let decision = payouts::Decision {
        approve: body.decision.map(|v| matches!(v, Verdict::Approve)),
        reason: body.reason,
        bonus: body.bonus.unwrap_or_default(),
    };
    payouts::decide(&s.pool, id, &body.worker_id, admin.id, &decision).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// The background answers ("About you") by worker id, as CSV.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/background.csv", tag = "payouts", params(("id" = Uuid, Path)),
    responses((status = 200, content_type = "text/csv", body = String), (status = 404, body = ErrorBody)))]
pub async fn background_csv(_: Admin, State(s): State<AppState>, Path(id): Path<Uuid>) -> AppResult<Response> {
    let campaign = campaigns::get(&s.pool, id).await?;
    let body = payouts::background_csv(&payouts::background(&s.pool, id).await?)?;
    Ok(super::attachment("text/csv; charset=utf-8", &super::export_file_name(&campaign, "background", "csv"), body))
}

/// Upload the crowd platform's own list of submissions: Prolific's
/// submissions export (CSV with `Participant id` and `Status`) or MTurk's
/// batch results (`WorkerId`, `AssignmentId`, `AssignmentStatus`). It
/// replaces the campaign's list (all or nothing) and sets
/// `ground_truth_from` to `reconciled`: only workers on the list and not
/// rejected there count in ground truth, curation, alpha and payouts.
#[utoipa::path(put, path = "/api/v1/admin/campaigns/{id}/platform-submissions", tag = "payouts",
    params(("id" = Uuid, Path)), request_body(content = String, content_type = "text/csv"),
    responses((status = 200, body = crate::core::crowd::reconciliation::Reconciled), (status = 422, body = ErrorBody)))]
pub async fn upload_platform_list(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    body: axum::body::Bytes,
) -> AppResult<axum::Json<crate::core::crowd::reconciliation::Reconciled>> {
    use crate::core::crowd::reconciliation;
    campaigns::get(&s.pool, id).await?;
    let list = reconciliation::parse(super::body_text(&body)?)?;
    Ok(axum::Json(reconciliation::upload(&s.pool, id, &list).await?))
}

/// Where the campaign stands against the platform's list: when it was
/// uploaded, and how many workers who submitted are on it, not on it, or
/// rejected there.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/platform-submissions", tag = "payouts",
    params(("id" = Uuid, Path)),
    responses((status = 200, body = crate::core::crowd::reconciliation::Summary), (status = 404, body = ErrorBody)))]
pub async fn platform_list_summary(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<crate::core::crowd::reconciliation::Summary>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(crate::core::crowd::reconciliation::summary(&s.pool, id).await?))
}

/// An adaptive overlap's progress: items decided, at the maximum,
/// undecided and not yet through their first questionnaire, and ratings
/// given against what fixed overlap gives (`null` under fixed overlap).
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/overlap", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Option<crate::core::work::overlap::AdaptiveProgress>), (status = 404, body = ErrorBody)))]
pub async fn overlap_progress(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Option<crate::core::work::overlap::AdaptiveProgress>>> {
    let campaign = campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(crate::core::work::overlap::progress(&s.pool, &campaign).await?))
}
