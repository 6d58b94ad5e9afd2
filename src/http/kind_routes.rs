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

/// The campaign, if it is one of these kinds; any other campaign is a 422
/// with `code`, saying what was expected (`what`, e.g. "an A100").
pub async fn campaign_of_kind(
    s: &AppState,
    id: uuid::Uuid,
    kinds: &[&str],
    code: &'static str,
    what: &str,
) -> super::error::AppResult<crate::core::campaigns::Campaign> {
    let c = crate::core::campaigns::get(&s.pool, id).await?;
    if !kinds.contains(&c.kind.as_str()) {
        return Err(crate::core::Error::invalid(code, format!("this is not {what} campaign")).into());
    }
    Ok(c)
}
