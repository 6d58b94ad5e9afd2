//! How long the service works on a request before answering 408: a minute,
//! except for an admin's upload of more than an ordinary body (an import
//! file, up to the import limit), which may take an hour, since 256 MB take
//! over three minutes just to arrive at 10 Mbit/s. The longer time is
//! granted only once the caller is known to be an admin, so nobody else can
//! hold a request open for long by announcing a big body. A request that
//! times out still finishes its work (see [`super::detach`]).

use axum::extract::{Request, State};
use axum::http::request::Parts;
use axum::http::{header, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Duration;

/// The time allowed to a request, and to an admin's large upload.
#[derive(Debug, Clone, Copy)]
pub struct RequestTime {
    /// Every request.
    pub ordinary: Duration,
    /// An admin's upload bigger than [`super::MAX_BODY`], in all.
    pub upload: Duration,
}

impl Default for RequestTime {
    fn default() -> Self {
        Self { ordinary: Duration::from_secs(60), upload: Duration::from_secs(3600) }
    }
}

/// On a request that announces a body bigger than an ordinary one: set once
/// the caller is known to be an admin, when it may take the upload time.
#[derive(Debug, Clone, Default)]
struct UploadTime(Arc<AtomicBool>);

/// Middleware: answers 408 when a request runs out of its time.
pub async fn limit(State(time): State<RequestTime>, mut req: Request, next: Next) -> Response {
    // Only a large upload can earn more time: other requests (votes) carry nothing.
    let upload = announces_large_body(&req).then(UploadTime::default);
    if let Some(upload) = &upload {
        req.extensions_mut().insert(upload.clone());
    }
    let mut work = std::pin::pin!(next.run(req));
    tokio::select! {
        response = &mut work => return response,
        () = tokio::time::sleep(time.ordinary) => {}
    }
    if !upload.is_some_and(|upload| upload.0.load(Ordering::Acquire)) {
        return StatusCode::REQUEST_TIMEOUT.into_response();
    }
    match tokio::time::timeout(time.upload.saturating_sub(time.ordinary), work).await {
        Ok(response) => response,
        Err(_) => StatusCode::REQUEST_TIMEOUT.into_response(),
    }
}

fn announces_large_body(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<usize>().ok())
        .is_some_and(|length| length > super::MAX_BODY)
}

/// Grants the upload time to this request if it announces a body bigger
/// than an ordinary one; called once the caller is known to be an admin.
pub fn allow_admin_upload(parts: &Parts) {
    if let Some(upload) = parts.extensions.get::<UploadTime>() {
        upload.0.store(true, Ordering::Release);
    }
}
