//! What a task kind adds to the HTTP surface. Each kind builds one of these
//! in its own folder; the application merges them, so this layer never
//! names a kind.

use super::AppState;
use axum::Router;
use utoipa_axum::router::OpenApiRouter;

/// A kind's own routes.
#[derive(Default)]
pub struct KindRoutes {
    /// JSON API routes, documented in the same OpenAPI document as the core's.
    pub api: OpenApiRouter<AppState>,
    /// JSON API routes that take import-sized bodies (see [`super::import_limit`]).
    pub imports: OpenApiRouter<AppState>,
    /// Page routes (admin pages of the kind).
    pub pages: Router<AppState>,
}

/// A file a kind keeps beside its code (its task page's styles or script),
/// served with a short cache lifetime: `asset("text/css", include_str!(...))`.
pub fn asset(content_type: &'static str, body: &'static str) -> axum::routing::MethodRouter<AppState> {
    axum::routing::get(move || async move {
        (
            [
                (axum::http::header::CONTENT_TYPE, content_type),
                (axum::http::header::CACHE_CONTROL, "public, max-age=300"),
            ],
            body,
        )
    })
}

/// The CSS content type of [`asset`].
pub const CSS: &str = "text/css; charset=utf-8";
/// The JavaScript content type of [`asset`].
pub const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

/// The campaign, if it is one of these kinds; any other campaign is a 422
/// with `code`, saying what was expected (`what`, e.g. "an A100").
pub async fn campaign_of_kind(
    s: &AppState,
    id: uuid::Uuid,
    kinds: &[&str],
    code: crate::core::Code,
    what: &str,
) -> super::error::AppResult<crate::core::campaigns::Campaign> {
    let c = crate::core::campaigns::get(&s.pool, id).await?;
    if !kinds.contains(&c.kind.as_str()) {
        return Err(crate::core::Error::invalid(code, format!("this is not {what} campaign")).into());
    }
    Ok(c)
}
