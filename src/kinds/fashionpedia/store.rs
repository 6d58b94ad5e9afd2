//! The campaign's ontology, and masks imported as tasks: one per (mask,
//! applicable attribute super-category).

use super::coco::{self, Annotation};
use super::ontology::Ontology;
use super::FpConfig;
use crate::core::items::NewItem;
use crate::core::{campaigns, Error, Registry, Result};
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

/// Stores (or replaces) the campaign's ontology.
pub async fn save_ontology(pool: &PgPool, campaign_id: Uuid, text: &str) -> Result<Ontology> {
    let campaign = campaigns::ensure_writable(pool, campaign_id).await?;
    if campaign.kind != super::NAME {
        return Err(Error::invalid("not_fashionpedia", "this is not a Fashionpedia campaign"));
    }
    let ontology = Ontology::parse(text)?;
    sqlx::query(
        "INSERT INTO fashionpedia_ontologies (campaign_id, ontology) VALUES ($1, $2)
         ON CONFLICT (campaign_id) DO UPDATE SET ontology = excluded.ontology, created_at = now()",
    )
    .bind(campaign_id)
    .bind(serde_json::to_value(&ontology).map_err(|e| Error::Internal(e.to_string()))?)
    .execute(pool)
    .await?;
    Ok(ontology)
}

/// The campaign's ontology, if one was imported.
pub async fn ontology(pool: &PgPool, campaign_id: Uuid) -> Result<Option<Ontology>> {
    let v: Option<serde_json::Value> =
        sqlx::query_scalar("SELECT ontology FROM fashionpedia_ontologies WHERE campaign_id = $1")
            .bind(campaign_id)
            .fetch_optional(pool)
            .await?;
    v.map(|v| serde_json::from_value(v).map_err(|e| Error::Internal(e.to_string()))).transpose()
}

/// The tasks of some masks: one per applicable super-category.
pub fn tasks(config: &FpConfig, ontology: &Ontology, annotations: &[Annotation]) -> Vec<NewItem> {
    let applies = config.applies.clone().unwrap_or_else(|| ontology.default_applicability());
    let mut out = Vec::new();
    for a in annotations {
        let Some(category) = ontology.category(a.category_id) else { continue };
        for sc in applies.get(&category.name).into_iter().flatten() {
            let options = ontology.options(sc);
            if options.is_empty() {
                continue;
            }
            out.push(NewItem {
                external_id: format!("{}:{sc}", a.id),
                payload: json!({
                    "annotation_id": a.id,
                    "image_id": a.image.id,
                    "file_name": a.image.file_name,
                    "image_url": format!("{}{}", config.image_base_url, a.image.file_name),
                    "width": a.image.width,
                    "height": a.image.height,
                    "category_id": a.category_id,
                    "category": category.name,
                    "supercategory": sc,
                    "segmentation": a.segmentation,
                    "bbox": a.bbox,
                    "area": a.area,
                    "iscrowd": a.iscrowd,
                    "attribute_ids": a.attribute_ids,
                    "options": options,
                }),
                gold: None,
            });
        }
    }
    out
}

/// What an import did.
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct Imported {
    /// Masks read.
    pub masks: usize,
    /// Masks with zero area, left out.
    pub zero_area: usize,
    /// Tasks created (mask × applicable super-category).
    pub tasks: usize,
}

/// Imports a COCO file's masks as tasks (all or nothing).
pub async fn import_coco(pool: &PgPool, kinds: &Registry, campaign_id: Uuid, text: &str) -> Result<Imported> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let config = FpConfig::parse(&campaign.config)?;
    let ontology = ontology(pool, campaign_id)
        .await?
        .ok_or_else(|| Error::conflict("no_ontology", "import the ontology before the masks"))?;
    let parsed = coco::parse(text, &ontology).map_err(|m| Error::invalid("invalid_coco", m))?;
    let items = tasks(&config, &ontology, &parsed.annotations);
    crate::core::items::import(pool, kinds, campaign_id, &items).await?;
    Ok(Imported { masks: parsed.annotations.len() + parsed.zero_area, zero_area: parsed.zero_area, tasks: items.len() })
}
