//! Server-rendered pages. Every page works with the mouse alone; scripts in
//! `static/` only add keyboard shortcuts and image zoom.

mod accounts;
mod admin;
mod auth;
mod backups;
pub mod charts;
mod data;
mod expert;
mod mturk;
mod own_account;
pub mod paging;
mod payouts;
mod releases;
mod respond;
mod setting_lines;
mod settings;
mod study_preview;
pub mod upload;
mod work;

use super::extract::Path;
use super::AppState;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use axum::Router;

pub use respond::{act, error_page, render, render_with, OnPage, PageError, PageResult, Refusal, StudyError};

/// All page routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .merge(auth::router())
        .merge(work::router())
        .merge(admin::router())
        .merge(data::router())
        .merge(accounts::router())
        .merge(study_preview::router())
        .merge(expert::router())
        .merge(own_account::router())
        .merge(releases::router())
        .merge(payouts::router())
        .merge(backups::router())
        .route("/demo/images/{role}/{file}", axum::routing::get(demo_image))
}

/// Demo images, drawn on request: a kind's own (see
/// `TaskKind::demo_picture`), else the shared ones ([`crate::demo::svg`]).
pub async fn demo_image(
    axum::extract::State(s): axum::extract::State<AppState>,
    Path((role, file)): Path<(String, String)>,
) -> Response {
    let n = file.strip_suffix(".svg").and_then(|n| n.parse::<usize>().ok());
    let drawn =
        n.and_then(|n| s.pages.all().find_map(|p| p.demo_picture(&role, n)).or_else(|| crate::demo::svg(&role, n)));
    match drawn {
        Some(svg) => ([(header::CONTENT_TYPE, "image/svg+xml"), (header::CACHE_CONTROL, "public, max-age=86400")], svg)
            .into_response(),
        None => StatusCode::NOT_FOUND.into_response(),
    }
}
