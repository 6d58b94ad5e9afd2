//! The Fashionpedia kind's HTTP surface: ontology and COCO import, the COCO
//! export and statistics (API), the admin page, and the task page's script.

mod api;
mod pages;

use crate::http::kind_routes::KindRoutes;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The Fashionpedia routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::new().routes(routes!(api::export_coco)).routes(routes!(api::stats)),
        imports: OpenApiRouter::new().routes(routes!(api::import_ontology)).routes(routes!(api::import_coco)),
        pages: pages::router(),
    }
}
