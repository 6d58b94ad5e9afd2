//! Feedback after an action: a handler that changed something leaves a
//! one-line message in the session ("12 responses excluded by curation"),
//! and the next page shown to that browser carries it: inside the section
//! the redirect leads to (`...#import`), where the page opens, else at the
//! top.

use axum::body::Body;
use axum::extract::Request;
use axum::http::header;
use axum::middleware::Next;
use axum::response::Response;
use tower_sessions::Session;

/// Session key of the pending message.
const KEY: &str = "flash";
/// Session key of the section the message belongs in (the redirect's fragment).
const SECTION_KEY: &str = "flash_section";
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
    if let Some((_, section)) = to.split_once('#').filter(|(_, s)| !s.is_empty()) {
        if let Err(e) = session.insert(SECTION_KEY, section.to_owned()).await {
            tracing::warn!(error = %e, "could not keep a flash message's section");
        }
    }
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
    let section = session.remove::<String>(SECTION_KEY).await.ok().flatten();
    let (mut parts, body) = response.into_parts();
    let Ok(bytes) = axum::body::to_bytes(body, MAX_PAGE).await else {
        return Response::from_parts(parts, Body::empty());
    };
    let html = String::from_utf8_lossy(&bytes);
    let notice = format!(r#"<p class="flash" role="status">{}</p>"#, escape(&message));
    let page = match section.as_deref().and_then(|id| section_start(&html, id)) {
        Some(at) => format!("{}{notice}{}", &html[..at], &html[at..]),
        None => html.replacen(MARKER, &notice, 1),
    };
    parts.headers.remove(header::CONTENT_LENGTH);
    Response::from_parts(parts, Body::from(page))
}

/// Where the element with this id opens its content (just after its
/// opening tag), if the page has one.
fn section_start(html: &str, id: &str) -> Option<usize> {
    let tag = html.find(&format!(" id=\"{id}\""))?;
    Some(tag + html[tag..].find('>')? + 1)
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_message_goes_inside_its_section_after_the_opening_tag() {
        let html = "<main><!--flash--><section class=\"card\" id=\"import\"><h2>Import</h2></section></main>";
        let at = super::section_start(html, "import").expect("found");
        assert!(html[..at].ends_with("id=\"import\">") && html[at..].starts_with("<h2>"));
        assert_eq!(super::section_start(html, "missing"), None);
    }
}
