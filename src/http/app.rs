//! The whole application: every route, the middleware around them and the
//! static files.

use super::{
    api, csrf, detach, error_shape, flash, images, import_limit, kind_routes, metrics, pages, request_time,
    session_store, AppState, MAX_BODY,
};
use axum::extract::{DefaultBodyLimit, Request};
use axum::http::{header, HeaderValue};
use axum::middleware;
use axum::Router;
use tower_http::request_id::{MakeRequestUuid, PropagateRequestIdLayer, RequestId, SetRequestIdLayer};
use tower_http::services::ServeDir;
use tower_http::set_header::SetResponseHeaderLayer;
use tower_http::trace::TraceLayer;
use tower_sessions::cookie::SameSite;
use tower_sessions::{Expiry, SessionManagerLayer};

/// The whole application, as the binary serves it and the tests drive it,
/// with the task kinds' own routes merged in.
pub fn app(state: AppState, kind_routes: Vec<kind_routes::KindRoutes>) -> Router {
    // Install the metrics recorder before the first request records anything.
    metrics::handle();
    let mut kind_pages = Router::new();
    let mut kind_api = utoipa_axum::router::OpenApiRouter::new();
    for routes in kind_routes {
        kind_pages = kind_pages.merge(routes.pages);
        kind_api = kind_api.merge(routes.api).merge(routes.imports.layer(DefaultBodyLimit::max(import_limit())));
    }
    let (api, openapi) = api::router().merge(kind_api).split_for_parts();
    let session_store = session_store::SessionStoreWithBatchedLoads::new(
        state.pool.clone(),
        state.statements.clone(),
        state.sessions.clone(),
    );
    let hsts = state
        .config
        .public_url
        .starts_with("https://")
        .then(|| HeaderValue::from_static("max-age=31536000; includeSubDomains"));
    let sessions = SessionManagerLayer::new(session_store)
        .with_name("atelier_session")
        .with_http_only(true)
        .with_same_site(SameSite::Lax)
        .with_secure(state.config.secure_cookies)
        .with_expiry(Expiry::OnInactivity(tower_sessions::cookie::time::Duration::hours(12)));
    let static_files = Router::new().nest_service("/static", ServeDir::new(static_dir())).layer(
        SetResponseHeaderLayer::overriding(header::CACHE_CONTROL, HeaderValue::from_static("public, max-age=300")),
    );
    // Uploaded images are content-addressed: a name never changes content.
    let images = Router::new()
        .route("/images/{name}", axum::routing::get(images::uploaded))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")));
    Router::new()
        .merge(api)
        .merge(pages::router())
        .merge(kind_pages)
        // A lab's bucket images, for admins' pages (behind their session).
        .route("/admin/bucket/{*key}", axum::routing::get(images::in_bucket))
        .route_layer(middleware::from_fn(metrics::track))
        .layer(middleware::from_fn_with_state(state.clone(), csrf::protect))
        .layer(middleware::from_fn(flash::show))
        .layer(sessions)
        // Pages, the API and exports hold people's data: no cache keeps them.
        .layer(SetResponseHeaderLayer::if_not_present(header::CACHE_CONTROL, HeaderValue::from_static("no-store")))
        .merge(static_files)
        .merge(images)
        .merge(api::meta_router(openapi))
        .with_state(state.clone())
        .layer(DefaultBodyLimit::max(MAX_BODY))
        // Inside the timeout: a request that times out still finishes its work.
        .layer(middleware::from_fn_with_state(state.tasks.clone(), detach::run_to_completion))
        .layer(middleware::from_fn_with_state(request_time::RequestTime::default(), request_time::limit))
        .layer(middleware::from_fn(metrics::log_request))
        .layer(PropagateRequestIdLayer::x_request_id())
        .layer(TraceLayer::new_for_http().make_span_with(|req: &Request| {
            let id = req.extensions().get::<RequestId>().and_then(|r| r.header_value().to_str().ok()).unwrap_or("-");
            tracing::info_span!("request", method = %req.method(), path = %redacted_path(req.uri().path()), request_id = %id)
        }))
        .layer(SetRequestIdLayer::x_request_id(MakeRequestUuid))
        .layer(middleware::from_fn(bound_request_id))
        .layer(middleware::from_fn(error_shape::shape_errors))
        .layer(SetResponseHeaderLayer::if_not_present(header::CONTENT_SECURITY_POLICY, HeaderValue::from_static(CSP)))
        .layer(middleware::from_fn(deny_framing))
        .layer(SetResponseHeaderLayer::overriding(header::X_CONTENT_TYPE_OPTIONS, HeaderValue::from_static("nosniff")))
        // Invitation links carry a token: never leak it in a Referer.
        .layer(SetResponseHeaderLayer::overriding(header::REFERRER_POLICY, HeaderValue::from_static("no-referrer")))
        // Served as https: browsers never fall back to plain http (a year, as the preload list asks).
        .layer(SetResponseHeaderLayer::overriding(header::STRICT_TRANSPORT_SECURITY, move |_: &axum::response::Response| {
            hsts.clone()
        }))
}

/// The Content-Security-Policy of every response: only our own scripts and
/// styles run (images may come from any web address: item payloads link
/// to them), nothing may frame us.
const CSP: &str = "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; \
                   object-src 'none'; base-uri 'none'; form-action 'self'; frame-ancestors 'none'";

/// Path segments after which the next segment is a credential (an
/// invitation token): every route that takes a token names it after one of
/// these (`/join/{token}`, `.../invitations/{token}/...`), so a new route is
/// redacted without being listed (`tests/it/http_security.rs` checks every
/// route template in the sources against this rule).
const TOKEN_AFTER: [&str; 2] = ["join", "invitations"];

/// The path as logged: invitation tokens are credentials and never reach
/// the logs, whoever sends them and whatever the answer (401, 403 and 404
/// too, and whatever follows the token).
pub fn redacted_path(path: &str) -> std::borrow::Cow<'_, str> {
    let segments: Vec<&str> = path.split('/').collect();
    let credential = |i: usize| i > 0 && TOKEN_AFTER.contains(&segments[i - 1]) && !segments[i].is_empty();
    if !(0..segments.len()).any(credential) {
        return path.into();
    }
    let redacted: Vec<&str> =
        segments.iter().enumerate().map(|(i, s)| if credential(i) { "[redacted]" } else { *s }).collect();
    redacted.join("/").into()
}

/// Middleware: `X-Frame-Options: DENY` for browsers that predate CSP's
/// `frame-ancestors`, on every response whose policy lets no one frame it.
/// Worker pages let MTurk's HIT frame show them (their policy names MTurk);
/// a `DENY` beside that policy would contradict it, and browsers that read
/// only `X-Frame-Options` would show workers an empty frame.
async fn deny_framing(req: Request, next: middleware::Next) -> axum::response::Response {
    let mut resp = next.run(req).await;
    let framed_by_some =
        resp.headers().get(header::CONTENT_SECURITY_POLICY).and_then(|csp| csp.to_str().ok()).is_some_and(|csp| {
            csp.split(';').any(|d| d.trim().starts_with("frame-ancestors") && !d.contains("'none'"))
        });
    if !framed_by_some {
        resp.headers_mut().insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    }
    resp
}

/// Longest client-sent `X-Request-Id` kept; longer or odd ones are replaced.
const MAX_REQUEST_ID: usize = 64;

/// Middleware: drops a client's `X-Request-Id` that is too long or holds
/// anything but letters, digits, `-`, `_` and `.` (a fresh one is made).
async fn bound_request_id(mut req: Request, next: middleware::Next) -> axum::response::Response {
    let ok = req.headers().get("x-request-id").is_none_or(|v| {
        v.len() <= MAX_REQUEST_ID && v.as_bytes().iter().all(|b| b.is_ascii_alphanumeric() || b"-_.".contains(b))
    });
    if !ok {
        req.headers_mut().remove("x-request-id");
    }
    next.run(req).await
}

/// Where static files are: next to the binary's crate in development,
/// overridable for installed deployments.
fn static_dir() -> std::path::PathBuf {
    std::env::var_os("ATELIER_STATIC_DIR")
        .map(Into::into)
        .unwrap_or_else(|| std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("static"))
}
