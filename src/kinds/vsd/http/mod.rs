//! The VSD kind's HTTP surface: rankings, pool, sample, exports and model
//! scoring (API), the VSD admin page, and images under a configured root.

mod api;
mod pages;

use crate::http::kind_routes::KindRoutes;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The VSD routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::new()
            .routes(routes!(api::suspects))
            .routes(routes!(api::add_to_pool))
            .routes(routes!(api::add_sample))
            .routes(routes!(api::benchmark))
            .routes(routes!(api::models)),
        imports: OpenApiRouter::new().routes(routes!(api::import_rankings)).routes(routes!(api::score_model)),
        pages: pages::router(),
    }
}
