//! The Fashionpedia kind's HTTP surface: ontology and COCO import, the COCO
//! export and statistics (API), the admin page, and the task page's script.

mod api;
mod pages;
mod task;

use crate::core::Code;
use crate::http::kind_routes::{CampaignKind, KindCampaign, KindRoutes};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

/// The routes of Fashionpedia campaigns (see [`KindCampaign`]).
pub struct Fashionpedia;

impl CampaignKind for Fashionpedia {
    const KINDS: &'static [&'static str] = &[super::NAME];
    const WHAT: &'static str = "a Fashionpedia";
}

/// The Fashionpedia campaign the path names.
pub type FashionpediaCampaign = KindCampaign<Fashionpedia>;

/// A request body written to a temporary file as it arrives (removed when dropped).
pub(crate) async fn spool(body: axum::body::Body) -> crate::http::error::AppResult<tempfile_path::Spool> {
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    let spool = tempfile_path::Spool::new()?;
    let mut file = tokio::fs::File::create(spool.path())
        .await
        .map_err(|e| crate::core::Error::internal("spooling the upload", e))?;
    let mut stream = body.into_data_stream();
    while let Some(chunk) = stream.next().await {
        let chunk = chunk.map_err(|e| {
            if e.to_string().contains("length limit") {
                crate::http::error::AppError::TooLarge
            } else {
                crate::http::error::AppError::BadRequest { code: Code::UnreadableBody, message: e.to_string() }
            }
        })?;
        file.write_all(&chunk).await.map_err(|e| crate::core::Error::internal("spooling the upload", e))?;
    }
    file.flush().await.map_err(|e| crate::core::Error::internal("spooling the upload", e))?;
    Ok(spool)
}

/// A temporary file path removed on drop.
pub(crate) mod tempfile_path {
    /// The spool file.
    pub struct Spool(std::path::PathBuf);

    impl Spool {
        /// A fresh path in the system's temporary directory.
        pub fn new() -> Result<Self, crate::core::Error> {
            Ok(Self(std::env::temp_dir().join(format!("atelier-upload-{}.json", uuid::Uuid::new_v4()))))
        }

        /// Its path.
        pub fn path(&self) -> &std::path::Path {
            &self.0
        }
    }

    impl Drop for Spool {
        fn drop(&mut self) {
            let _ = std::fs::remove_file(&self.0);
        }
    }
}

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
