//! The HTTP layer's error: every failure becomes one JSON shape,
//! `{"error": {"code", "message"}}`, with the right status. 5xx bodies are
//! generic; the cause is logged inside the request's span.

use crate::error::{Code, Error};
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
        /// Stable code (a 400 one).
        code: Code,
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
    /// The code the client receives (which carries the status).
    pub fn code(&self) -> Code {
        match self {
            AppError::Core(e) => e.code(),
            AppError::BadRequest { code, .. } => *code,
            AppError::Csrf => Code::Csrf,
            AppError::TooLarge => Code::BodyTooLarge,
            AppError::UnsupportedMediaType(_) => Code::UnsupportedMediaType,
            // Sessions live in the database: when it is away, so are they.
            AppError::Session(_) => Code::Unavailable,
            AppError::Template(_) => Code::Internal,
        }
    }

    /// The message shown to the client (generic for server errors: their
    /// cause is logged, never sent).
    pub fn public_message(&self) -> String {
        let code = self.code();
        match code.status() {
            _ if code == Code::InvalidText => "text may not contain NUL characters (\\u0000) or invalid UTF-8".into(),
            StatusCode::SERVICE_UNAVAILABLE => "the service is busy; try again shortly".into(),
            status if status.is_server_error() => "something went wrong on our side; it has been logged".into(),
            _ => self.to_string(),
        }
    }
}

/// A server error's cause, carried on its response for the request log to
/// write once (see `metrics::log_request`); clients never see it.
#[derive(Debug, Clone)]
pub struct ServerErrorCause(pub String);

impl ServerErrorCause {
    /// The error with its sources, one after another.
    pub fn of(e: &dyn std::error::Error) -> Self {
        Self(cause_chain(e))
    }
}

/// Seconds a client should wait before retrying when the database is away.
pub const RETRY_AFTER_SECS: &str = "5";

impl IntoResponse for AppError {
    fn into_response(self) -> Response {
        let code = self.code();
        let status = code.status();
        let body = json!({ "error": { "code": code.as_str(), "message": self.public_message() } });
        let mut response = (status, axum::Json(body)).into_response();
        if status.is_server_error() && status != StatusCode::SERVICE_UNAVAILABLE {
            // The whole chain, for the log line the request gets.
            response.extensions_mut().insert(ServerErrorCause::of(&self));
        }
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(axum::http::header::RETRY_AFTER, axum::http::HeaderValue::from_static(RETRY_AFTER_SECS));
        }
        response
    }
}

/// An error and its sources, one after another.
fn cause_chain(e: &dyn std::error::Error) -> String {
    let mut text = format!("{e}");
    let mut source = e.source();
    while let Some(s) = source {
        text.push_str(": ");
        text.push_str(&s.to_string());
        source = s.source();
    }
    text
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_server_error_carries_its_cause_for_the_log_and_never_to_the_client() {
        let response = AppError::Core(Error::internal("writing a file", std::io::Error::other("the disk is on fire")))
            .into_response();
        assert_eq!(response.status(), StatusCode::INTERNAL_SERVER_ERROR);
        let cause = response.extensions().get::<ServerErrorCause>().expect("cause for the log");
        assert!(cause.0.contains("the disk is on fire"), "{}", cause.0);
        let refused = AppError::Core(Error::invalid(Code::InvalidNote, "too long")).into_response();
        assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
        assert!(refused.extensions().get::<ServerErrorCause>().is_none(), "client errors are not server errors");
        let conflict = AppError::Core(Error::conflict(Code::NameTaken, "taken")).into_response();
        assert_eq!(conflict.status(), StatusCode::CONFLICT, "the code carries the status");
    }

    #[test]
    fn a_database_failure_keeps_its_source() {
        let e = Error::Database(sqlx::Error::Protocol("unexpected message".into()));
        assert!(ServerErrorCause::of(&e).0.contains("unexpected message"));
        assert_eq!(e.code(), Code::Internal);
        assert_eq!(Error::Database(sqlx::Error::PoolTimedOut).code(), Code::Unavailable);
    }
}
