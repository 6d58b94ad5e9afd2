//! The backups page: the backups the service keeps (when each was taken,
//! its size, whether it was read back whole), a download of each, and
//! "Back up now". Admins only. The files are the ones `atelier backup
//! restore` reads (see `docs/running.md`).

use super::{render, OnPage, PageResult};
use crate::db::backups::{self, Kept};
use crate::error::Error;
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, flash, AppState};
use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::IntoResponse;
use axum::routing::{get, post};
use axum::Router;
use std::sync::atomic::Ordering;
use tower_sessions::Session;

/// The backups page's routes.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/backups", get(page))
        .route("/admin/backups/now", post(now))
        .route("/admin/backups/{name}", get(download))
}

#[derive(Template)]
#[template(path = "admin_backups.html")]
struct BackupsPage {
    /// Where they are kept, when backups are set up.
    dir: Option<String>,
    /// How often the service takes one by itself, in words.
    every: Option<String>,
    keep: usize,
    /// Newest first.
    kept: Vec<Kept>,
    /// A backup asked for is being taken.
    taking: bool,
    csrf_token: String,
}

impl BackupsPage {
    /// A size in words.
    fn size(bytes: &u64) -> String {
        match *bytes {
            b if b >= 1 << 30 => format!("{:.1} GB", b as f64 / f64::from(1u32 << 30)),
            b if b >= 1 << 20 => format!("{:.1} MB", b as f64 / f64::from(1u32 << 20)),
            b => format!("{:.1} kB", b as f64 / 1024.0),
        }
    }
}

async fn page(OnPage(Admin(_)): OnPage<Admin>, State(s): State<AppState>, session: Session) -> PageResult {
    let folder = s.config.backups.clone();
    let kept = match &folder {
        Some(f) => f.shelf.list().await.map_err(unavailable("listing backups"))?,
        None => Vec::new(),
    };
    render(&BackupsPage {
        dir: folder.as_ref().map(|f| f.shelf.describe()),
        every: folder.as_ref().and_then(|f| f.every).map(|e| humantime::format_duration(e).to_string()),
        keep: folder.as_ref().map_or(0, |f| f.keep),
        taking: folder.as_ref().is_some_and(|f| f.taking.load(Ordering::SeqCst)),
        kept,
        csrf_token: csrf::token(&session).await?,
    })
}

/// Starts a backup in the background; the page lists it once it is taken
/// and read back.
async fn now(OnPage(Admin(admin)): OnPage<Admin>, State(s): State<AppState>, session: Session) -> PageResult {
    let message = match &s.config.backups {
        None => "Backups are not set up on this service.",
        Some(folder) if folder.take_now() => {
            tracing::info!(admin = %admin.id, "backup asked for");
            "A backup is being taken; it is listed here once it is written and read back whole (reload the page)."
        }
        Some(_) => "A backup is being taken already; it is listed here once it is done.",
    };
    Ok(flash::redirect(&session, message, "/admin/backups").await)
}

/// A failed backup step as the page answers it: an unreachable bucket is a
/// 503 the admin may retry, anything else an internal error.
fn unavailable(context: &'static str) -> impl FnOnce(backups::BackupError) -> Error {
    move |e| match e {
        backups::BackupError::Store(e @ crate::storage::StorageError::Unavailable(_)) => Error::Storage(e),
        other => Error::internal(context, other),
    }
}

/// One backup's file, streamed (a backup holds every image, so it may be large).
async fn download(OnPage(Admin(_)): OnPage<Admin>, State(s): State<AppState>, Path(name): Path<String>) -> PageResult {
    let folder = s.config.backups.as_ref().ok_or(Error::NotFound("backup"))?;
    // Only a backup's own name reaches a file or an object: never another path.
    let fetched =
        folder.shelf.open(&name).await.map_err(unavailable("reading a backup"))?.ok_or(Error::NotFound("backup"))?;
    let body = axum::body::Body::from_stream(fetched.stream);
    Ok((
        [
            (header::CONTENT_TYPE, "application/x-tar".to_owned()),
            (header::CONTENT_LENGTH, fetched.size.to_string()),
            (header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
            (header::CACHE_CONTROL, "no-store".to_owned()),
        ],
        body,
    )
        .into_response())
}
