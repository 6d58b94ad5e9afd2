//! The payouts page of a campaign: every worker by worker id with a
//! recommendation, the platforms' bulk files, marking payouts done, and the
//! workers' background answers.

use super::paging::{PageQuery, Pager};
use super::{render_with, OnPage, PageResult};
use crate::core::campaign::campaigns;
use crate::core::crowd::payouts::{self, Payout};
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::State;
use axum::routing::{get, post};
use axum::{Form, Router};
use std::collections::BTreeMap;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/payouts", get(page))
        .route("/admin/campaigns/{id}/payouts/paid", post(mark_all_paid))
        .route("/admin/campaigns/{id}/payouts/decision", post(decide))
        .route("/admin/campaigns/{id}/payouts/platform-list", post(upload_platform_list))
}

#[derive(Template)]
#[template(path = "admin_payouts.html")]
struct PayoutsPage {
    campaign: campaigns::Campaign,
    csrf_token: String,
    /// This page's workers.
    rows: Vec<Payout>,
    rows_pager: Pager,
    /// Approved workers not yet marked paid, on every page.
    unpaid_approved: usize,
    /// Approved worker ids the platforms' files leave out (not writable as they are).
    needs_attention: Vec<String>,
    questions: Vec<String>,
    /// This page's background answers, one row per worker.
    background: Vec<(String, Vec<String>)>,
    background_pager: Pager,
    /// A refused decision: the worker, why, and the form as filled.
    refused: Option<(String, DecisionForm)>,
    /// Where the campaign stands against the platform's list.
    platform: crate::core::crowd::reconciliation::Summary,
    /// A refused platform list: why, and the text pasted (if small).
    platform_refused: Option<(String, String)>,
}

impl PayoutsPage {
    /// The refusal of this worker's decision form, if it was refused.
    fn refusal(&self, worker_id: &str) -> Option<&DecisionForm> {
        self.refused.as_ref().filter(|(w, _)| w == worker_id).map(|(_, f)| f)
    }

    /// The choice the worker's decision form shows: as refused, else theirs.
    fn chosen(&self, row: &Payout) -> String {
        match self.refusal(&row.worker_id) {
            Some(f) => f.decision.clone(),
            None => row.decision.clone().unwrap_or_else(|| "recommended".to_owned()),
        }
    }
}

/// One worker's decision form: `recommended`, `approve` or `reject`, the
/// reason with a rejection, a bonus, and the list page to return to.
#[derive(Debug, Clone, Default, serde::Deserialize)]
struct DecisionForm {
    worker_id: String,
    #[serde(default)]
    decision: String,
    #[serde(default)]
    reason: String,
    #[serde(default)]
    bonus: String,
    #[serde(default)]
    workers: String,
    /// The refusal, once refused (never posted).
    #[serde(skip)]
    message: String,
}

async fn page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    query: axum::extract::RawQuery,
) -> PageResult {
    show(&s, &session, id, &PageQuery::parse(query.0.as_deref()), None).await
}

async fn show(
    s: &AppState,
    session: &Session,
    id: Uuid,
    query: &PageQuery,
    refused: Option<(String, DecisionForm)>,
) -> PageResult {
    show_all(s, session, id, query, refused, None).await
}

async fn show_all(
    s: &AppState,
    session: &Session,
    id: Uuid,
    query: &PageQuery,
    refused: Option<(String, DecisionForm)>,
    platform_refused: Option<(String, String)>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let rows = payouts::table(&s.pool, &s.kinds, id).await?;
    let answers: Vec<(String, BTreeMap<String, String>)> = payouts::background(&s.pool, id).await?;
    let questions: Vec<String> = answers
        .iter()
        .flat_map(|(_, a)| a.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let background_pager = Pager::new(answers.len(), query, "background", "background");
    let background = background_pager
        .keep(answers)
        .into_iter()
        .map(|(w, a)| (w, questions.iter().map(|q| a.get(q).cloned().unwrap_or_default()).collect()))
        .collect();
    let unpaid_approved = rows.iter().filter(|r| r.approved() && r.paid_at.is_none()).count();
    let needs_attention =
        rows.iter().filter(|r| r.approved() && !r.writable_in_platform_files()).map(|r| r.worker_id.clone()).collect();
    let rows_pager = Pager::new(rows.len(), query, "workers", "workers");
    let status = if refused.is_some() || platform_refused.is_some() {
        axum::http::StatusCode::UNPROCESSABLE_ENTITY
    } else {
        axum::http::StatusCode::OK
    };
    let platform = crate::core::crowd::reconciliation::summary(&s.pool, id).await?;
    render_with(
        status,
        &PayoutsPage {
            campaign,
            csrf_token: csrf::token(session).await?,
            rows: rows_pager.keep(rows),
            rows_pager,
            unpaid_approved,
            needs_attention,
            questions,
            background,
            background_pager,
            refused,
            platform,
            platform_refused,
        },
    )
}

/// Takes the platform's list of submissions (a chosen file or pasted text):
/// the workers are reconciled with it and the page says how they stand; a
/// list that does not parse is refused beside its form, nothing changed.
async fn upload_platform_list(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    req: axum::extract::Request,
) -> PageResult {
    use crate::core::crowd::reconciliation;
    campaigns::get(&s.pool, id).await?;
    let upload = super::upload::read(req).await?;
    let outcome = match upload.text().and_then(reconciliation::parse) {
        Ok(list) => reconciliation::upload(&s.pool, id, &list).await,
        Err(e) => Err(e),
    };
    match outcome {
        Ok(r) => Ok(crate::http::flash::redirect(
            &session,
            format!(
                "The platform's list ({} submissions) is in: {} worker(s) on it, {} not on it, {} rejected there. \
                 Only workers on it and not rejected count now (ground truth from: reconciled).",
                r.submissions, r.on_platform, r.not_on_platform, r.rejected_on_platform
            ),
            &format!("/admin/campaigns/{id}/payouts#platform"),
        )
        .await),
        Err(crate::error::Error::Rejected { message, .. }) => {
            let pasted =
                super::Refusal::keep_pasted(&upload).into_iter().next().map(|(_, text)| text).unwrap_or_default();
            show_all(&s, &session, id, &PageQuery::parse(None), None, Some((message, pasted))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// Records the admin's decision on one worker and returns to their row; a
/// refusal is shown in the row with the form as filled.
async fn decide(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<DecisionForm>,
) -> PageResult {
    let approve = match form.decision.as_str() {
        "approve" => Some(true),
        "reject" => Some(false),
        _ => None,
    };
    let decision = payouts::Decision { approve, reason: form.reason.clone(), bonus: form.bonus.clone() };
    let page: usize = form.workers.parse().unwrap_or(1).max(1);
    match payouts::decide(&s.pool, id, &form.worker_id, admin.id, &decision).await {
        Ok(()) => {
            let what = match approve {
                Some(true) => "approved",
                Some(false) => "rejected",
                None => "left to the recommendation",
            };
            Ok(crate::http::flash::redirect(
                &session,
                format!("Worker {} {what}.", form.worker_id),
                &format!("/admin/campaigns/{id}/payouts?workers={page}#workers"),
            )
            .await)
        }
        Err(crate::error::Error::Rejected { message, .. }) => {
            let query = PageQuery::parse(Some(&format!("workers={page}")));
            let worker = form.worker_id.clone();
            show(&s, &session, id, &query, Some((worker, DecisionForm { message, ..form }))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// Marks every approved, unpaid worker as paid (after the admin approved them on the platform).
async fn mark_all_paid(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    let rows = payouts::table(&s.pool, &s.kinds, id).await?;
    let ids: Vec<String> =
        rows.into_iter().filter(|r| r.approved() && r.paid_at.is_none()).map(|r| r.worker_id).collect();
    if !ids.is_empty() {
        payouts::mark_paid(&s.pool, id, admin.id, &ids).await?;
    }
    Ok(crate::http::flash::redirect(
        &session,
        format!("{} worker(s) marked as paid.", ids.len()),
        &format!("/admin/campaigns/{id}/payouts"),
    )
    .await)
}
