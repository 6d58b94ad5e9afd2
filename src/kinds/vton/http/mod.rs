//! The VTON kind's HTTP surface: triplet and VTON-QBench import, curation,
//! re-queueing, predictor scoring and exports (API), and the VTON admin page.

mod api;
mod pages;

use crate::http::kind_routes::KindRoutes;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The VTON routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::new()
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
