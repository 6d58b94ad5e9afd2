//! Fashionpedia admin API: the ontology, masks from COCO files, the COCO
//! export (streamed) and the statistics.

use super::FashionpediaCampaign;
use crate::core::truth::ground_truth;
use crate::http::api::body_text;
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::Admin;
use crate::http::kind_routes::KindCampaign;
use crate::http::AppState;
use crate::kinds::fashionpedia::export;
use crate::kinds::fashionpedia::result::{FpResult, Stats};
use crate::kinds::fashionpedia::store::{self, Imported};
use axum::body::Bytes;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::{json, Value};

/// Import (or replace) the ontology: `{"categories": [...], "attributes": [...]}`
/// as released (`category_attributes_descriptions.json`).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/fashionpedia/ontology", tag = "fashionpedia", params(("id" = Uuid, Path)),
    request_body = Object, responses((status = 201, body = Object), (status = 422, body = ErrorBody)))]
pub async fn import_ontology(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: FashionpediaCampaign,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Value>)> {
    let o = store::save_ontology(&s.pool, &s.kinds, id, body_text(&body)?).await?;
    Ok((
        StatusCode::CREATED,
        axum::Json(json!({"categories": o.categories.len(), "attributes": o.attributes.len(),
        "supercategories": o.supercategories()})),
    ))
}

/// Import images and masks from COCO JSON in the Fashionpedia layout: one
/// task per (mask, applicable super-category). All or nothing; every error
/// names its annotation; zero-area masks are left out and counted.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/fashionpedia/coco", tag = "fashionpedia", params(("id" = Uuid, Path)),
    request_body = Object, responses((status = 201, body = Imported), (status = 422, body = ErrorBody)))]
pub async fn import_coco(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: FashionpediaCampaign,
    body: axum::body::Body,
) -> AppResult<(StatusCode, axum::Json<Imported>)> {
    // Spooled to disk as it arrives, then read in two streaming passes: a
    // release-sized file never sits in memory.
    let spool = super::spool(body).await?;
    let imported = store::import_coco_file(&s.pool, &s.kinds, id, spool.path().to_owned()).await;
    Ok((StatusCode::CREATED, axum::Json(imported?)))
}

/// Import images and masks from DeepFashion2's per-image annotation files,
/// bundled by image file name with `width` and `height` added:
/// `{"000001.jpg": {"width": 500, "height": 700, "item1": {...}}}`; categories
/// map to the ontology by the campaign's `df2_categories` over the obvious matches.
/// `split` (`train`, `validation`, `test`) keeps splits apart: each numbers
/// its images from 1, so their images become `<split>/<file>` with ids offset
/// by 1,000,000 per split.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/fashionpedia/deepfashion2", tag = "fashionpedia",
    params(("id" = Uuid, Path), Df2Split),
    request_body = Object, responses((status = 201, body = Imported), (status = 422, body = ErrorBody)))]
pub async fn import_df2(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: FashionpediaCampaign,
    crate::http::extract::Query(q): crate::http::extract::Query<Df2Split>,
    body: Bytes,
) -> AppResult<(StatusCode, axum::Json<Imported>)> {
    let imported = store::import_df2(&s.pool, &s.kinds, id, body_text(&body)?, q.split.as_deref()).await?;
    Ok((StatusCode::CREATED, axum::Json(imported)))
}

/// Which DeepFashion2 split a bundle is from.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
pub struct Df2Split {
    /// `train`, `validation` or `test` (none: file names and ids as they are).
    #[serde(default)]
    pub split: Option<String>,
}

/// The annotations as COCO JSON in the Fashionpedia layout, with the
/// attributes of done tasks (reviewed, when the campaign reviews) in
/// `attribute_ids` and `done_supercategories` per mask; `partial=true` adds
/// answers awaiting review, listed in `pending_attribute_ids`.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/fashionpedia/coco.json", tag = "fashionpedia",
    params(("id" = Uuid, Path), crate::http::api::admin::PartialQuery),
    responses((status = 200, body = Object)))]
pub async fn export_coco(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, campaign, .. }: FashionpediaCampaign,
    crate::http::extract::Query(query): crate::http::extract::Query<crate::http::api::admin::PartialQuery>,
) -> AppResult<axum::response::Response> {
    let chunks = export::coco_chunks(&s.pool, &s.kinds, &s.caches, id, query.partial).await?;
    let name = crate::http::api::export_file_name(&campaign, "coco", "json");
    Ok(crate::http::api::streamed_attachment("application/json", &name, chunks))
}

/// The statistics: Table 5's "not sure" / "not on the list" shares per
/// super-category, attributes per mask, attribute counts per category,
/// review acceptance per annotator, missing-attribute suggestions, alpha.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/fashionpedia/stats", tag = "fashionpedia", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object)))]
pub async fn stats(
    _: Admin,
    State(s): State<AppState>,
    KindCampaign { id, .. }: FashionpediaCampaign,
) -> AppResult<axum::Json<Stats>> {
    Ok(axum::Json(FpResult::from_json(&ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?)?.stats))
}
