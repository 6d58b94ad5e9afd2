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
#[utoipa::path(get, path = "/healthz", tag = "meta", responses((status = 200, description = "alive")))]
pub async fn healthz() -> &'static str {
    "ok"
}

/// Database is reachable.
#[utoipa::path(get, path = "/readyz", tag = "meta", responses((status = 200, description = "ready"), (status = 503, description = "database unreachable")))]
pub async fn readyz(State(state): State<AppState>) -> impl IntoResponse {
    match sqlx::query_scalar::<_, i32>("SELECT 1").fetch_one(&state.pool).await {
        Ok(_) => (StatusCode::OK, "ready"),
        Err(e) => {
            tracing::warn!(error = %e, "readiness check failed");
            (StatusCode::SERVICE_UNAVAILABLE, "database unreachable")
        }
    }
}

/// Prometheus metrics (text exposition format).
#[utoipa::path(get, path = "/metrics", tag = "meta", responses((status = 200, description = "Prometheus text format")))]
pub async fn metrics() -> impl IntoResponse {
    ([(axum::http::header::CONTENT_TYPE, "text/plain; version=0.0.4")], crate::http::metrics::handle().render())
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
