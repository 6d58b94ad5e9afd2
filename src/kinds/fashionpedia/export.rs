//! Exports: COCO JSON in the Fashionpedia layout (`info`, `licenses`,
//! `images`, `categories`, `attributes`, `annotations` with the accepted
//! `attribute_ids`), written out annotation by annotation as the rows come
//! from the database (and, for a release, from its snapshot); and a flat CSV.
//!
//! `attribute_ids` hold the attributes of done tasks only (reviewed, when
//! the campaign reviews); each annotation's `done_supercategories` says
//! which. Asked for partial results, answers awaiting review are included
//! too and listed in `pending_attribute_ids`.

use super::result::{FpResult, MaskResult};
use crate::core::kind::contract::Table;
use crate::core::{truth::ground_truth, Registry};
use crate::error::Result;
use futures_util::StreamExt;
use serde_json::{json, Value};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// A chunk of the COCO file, or the error that ended it early.
pub type Chunk = std::result::Result<String, std::io::Error>;

/// The COCO export as chunks of text, produced on a task as the database
/// delivers the masks (memory holds the accepted attributes, not the file).
pub async fn coco_chunks(
    pool: &PgPool,
    kinds: &Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
    partial: bool,
) -> Result<tokio::sync::mpsc::Receiver<Chunk>> {
    let gt = FpResult::from_json(&ground_truth::aggregate(pool, kinds, caches, campaign_id).await?)?;
    let accepted: HashMap<u64, MaskResult> = gt.annotations.into_iter().map(|a| (a.annotation_id, a)).collect();
    let ontology = super::store::ontology(pool, campaign_id).await?;
    let (tx, rx) = tokio::sync::mpsc::channel::<Chunk>(16);
    let pool = pool.clone();
    tokio::spawn(async move {
        if let Err(e) = write(&pool, campaign_id, &accepted, partial, ontology, &tx).await {
            // The body is already under way: end it broken rather than valid-looking.
            tracing::error!(error = %e, "COCO export failed");
            let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
        }
    });
    Ok(rx)
}

async fn write(
    pool: &PgPool,
    campaign_id: Uuid,
    accepted: &HashMap<u64, MaskResult>,
    partial: bool,
    ontology: Option<super::ontology::Ontology>,
    tx: &tokio::sync::mpsc::Sender<Chunk>,
) -> Result<()> {
    let send =
        |s: String| async move { tx.send(Ok(s)).await.map_err(|_| crate::error::Error::unexpected("client left")) };
    let ontology = match ontology {
        Some(o) => o,
        None => ontology_from_items(pool, campaign_id).await?,
    };
    let (categories, attributes) =
        (serde_json::to_string(&ontology.categories), serde_json::to_string(&ontology.attributes));
    let (categories, attributes) = (
        categories.map_err(|e| crate::error::Error::internal("writing the COCO export", e))?,
        attributes.map_err(|e| crate::error::Error::internal("writing the COCO export", e))?,
    );
    send(head(&chrono::Utc::now().format("%Y-%m-%d").to_string(), &categories, &attributes)).await?;
    let mut images = sqlx::query_scalar!(
        r#"SELECT DISTINCT ON ((payload->>'image_id')::bigint)
                  jsonb_build_object('id', (payload->>'image_id')::bigint, 'width', payload->'width',
                                     'height', payload->'height', 'file_name', payload->'file_name') AS "image!: Value"
             FROM items WHERE campaign_id = $1 ORDER BY (payload->>'image_id')::bigint"#,
        campaign_id
    )
    .fetch(pool);
    let mut first = true;
    while let Some(row) = images.next().await {
        let image = row?;
        send(format!("{}{image}", if first { "" } else { "," })).await?;
        first = false;
    }
    drop(images);
    send("], \"annotations\": [".into()).await?;
    let mut masks = sqlx::query_scalar!(
        "SELECT DISTINCT ON ((payload->>'annotation_id')::bigint) payload
         FROM items WHERE campaign_id = $1 ORDER BY (payload->>'annotation_id')::bigint",
        campaign_id
    )
    .fetch(pool);
    let mut first = true;
    while let Some(row) = masks.next().await {
        let p = row?;
        let mask = p["annotation_id"].as_u64().and_then(|id| accepted.get(&id));
        send(format!("{}{}", if first { "" } else { "," }, annotation(&p, mask, partial))).await?;
        first = false;
    }
    send("]}\n".into()).await?;
    Ok(())
}

/// The file's opening, up to the images' list.
fn head(date: &str, categories: &str, attributes: &str) -> String {
    format!(
        "{{\"info\": {{\"description\": \"Fashionpedia attributes exported by Atelier\", \"date_created\": \"{date}\"}}, \
         \"licenses\": [], \"categories\": {categories}, \"attributes\": {attributes}, \"images\": ["
    )
}

/// One mask's COCO annotation: its geometry as imported, the attributes of
/// its done tasks (and, when `partial`, of those awaiting review, listed).
fn annotation(p: &Value, mask: Option<&MaskResult>, partial: bool) -> Value {
    let mut attribute_ids: Vec<u32> = mask.map(|m| m.attribute_ids.clone()).unwrap_or_default();
    let pending: Vec<u32> = mask.filter(|_| partial).map(|m| m.pending_attribute_ids.clone()).unwrap_or_default();
    attribute_ids.extend(&pending);
    attribute_ids.sort_unstable();
    let mut a = json!({
        "id": p["annotation_id"],
        "image_id": p["image_id"],
        "category_id": p["category_id"],
        "attribute_ids": attribute_ids,
        "segmentation": p["segmentation"],
        "area": p["area"],
        "bbox": p["bbox"],
        "iscrowd": p["iscrowd"].as_u64().unwrap_or(0),
        "done_supercategories": mask.map(|m| m.done.clone()).unwrap_or_default(),
    });
    if partial {
        a["pending_attribute_ids"] = json!(pending);
    }
    // DeepFashion2's own fields, as imported; its landmarks in its COCO
    // conversion's 294-point layout (what its landmark evaluation reads),
    // the item's own list kept as `landmarks`.
    for (k, v) in p["deepfashion2"].as_object().into_iter().flatten() {
        a[k] = v.clone();
    }
    if let (Some(category), Some(points)) =
        (a["category_name"].as_str().map(str::to_owned), a["keypoints"].as_array().cloned())
    {
        if let Some(full) = super::df2::keypoints_in_layout(&category, &points) {
            a["landmarks"] = Value::Array(points);
            a["keypoints"] = Value::Array(full);
        }
    }
    a
}

/// The COCO file of a release, from its snapshot's items and ground truth
/// (final results only; the categories and attributes as the tasks carry
/// them, the ontology being no part of the raw data).
pub fn coco_of_release(snapshot: &crate::core::releases::Snapshot, aggregate: &[u8]) -> Result<Vec<u8>> {
    let gt = FpResult::from_json(aggregate)?;
    let masks: HashMap<u64, &MaskResult> = gt.annotations.iter().map(|a| (a.annotation_id, a)).collect();
    let payloads: Vec<Value> = snapshot.items.iter().map(|i| i.payload.value()).collect();
    let ontology = ontology_of(payloads.iter());
    let internal = |e: serde_json::Error| crate::error::Error::internal("writing the COCO export", e);
    let categories = serde_json::to_string(&ontology.categories).map_err(internal)?;
    let attributes = serde_json::to_string(&ontology.attributes).map_err(internal)?;
    // The date of the newest answer, so the file is the same when recomputed.
    let newest = snapshot.responses.iter().map(|r| r.changed_at).max();
    let mut out = head(&newest.map(|t| t.format("%Y-%m-%d").to_string()).unwrap_or_default(), &categories, &attributes);
    let images: std::collections::BTreeMap<u64, Value> = payloads
        .iter()
        .filter_map(|p| {
            let id = p["image_id"].as_u64()?;
            Some((id, json!({"id": id, "width": p["width"], "height": p["height"], "file_name": p["file_name"]})))
        })
        .collect();
    out.push_str(&images.values().map(Value::to_string).collect::<Vec<_>>().join(","));
    out.push_str("], \"annotations\": [");
    let annotations: std::collections::BTreeMap<u64, &Value> =
        payloads.iter().filter_map(|p| Some((p["annotation_id"].as_u64()?, p))).collect();
    let rows: Vec<String> =
        annotations.iter().map(|(id, p)| annotation(p, masks.get(id).copied(), false).to_string()).collect();
    out.push_str(&rows.join(","));
    out.push_str("]}\n");
    Ok(out.into_bytes())
}

/// Categories and attributes as the tasks carry them, for a campaign whose
/// ontology was never stored (its tasks came with their choices).
async fn ontology_from_items(pool: &PgPool, campaign_id: Uuid) -> Result<super::ontology::Ontology> {
    let rows = sqlx::query_scalar!(
        r#"SELECT DISTINCT ON (payload->>'supercategory', payload->>'category_id')
                  jsonb_build_object('category_id', payload->'category_id', 'category', payload->'category',
                                     'supercategory', payload->'supercategory', 'options', payload->'options')
                      AS "entry!: Value"
             FROM items WHERE campaign_id = $1"#,
        campaign_id
    )
    .fetch_all(pool)
    .await?;
    Ok(ontology_of(rows.iter()))
}

/// Categories and attributes from tasks' payloads (each with `category_id`,
/// `category`, `supercategory` and `options`).
fn ontology_of<'a>(payloads: impl Iterator<Item = &'a Value>) -> super::ontology::Ontology {
    use super::ontology::{Entry, Ontology};
    let (mut categories, mut attributes) = (std::collections::BTreeMap::new(), std::collections::BTreeMap::new());
    let entry = |id: u64, name: &str, sc: &str| Entry {
        id: u32::try_from(id).unwrap_or(u32::MAX),
        name: name.to_owned(),
        supercategory: sc.to_owned(),
        level: 1,
        taxonomy_id: String::new(),
    };
    for r in payloads {
        if let (Some(id), Some(name)) = (r["category_id"].as_u64(), r["category"].as_str()) {
            categories.entry(id).or_insert_with(|| entry(id, name, ""));
        }
        let sc = r["supercategory"].as_str().unwrap_or_default();
        for o in r["options"].as_array().into_iter().flatten() {
            if let (Some(id), Some(name)) = (o["id"].as_u64(), o["name"].as_str()) {
                attributes.entry(id).or_insert_with(|| entry(id, name, o["group"].as_str().unwrap_or(sc)));
            }
        }
    }
    Ontology { categories: categories.into_values().collect(), attributes: attributes.into_values().collect() }
}

/// The flat CSV: one row per mask and super-category.
pub fn flat_table(aggregate: &[u8]) -> Table {
    let Ok(gt) = FpResult::from_json(aggregate) else { return Table::default() };
    let header = [
        "annotation_id",
        "image",
        "category",
        "supercategory",
        "attributes",
        "not_sure",
        "not_on_list",
        "missing",
        "status",
        "annotator",
        "reviewer",
    ];
    let name = |id: &u32| gt.attribute_names.get(id).cloned().unwrap_or_else(|| id.to_string());
    let mut rows = Vec::new();
    for m in &gt.annotations {
        for (sc, t) in &m.tasks {
            let a = t.answer.clone().unwrap_or_default();
            rows.push(vec![
                m.annotation_id.to_string(),
                m.file_name.clone(),
                m.category.clone(),
                sc.clone(),
                a.attributes.iter().map(name).collect::<Vec<_>>().join("; "),
                a.not_sure.to_string(),
                a.not_on_list.to_string(),
                a.missing.clone(),
                t.status.clone(),
                t.annotators.join(" "),
                t.reviewer.clone().unwrap_or_default(),
            ]);
        }
    }
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}
