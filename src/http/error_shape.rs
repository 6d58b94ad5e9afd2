//! Every error leaves in the service's shape: `{"error": {"code",
//! "message"}}` on the API and for scripts, the HTML error page for
//! browsers on page routes. Errors raised by the framework (an unknown path,
//! a wrong method, a body over the limit, a malformed query string, a
//! timeout) arrive here as plain text or empty bodies and are rewritten.

use crate::error::Code;
use axum::body::Body;
use axum::extract::Request;
use axum::http::{header, HeaderValue, StatusCode};
use axum::middleware::Next;
use axum::response::Response;

/// Largest error body read back to take its message.
const MAX_ERROR_BODY: usize = 64 * 1024;

/// A stable code and a human message for a status the framework produced.
fn describe(status: StatusCode) -> (Code, &'static str) {
    match status {
        StatusCode::NOT_FOUND => (Code::NotFound, "there is nothing at this address"),
        StatusCode::METHOD_NOT_ALLOWED => (Code::MethodNotAllowed, "this address does not accept that method"),
        StatusCode::PAYLOAD_TOO_LARGE => (Code::BodyTooLarge, "the request body is too large"),
        StatusCode::UNSUPPORTED_MEDIA_TYPE => {
            (Code::UnsupportedMediaType, "the request body has an unsupported content type")
        }
        StatusCode::REQUEST_TIMEOUT => (Code::Timeout, "the request took too long"),
        StatusCode::SERVICE_UNAVAILABLE => {
            (Code::Unavailable, "the service is busy or its database is away; try again shortly")
        }
        StatusCode::UNPROCESSABLE_ENTITY => (Code::Invalid, "the request could not be processed"),
        s if s.is_server_error() => (Code::Internal, "something went wrong on our side"),
        _ => (Code::BadRequest, "the request is malformed"),
    }
}

fn content_type(response: &Response) -> &str {
    response.headers().get(header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or("")
}

/// Middleware: rewrites error responses that are not in the service's shape.
pub async fn shape_errors(req: Request, next: Next) -> Response {
    let api = req.uri().path().starts_with("/api/");
    let browser = !api
        && req.headers().get(header::ACCEPT).and_then(|v| v.to_str().ok()).is_some_and(|a| a.contains("text/html"));
    let response = next.run(req).await;
    let status = response.status();
    if !(status.is_client_error() || status.is_server_error()) {
        return response;
    }
    // A bare 500 comes from a layer (the session store) whose database is
    // away: say so, and when to retry, rather than "internal error".
    let bare = response.headers().get(header::CONTENT_TYPE).is_none();
    let response = if status == StatusCode::INTERNAL_SERVER_ERROR && bare {
        let (mut parts, _) = response.into_parts();
        parts.status = StatusCode::SERVICE_UNAVAILABLE;
        parts.headers.insert(header::RETRY_AFTER, HeaderValue::from_static(super::error::RETRY_AFTER_SECS));
        Response::from_parts(parts, Body::empty())
    } else {
        response
    };
    let status = response.status();
    let ct = content_type(&response).to_owned();
    let is_json = ct.starts_with("application/json");
    let is_html = ct.starts_with("text/html");
    // Pages already render their errors; JSON stays JSON except for browsers.
    if is_html || (is_json && !browser) {
        return response;
    }
    let (mut parts, body) = response.into_parts();
    let text = axum::body::to_bytes(body, MAX_ERROR_BODY).await.unwrap_or_default();
    let (code, fallback) = describe(status);
    // Keep a JSON error's message; take a plain-text one only for client
    // errors (server errors never show internals).
    let message = if is_json {
        serde_json::from_slice::<serde_json::Value>(&text)
            .ok()
            .and_then(|v| v["error"]["message"].as_str().map(str::to_owned))
            .unwrap_or_else(|| fallback.to_owned())
    } else if status.is_client_error() && !text.is_empty() && text.len() < 500 {
        format!("{fallback}: {}", String::from_utf8_lossy(&text).trim())
    } else {
        fallback.to_owned()
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    if browser {
        let page = super::pages::error_page(status, message);
        let (page_parts, page_body) = page.into_parts();
        parts.headers.insert(
            header::CONTENT_TYPE,
            page_parts.headers.get(header::CONTENT_TYPE).cloned().unwrap_or(HeaderValue::from_static("text/html")),
        );
        return Response::from_parts(parts, page_body);
    }
    let body = serde_json::json!({"error": {"code": code.as_str(), "message": message}}).to_string();
    parts.headers.insert(header::CONTENT_TYPE, HeaderValue::from_static("application/json"));
    Response::from_parts(parts, Body::from(body))
}
