//! The JSON API under `/api/v1`, documented by the OpenAPI document it
//! generates (every route is registered through `routes!`, so none is
//! missing from it).

mod access;
pub mod admin;
pub mod annotate;
mod error_responses;
mod files;
mod meta;
mod payouts;
mod releases;

use super::AppState;
use axum::routing::get;
use axum::Router;
use utoipa::openapi::security::{ApiKey, ApiKeyValue, HttpAuthScheme, HttpBuilder, SecurityScheme};
use utoipa::{Modify, OpenApi};
use utoipa_axum::router::OpenApiRouter;
use utoipa_axum::routes;

pub use files::{attachment, body_text, chunks_attachment, csv_response, export_file_name, streamed_attachment};

#[derive(OpenApi)]
#[openapi(
    info(title = "Atelier API", description = "Expert annotation for fashion-AI benchmarks. Authenticate with `Authorization: Bearer <token>` (create one with `atelier token create`) or the browser session (then send `X-CSRF-Token` on writes)."),
    modifiers(&SecurityAddon),
    security(("bearer" = []), ("session" = []))
)]
struct ApiDoc;

struct SecurityAddon;

impl Modify for SecurityAddon {
    fn modify(&self, openapi: &mut utoipa::openapi::OpenApi) {
        let components = openapi.components.get_or_insert_with(Default::default);
        components.add_security_scheme(
            "bearer",
            SecurityScheme::Http(HttpBuilder::new().scheme(HttpAuthScheme::Bearer).build()),
        );
        components.add_security_scheme(
            "session",
            SecurityScheme::ApiKey(ApiKey::Cookie(ApiKeyValue::new("atelier_session"))),
        );
    }
}

/// Every documented route.
pub fn router() -> OpenApiRouter<AppState> {
    OpenApiRouter::with_openapi(ApiDoc::openapi())
        .routes(routes!(meta::healthz))
        .routes(routes!(meta::readyz))
        .routes(routes!(meta::metrics))
        .routes(routes!(meta::me))
        .routes(routes!(access::script_login))
        .routes(routes!(admin::list_campaigns, admin::create_campaign))
        .routes(routes!(admin::get_campaign, admin::delete_campaign))
        .routes(routes!(admin::archive_campaign))
        .routes(routes!(admin::unarchive_campaign))
        .routes(routes!(admin::set_state))
        .merge(imports())
        .routes(routes!(admin::form_batches))
        .routes(routes!(admin::create_invitation, access::list_invitations))
        .routes(routes!(access::revoke_invitation))
        .routes(routes!(access::list_ended_workers))
        .routes(routes!(access::readmit_worker))
        .routes(routes!(access::revoke_token))
        .routes(routes!(admin::list_responses))
        .routes(routes!(admin::responses_csv))
        .routes(routes!(admin::ground_truth))
        .routes(routes!(admin::ground_truth_csv))
        .routes(routes!(admin::exclude_response))
        .routes(routes!(admin::create_user))
        .routes(routes!(admin::create_token, access::list_tokens))
        .routes(routes!(admin::set_completion))
        .routes(routes!(admin::get_intro, admin::set_intro))
        .routes(routes!(admin::upload_image))
        .routes(routes!(releases::create_release, releases::list_releases))
        .routes(routes!(releases::get_release))
        .routes(routes!(releases::download_release))
        .routes(routes!(releases::diff_releases))
        .routes(routes!(releases::set_config, releases::patch_config))
        .routes(routes!(releases::config_history))
        .routes(routes!(releases::set_settings))
        .routes(routes!(payouts::list_payouts))
        .routes(routes!(payouts::export_payouts))
        .routes(routes!(payouts::mark_paid))
        .routes(routes!(payouts::decide))
        .routes(routes!(payouts::background_csv))
        .routes(routes!(payouts::upload_platform_list, payouts::platform_list_summary))
        .routes(routes!(payouts::overlap_progress))
        .merge(annotation())
}

/// The annotators' routes, which take bodies up to
/// [`crate::http::MAX_ANNOTATOR_BODY`] rather than the general limit.
fn annotation() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(annotate::work_next))
        .routes(routes!(annotate::work_view))
        .routes(routes!(annotate::work_respond))
        .routes(routes!(annotate::work_complete))
        .routes(routes!(annotate::expert_campaigns))
        .routes(routes!(annotate::expert_next))
        .routes(routes!(annotate::expert_view))
        .routes(routes!(annotate::expert_respond))
        .routes(routes!(annotate::expert_complete))
        .layer(axum::extract::DefaultBodyLimit::max(crate::http::MAX_ANNOTATOR_BODY))
}

/// The import routes, which take bodies up to [`crate::http::import_limit`]
/// rather than the general limit.
fn imports() -> OpenApiRouter<AppState> {
    OpenApiRouter::new()
        .routes(routes!(admin::list_items, admin::import_items))
        .layer(axum::extract::DefaultBodyLimit::max(crate::http::import_limit()))
}

/// Routes outside the session layer: the OpenAPI document `doc` (the
/// core's routes and every kind's), which lists itself too.
pub fn meta_router(mut doc: utoipa::openapi::OpenApi) -> Router<AppState> {
    let spec_path = utoipa::openapi::path::PathItem::new(
        utoipa::openapi::HttpMethod::Get,
        utoipa::openapi::path::OperationBuilder::new()
            .summary(Some("This OpenAPI document"))
            .response("200", utoipa::openapi::Response::new("OpenAPI 3 JSON"))
            // Anyone may read it.
            .security(utoipa::openapi::security::SecurityRequirement::default()),
    );
    doc.paths.paths.insert("/api/v1/openapi.json".into(), spec_path);
    error_responses::document(&mut doc);
    // Serialised once: the document never changes while the process runs.
    let body: std::sync::Arc<str> = serde_json::to_string(&doc).unwrap_or_else(|_| "{}".to_owned()).into();
    Router::new().route(
        "/api/v1/openapi.json",
        get(move || {
            let body = body.clone();
            async move { ([(axum::http::header::CONTENT_TYPE, "application/json")], body.to_string()) }
        }),
    )
}
