//! The VSD kind's HTTP surface: rankings, pool, sample, exports and model
//! scoring (API), the VSD admin page, and images under a configured root.

mod api;
mod campaign;
mod pages;
mod task;

use crate::http::kind_routes::KindRoutes;
pub use campaign::{Vsd, VsdCampaign};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The kind's schemas in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(super::VsdAnswer, super::Label)))]
struct Schemas;

/// The VSD routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::with_openapi(<Schemas as utoipa::OpenApi>::openapi())
            .routes(routes!(api::suspects))
            .routes(routes!(api::add_to_pool))
            .routes(routes!(api::add_sample))
            .routes(routes!(api::benchmark))
            .routes(routes!(api::models)),
        imports: OpenApiRouter::new().routes(routes!(api::import_rankings)).routes(routes!(api::score_model)),
        pages: pages::router(),
    }
}
