//! The Fashionpedia kind's HTTP surface: ontology and COCO import, the COCO
//! export and statistics (API), the admin page, and the task page's script.

mod api;
mod campaign;
mod pages;
mod spool;
mod task;

use crate::http::kind_routes::KindRoutes;
pub use campaign::{Fashionpedia, FashionpediaCampaign};
pub(crate) use spool::spool;
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The kind's schemas in the OpenAPI document.
#[derive(utoipa::OpenApi)]
#[openapi(components(schemas(super::Answer)))]
struct Schemas;

/// The Fashionpedia routes, merged into the application by the kind registry.
pub fn routes() -> KindRoutes {
    KindRoutes {
        api: OpenApiRouter::with_openapi(<Schemas as utoipa::OpenApi>::openapi())
            .routes(routes!(api::export_coco))
            .routes(routes!(api::stats)),
        imports: OpenApiRouter::new()
            .routes(routes!(api::import_ontology))
            .routes(routes!(api::import_coco))
            .routes(routes!(api::import_df2)),
        pages: pages::router(),
    }
}
