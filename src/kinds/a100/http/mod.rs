//! The A100 kind's HTTP surface: question import, model scoring and the
//! pilot (API), and the A100 admin pages.

mod api;
mod pages;

use crate::http::kind_routes::KindRoutes;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The A100 routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::new()
            .routes(routes!(api::score_model, api::list_models))
            .routes(routes!(api::pilot_ranking))
            .routes(routes!(api::pilot_report))
            .routes(routes!(api::pilot_selection)),
        imports: OpenApiRouter::new().routes(routes!(api::import_questions)),
        pages: pages::router(),
    }
}
