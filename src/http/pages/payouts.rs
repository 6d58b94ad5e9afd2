//! The payouts page of a campaign: every worker by worker id with a
//! recommendation, the platforms' bulk files, marking payouts done, and the
//! workers' background answers.

use super::paging::{PageQuery, Pager};
use super::{render, OnPage, PageResult};
use crate::core::campaigns;
use crate::core::payouts::{self, Payout};
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::Router;
use std::collections::BTreeMap;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/payouts", get(page))
        .route("/admin/campaigns/{id}/payouts/paid", post(mark_all_paid))
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
    questions: Vec<String>,
    /// This page's background answers, one row per worker.
    background: Vec<(String, Vec<String>)>,
    background_pager: Pager,
}

async fn page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    query: axum::extract::RawQuery,
) -> PageResult {
    let query = PageQuery::parse(query.0.as_deref());
    let campaign = campaigns::get(&s.pool, id).await?;
    let rows = payouts::table(&s.pool, &s.kinds, id).await?;
    let answers: Vec<(String, BTreeMap<String, String>)> = payouts::background(&s.pool, id).await?;
    let questions: Vec<String> = answers
        .iter()
        .flat_map(|(_, a)| a.keys().cloned())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .collect();
    let background_pager = Pager::new(answers.len(), &query, "background", "background");
    let background = background_pager
        .keep(answers)
        .into_iter()
        .map(|(w, a)| (w, questions.iter().map(|q| a.get(q).cloned().unwrap_or_default()).collect()))
        .collect();
    let unpaid_approved = rows.iter().filter(|r| r.recommendation == "approve" && r.paid_at.is_none()).count();
    let rows_pager = Pager::new(rows.len(), &query, "workers", "workers");
    render(&PayoutsPage {
        campaign,
        csrf_token: csrf::token(&session).await?,
        rows: rows_pager.keep(rows),
        rows_pager,
        unpaid_approved,
        questions,
        background,
        background_pager,
    })
}

/// Marks every approved, unpaid worker as paid (after the admin approved them on the platform).
async fn mark_all_paid(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    let rows = payouts::table(&s.pool, &s.kinds, id).await?;
    let ids: Vec<String> = rows
        .into_iter()
        .filter(|r| r.recommendation == "approve" && r.paid_at.is_none())
        .map(|r| r.worker_id)
        .collect();
    if !ids.is_empty() {
        payouts::mark_paid(&s.pool, id, admin.id, &ids).await?;
    }
    crate::http::flash::set(&session, format!("{} worker(s) marked as paid.", ids.len())).await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}/payouts")).into_response())
}
