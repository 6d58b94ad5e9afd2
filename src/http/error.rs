//! The HTTP layer's error: every failure becomes one JSON shape,
//! `{"error": {"code", "message"}}`, with the right status. 5xx bodies are
//! generic; the cause is logged inside the request's span.

use crate::core::Error;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use serde_json::json;

/// An error on its way to the client.
#[derive(Debug, thiserror::Error)]
pub enum AppError {
    /// A domain error.
    #[error(transparent)]
    Core(#[from] Error),
    /// The request itself is malformed (bad JSON, bad path parameter).
    #[error("{message}")]
    BadRequest {
        /// Stable code.
        code: &'static str,
        /// Explanation.
        message: String,
    },
    /// The request body is over its route's size limit (the limits differ by
    /// route and role, so the message names them all).
    #[error(
        "the request body is too large: answers and annotation forms take at most {} KB, imports {} MB, everything else {} MB; upload large files with the page's file field, the API's import routes or the command line",
        super::MAX_ANNOTATOR_BODY / 1024,
        super::import_limit() / 1024 / 1024,
        super::MAX_BODY / 1024 / 1024
    )]
    TooLarge,
    /// The body's content type is not one the route reads.
    #[error("{0}")]
    UnsupportedMediaType(String),
    /// The CSRF token is missing or wrong.
    #[error("missing or invalid CSRF token; reload the page and try again")]
    Csrf,
    /// Session storage failed.
    #[error("session error: {0}")]
    Session(#[from] tower_sessions::session::Error),
    /// A page failed to render.
    #[error("template error: {0}")]
    Template(#[from] askama::Error),
}

impl From<sqlx::Error> for AppError {
    fn from(e: sqlx::Error) -> Self {
        AppError::Core(e.into())
    }
}

impl AppError {
    /// Status code and stable code for this error.
    pub fn status_and_code(&self) -> (StatusCode, &'static str) {
        match self {
            AppError::Core(e) => match e {
                Error::Invalid { code: "image_too_large", .. } => (StatusCode::PAYLOAD_TOO_LARGE, "image_too_large"),
                Error::Invalid { code, .. } => (StatusCode::UNPROCESSABLE_ENTITY, code),
                Error::NotFound(_) => (StatusCode::NOT_FOUND, "not_found"),
                Error::Conflict { code, .. } => (StatusCode::CONFLICT, code),
                Error::Forbidden(_) => (StatusCode::FORBIDDEN, "forbidden"),
                Error::Unauthenticated => (StatusCode::UNAUTHORIZED, "unauthenticated"),
                Error::RateLimited => (StatusCode::TOO_MANY_REQUESTS, "rate_limited"),
                Error::Busy => (StatusCode::SERVICE_UNAVAILABLE, "busy"),
                Error::Database(e) if is_unavailable(e) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
                Error::Database(_) | Error::Internal(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
            },
            AppError::BadRequest { code, .. } => (StatusCode::BAD_REQUEST, code),
            AppError::Csrf => (StatusCode::FORBIDDEN, "csrf"),
            AppError::TooLarge => (StatusCode::PAYLOAD_TOO_LARGE, "body_too_large"),
            AppError::UnsupportedMediaType(_) => (StatusCode::UNSUPPORTED_MEDIA_TYPE, "unsupported_media_type"),
            // Sessions live in the database: when it is away, so are they.
            AppError::Session(_) => (StatusCode::SERVICE_UNAVAILABLE, "unavailable"),
            AppError::Template(_) => (StatusCode::INTERNAL_SERVER_ERROR, "internal"),
        }
    }

    /// The message shown to the client (generic for server errors).
    pub fn public_message(&self) -> String {
        let (status, code) = self.status_and_code();
        if code == "invalid_text" {
            return "text may not contain NUL characters (\\u0000) or invalid UTF-8".into();
        }
        if status.is_server_error() {
            if status == StatusCode::SERVICE_UNAVAILABLE {
                return "the service is busy; try again shortly".into();
            }
            tracing::error!(error = ?self, "request failed");
            return "something went wrong on our side; it has been logged".into();
        }
        self.to_string()
    }
}

/// The database cannot be reached right now (a retry may succeed): 503 with
/// `Retry-After`, never 500.
fn is_unavailable(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_))
        || matches!(e, sqlx::Error::Database(d) if d.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")))
}

/// Seconds a client should wait before retrying when the database is away.
pub const RETRY_AFTER_SECS: &str = "5";

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let (status, code) = self.status_and_code();
        let body = json!({ "error": { "code": code, "message": self.public_message() } });
        let mut response = (status, axum::Json(body)).into_response();
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from_static(RETRY_AFTER_SECS));
        }
        response
    }
}

/// Result of an HTTP handler.
pub type AppResult<T> = Result<T, AppError>;

/// The error body, for the OpenAPI document.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorBody {
    /// The error.
    pub error: ErrorDetail,
}

/// Code and message of an error.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct ErrorDetail {
    /// Stable machine-readable code.
    pub code: String,
    /// Human explanation.
    pub message: String,
}
