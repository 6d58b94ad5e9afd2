//! Feedback after an action: a handler that changed something leaves a
//! one-line message in the session ("12 responses excluded by curation"),
//! and the next page shown to that browser carries it at the top.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use tower_sessions::Session;

/// Session key of the pending message.
const KEY: &str = "flash";
/// Where base.html wants the message.
const MARKER: &str = "<!--flash-->";
/// Largest page rewritten (pages are small; anything larger is left alone).
const MAX_PAGE: usize = 4 * 1024 * 1024;

/// Leaves a message for the next page this browser sees.
pub async fn set(session: &Session, message: impl Into<String>) {
    if let Err(e) = session.insert(KEY, message.into()).await {
        tracing::warn!(error = %e, "could not keep a flash message");
    }
}

/// Leaves a message and sends the browser to `to` (303), where it shows:
/// the end of every page action that changed something.
pub async fn redirect(session: &Session, message: impl Into<String>, to: &str) -> Response {
    set(session, message).await;
    axum::response::IntoResponse::into_response(axum::response::Redirect::to(to))
}

fn escape(text: &str) -> String {
    text.replace('&', "&amp;").replace('<', "&lt;").replace('>', "&gt;").replace('"', "&quot;")
}

/// Middleware: puts a pending message into the next HTML page.
pub async fn show(req: Request, next: Next) -> Response {
    let session = req.extensions().get::<Session>().cloned();
    let response = next.run(req).await;
    let is_page = response
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/html"));
    let Some(session) = session.filter(|_| is_page && response.status().is_success()) else { return response };
    // Look before taking: removing marks the session changed (a write), and
    // most pages have no message waiting.
    let Ok(Some(message)) = session.get::<String>(KEY).await else { return response };
    let _ = session.remove::<String>(KEY).await;
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let html = String::from_utf8_lossy(&bytes);
    let notice = format!(r#"<p class="flash" role="status">{}</p>"#, escape(&message));
    let page = html.replacen(MARKER, &notice, 1);
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(page))
}
