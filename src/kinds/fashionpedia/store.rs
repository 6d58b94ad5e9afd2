//! The campaign's ontology, and masks imported as tasks: one per (mask,
//! applicable attribute super-category).

use super::coco::{self, Annotation};
use super::item::{FpItem, FpTask};
use super::ontology::Ontology;
use super::FpConfig;
use crate::core::item::new_item::NewItem;
use crate::core::kind::registry::unreadable_config;
use crate::core::{campaign::campaigns, Registry};
use crate::error::Code;
use crate::error::{Error, Result};
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// Stores (or replaces) the campaign's ontology, and its attribute names in
/// the campaign's configuration (the ground truth names attributes without
/// reading every task's choices).
pub async fn save_ontology(pool: &PgPool, kinds: &Registry, campaign_id: Uuid, text: &str) -> Result<Ontology> {
    let campaign = campaigns::ensure_writable(pool, campaign_id).await?;
    if campaign.kind != super::NAME {
        return Err(Error::invalid(Code::WrongKind, "this is not a Fashionpedia campaign"));
    }
    let ontology = Ontology::parse(text)?;
    sqlx::query!(
        "INSERT INTO fashionpedia_ontologies (campaign_id, ontology) VALUES ($1, $2)
         ON CONFLICT (campaign_id) DO UPDATE SET ontology = excluded.ontology, created_at = now()",
        campaign_id,
        serde_json::to_value(&ontology).map_err(|e| Error::internal("the stored ontology", e))?,
    )
    .execute(pool)
    .await?;
    let mut config = campaign.config.clone();
    config["attribute_names"] = json!(ontology
        .attributes
        .iter()
        .map(|a| (a.id.to_string(), a.name.clone()))
        .collect::<std::collections::BTreeMap<_, _>>());
    campaigns::set_kind_config(pool, kinds, campaign_id, &config).await?;
    Ok(ontology)
}

/// The campaign's ontology, if one was imported.
pub async fn ontology(pool: &PgPool, campaign_id: Uuid) -> Result<Option<Ontology>> {
    let v: Option<serde_json::Value> =
        sqlx::query_scalar!("SELECT ontology FROM fashionpedia_ontologies WHERE campaign_id = $1", campaign_id)
            .fetch_optional(pool)
            .await?;
    v.map(|v| serde_json::from_value(v).map_err(|e| Error::internal("the stored ontology", e))).transpose()
}

/// The campaign's configuration and ontology, which masks need before
/// they can become tasks (409 until the ontology is imported).
async fn ready_for_masks(pool: &PgPool, campaign_id: Uuid) -> Result<(FpConfig, Ontology)> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let config = FpConfig::parse(&campaign.config).map_err(|e| unreadable_config(&campaign.name, e))?;
    let ontology = ontology(pool, campaign_id)
        .await?
        .ok_or_else(|| Error::conflict(Code::NoOntology, "import the ontology before the masks"))?;
    Ok((config, ontology))
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
            let suggested = super::df2::sleeve_suggestion(&a.deepfashion2, &options);
            let item = FpItem {
                task: FpTask {
                    annotation_id: a.id,
                    image_id: a.image.id,
                    file_name: a.image.file_name.clone(),
                    image_url: format!("{}{}", config.image_base_url, a.image.file_name),
                    width: a.image.width,
                    height: a.image.height,
                    category_id: a.category_id,
                    category: category.name.clone(),
                    supercategory: sc.clone(),
                    segmentation: a.segmentation.clone(),
                    bbox: a.bbox,
                    area: a.area,
                    iscrowd: a.iscrowd,
                    option_ids: options.iter().map(|o| o.id).collect(),
                    options,
                    deepfashion2: a.deepfashion2.clone(),
                    suggested,
                },
                attribute_ids: a.attribute_ids.clone(),
            };
            // Made of serde's own types: only a bug fails here, and the
            // import then refuses the null payload.
            let payload = serde_json::to_value(&item).unwrap_or(Value::Null);
            out.push(NewItem { external_id: format!("{}:{sc}", a.id), payload, gold: None });
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
    let (config, ontology) = ready_for_masks(pool, campaign_id).await?;
    let parsed = coco::parse(text, &ontology).map_err(|m| Error::invalid(Code::InvalidCoco, m))?;
    let items = tasks(&config, &ontology, &parsed.annotations);
    let mut importer = crate::core::item::items::Importer::begin(pool, kinds, campaign_id).await?;
    importer.add(&items).await?;
    refuse_image_clashes(importer.transaction(), campaign_id).await?;
    importer.commit().await?;
    Ok(Imported { masks: parsed.annotations.len() + parsed.zero_area, zero_area: parsed.zero_area, tasks: items.len() })
}

/// Refuses an import that gives an image id already used for another file
/// or size (DeepFashion2 numbers images by their file names' digits, so its
/// `000002.jpg` is image 2, which a COCO file may already use): the masks
/// would be drawn on the wrong canvas. Names both files. Run inside the
/// import's transaction, before it commits.
async fn refuse_image_clashes(tx: &mut sqlx::Transaction<'static, sqlx::Postgres>, campaign_id: Uuid) -> Result<()> {
    let clash = sqlx::query!(
        r#"SELECT payload->>'image_id' AS "id!",
                  array_agg(DISTINCT concat(payload->>'file_name', ' (', payload->>'width', 'x', payload->>'height', ')'))
                      AS "files!"
             FROM items WHERE campaign_id = $1
            GROUP BY payload->>'image_id'
           HAVING count(DISTINCT (payload->>'file_name', payload->>'width', payload->>'height')) > 1
            ORDER BY 1 LIMIT 1"#,
        campaign_id
    )
    .fetch_optional(&mut **tx)
    .await?
    .map(|r| (r.id, r.files));
    match clash {
        Some((id, files)) => Err(Error::invalid(
            Code::ImageIdClash,
            format!(
                "image id {id} would stand for {}: give the images distinct ids (nothing was imported)",
                files.join(" and ")
            ),
        )),
        None => Ok(()),
    }
}

/// Imports a bundle of DeepFashion2 files (see [`super::df2`]) as tasks.
pub async fn import_df2(
    pool: &PgPool,
    kinds: &Registry,
    campaign_id: Uuid,
    text: &str,
    split: Option<&str>,
) -> Result<Imported> {
    let (config, ontology) = ready_for_masks(pool, campaign_id).await?;
    let coco = super::df2::to_coco_split(text, &super::df2::mapping(&config.df2_categories), &ontology, split)
        .map_err(|m| Error::invalid(Code::InvalidDeepfashion2, m))?;
    import_coco(pool, kinds, campaign_id, &coco.to_string()).await
}

/// Imports a COCO file from disk as tasks, streaming: the file is parsed on
/// a blocking thread and its tasks inserted in chunks in one transaction, so
/// memory stays flat however many masks it holds. All or nothing.
pub async fn import_coco_file(
    pool: &PgPool,
    kinds: &Registry,
    campaign_id: Uuid,
    path: std::path::PathBuf,
) -> Result<Imported> {
    let (config, ontology) = ready_for_masks(pool, campaign_id).await?;
    let mut importer = crate::core::item::items::Importer::begin(pool, kinds, campaign_id).await?;
    let (tx, mut rx) = tokio::sync::mpsc::channel::<Vec<NewItem>>(2);
    let reader = tokio::task::spawn_blocking(move || {
        let mut chunk: Vec<Annotation> = Vec::with_capacity(CHUNK);
        let mut made = 0usize;
        let result = coco::stream_file(&path, &ontology, |a| {
            chunk.push(a);
            if chunk.len() == CHUNK {
                let items = tasks(&config, &ontology, &std::mem::take(&mut chunk));
                made += items.len();
                tx.blocking_send(items).map_err(|_| "the import stopped".to_owned())?;
            }
            Ok(())
        });
        let items = tasks(&config, &ontology, &chunk);
        made += items.len();
        if !items.is_empty() {
            let _ = tx.blocking_send(items);
        }
        result.map(|(read, zero)| (read, zero, made))
    });
    while let Some(items) = rx.recv().await {
        importer.add(&items).await?;
    }
    let (masks, zero_area, tasks) = reader
        .await
        .map_err(|e| Error::internal("reading the COCO upload", e))?
        .map_err(|m| Error::invalid(Code::InvalidCoco, m))?;
    refuse_image_clashes(importer.transaction(), campaign_id).await?;
    importer.commit().await?;
    Ok(Imported { masks, zero_area, tasks })
}

/// Masks per chunk of a streamed import.
const CHUNK: usize = 2_000;
