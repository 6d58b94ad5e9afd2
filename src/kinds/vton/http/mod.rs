//! The VTON kind's HTTP surface: triplet and VTON-QBench import, curation,
//! re-queueing, predictor scoring and exports (API), and the VTON admin page.

mod api;
mod campaign;
mod pages;
mod task;

use crate::http::kind_routes::KindRoutes;
pub use campaign::{Vton, VtonCampaign};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The kind's schemas in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(super::VtonAnswer)))]
struct Schemas;

/// The VTON routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::with_openapi(<Schemas as utoipa::OpenApi>::openapi())
            .routes(routes!(api::run_curation))
            .routes(routes!(api::requeue))
            .routes(routes!(api::predictor))
            .routes(routes!(api::questionnaires_csv))
            .routes(routes!(api::qbench_answers))
            .routes(routes!(api::qbench_images)),
        imports: OpenApiRouter::new().routes(routes!(api::import_triplets)).routes(routes!(api::qbench_import)),
        pages: pages::router(),
    }
}
