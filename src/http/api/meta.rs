//! Health, readiness, metrics, and who-am-I.

use crate::auth::users::User;
use crate::http::error::AppResult;
use crate::http::extract::CurrentUser;
use crate::http::{csrf, AppState};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::IntoResponse;
use axum::Json;
use tower_sessions::Session;

/// Process is up.
#[utoipa::path(get, path = "/healthz", tag = "meta", security(()), responses((status = 200, description = "alive")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// How long the readiness check waits for the database: a dead database
/// must show at once, not after the pool's acquire timeout.
const READY_TIMEOUT: std::time::Duration = std::time::Duration::from_secs(1);

/// Database is reachable.
#[utoipa::path(get, path = "/readyz", tag = "meta", security(()), responses((status = 200, description = "ready"), (status = 503, description = "database unreachable")))]
pub async fn readyz(State(state): State<AppState>) -> axum::response::Response {
    let check = crate::db::ping(&state.pool);
    match tokio::time::timeout(READY_TIMEOUT, check).await {
        Ok(Ok(_)) => (StatusCode::OK, "ready").into_response(),
        outcome => {
            let why = match outcome {
                Ok(Err(e)) => e.to_string(),
                _ => "no answer within a second".to_owned(),
            };
            tracing::warn!(error = %why, "readiness check failed");
            crate::http::error::AppError::Core(crate::error::Error::Database(sqlx::Error::PoolTimedOut)).into_response()
        }
    }
}

/// Prometheus metrics (text exposition format), for admins and for the
/// scraper holding the configured metrics token (request counts and
/// volumes are no one else's business).
#[utoipa::path(get, path = "/metrics", tag = "meta",
    responses((status = 200, description = "Prometheus text format"), (status = 401, body = crate::http::error::ErrorBody)))]
pub async fn metrics(
    axum::extract::State(s): axum::extract::State<crate::http::AppState>,
    headers: axum::http::HeaderMap,
    admin: Result<crate::http::extract::Admin, crate::http::error::AppError>,
) -> crate::http::error::AppResult<axum::response::Response> {
    let bearer = headers
        .get(axum::http::header::AUTHORIZATION)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.strip_prefix("Bearer "));
    let scraper = match (bearer, &s.config.metrics_token) {
        (Some(given), Some(expected)) => {
            use sha2::Digest;
            // Compared as digests: the time taken says nothing about the token.
            sha2::Sha256::digest(given.as_bytes()) == sha2::Sha256::digest(expected.as_bytes())
        }
        _ => false,
    };
    if admin.is_err() && !scraper {
        return Err(crate::error::Error::Unauthenticated.into());
    }
    let body = crate::http::metrics::handle().render();
    Ok(([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], body).into_response())
}

/// The caller and, for session callers, the CSRF token to send on writes.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Me {
    /// The user.
    pub user: User,
    /// Token for the `X-CSRF-Token` header.
    pub csrf_token: String,
}

/// Who am I.
#[utoipa::path(get, path = "/api/v1/me", tag = "meta", responses((status = 200, body = Me), (status = 401, body = crate::http::error::ErrorBody)))]
pub async fn me(CurrentUser(user): CurrentUser, session: Session) -> AppResult<Json<Me>> {
    Ok(Json(Me { user, csrf_token: csrf::token(&session).await? }))
}
