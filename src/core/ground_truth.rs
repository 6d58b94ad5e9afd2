//! Ground truth and exports: the kind aggregates, the core gathers the data
//! and writes the generic raw-response table.

use super::kind::{AggregationInput, ItemRecord, ResponseRecord, Table};
use super::{campaigns, kinds_of, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// Loads what the kind needs to aggregate a campaign. Responses excluded by
/// an earlier curation run (reason `curation:...`) are included: curation
/// recomputes those exclusions itself, so re-running it gives the same result.
pub async fn input(pool: &PgPool, campaign_id: Uuid) -> Result<AggregationInput> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let items = super::items::list(pool, campaign_id)
        .await?
        .into_iter()
        .map(|i| ItemRecord { id: i.id, external_id: i.external_id, payload: i.payload, gold: i.gold })
        .collect();
    let responses = sqlx::query_as::<_, ResponseRecord>(
        "SELECT a.batch_id, r.item_id, r.annotator_id, r.answer, a.state = 'completed' AS submitted,
                bi.position + 1 AS position
         FROM responses r
         JOIN assignments a ON a.id = r.assignment_id
         LEFT JOIN batch_items bi ON bi.batch_id = a.batch_id AND bi.item_id = r.item_id
         WHERE r.campaign_id = $1 AND (r.excluded_reason IS NULL OR r.excluded_reason LIKE 'curation:%')
         ORDER BY r.created_at, r.id",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?;
    Ok(AggregationInput { config: campaign.kind_config(), items, responses })
}

/// The campaign's ground truth as its kind computes it. Runs the
/// aggregation off the async workers: it can be heavy on big campaigns.
pub async fn aggregate(pool: &PgPool, campaign_id: Uuid) -> Result<Value> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds_of(&campaign)?;
    let input = input(pool, campaign_id).await?;
    tokio::task::spawn_blocking(move || kind.aggregate(&input)).await.map_err(|e| super::Error::Internal(e.to_string()))
}

/// The ground truth as a table.
pub async fn table(pool: &PgPool, campaign_id: Uuid) -> Result<Table> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds_of(&campaign)?;
    let aggregate = aggregate(pool, campaign_id).await?;
    Ok(kind.export_table(&aggregate))
}

/// Every response of the campaign, excluded ones with their reason, one row
/// per annotator and item. Annotators appear under their pseudonymous id.
pub async fn raw_responses(pool: &PgPool, campaign_id: Uuid) -> Result<Table> {
    #[derive(sqlx::FromRow)]
    struct Row {
        batch_position: i32,
        item: String,
        annotator_id: Uuid,
        answer: Value,
        time_on_task_ms: Option<i32>,
        created_at: chrono::DateTime<chrono::Utc>,
        updated_at: chrono::DateTime<chrono::Utc>,
        excluded_reason: Option<String>,
    }
    let rows = sqlx::query_as::<_, Row>(
        "SELECT b.position AS batch_position, i.external_id AS item, r.annotator_id, r.answer, r.time_on_task_ms,
                r.created_at, r.updated_at, r.excluded_reason
         FROM responses r JOIN items i ON i.id = r.item_id
         JOIN assignments a ON a.id = r.assignment_id JOIN batches b ON b.id = a.batch_id
         WHERE r.campaign_id = $1 ORDER BY b.position, r.annotator_id, i.external_id",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?;
    let header =
        ["batch", "item", "annotator", "answer", "time_on_task_ms", "answered_at", "changed_at", "excluded_reason"];
    Ok(Table {
        header: header.iter().map(|h| (*h).to_owned()).collect(),
        rows: rows
            .into_iter()
            .map(|r| {
                vec![
                    r.batch_position.to_string(),
                    r.item,
                    r.annotator_id.to_string(),
                    r.answer.to_string(),
                    r.time_on_task_ms.map(|t| t.to_string()).unwrap_or_default(),
                    r.created_at.to_rfc3339(),
                    r.updated_at.to_rfc3339(),
                    r.excluded_reason.unwrap_or_default(),
                ]
            })
            .collect(),
    })
}

/// Writes a table as CSV.
pub fn to_csv(table: &Table) -> Result<String> {
    let mut w = csv::Writer::from_writer(Vec::new());
    let internal = |e: csv::Error| super::Error::Internal(e.to_string());
    w.write_record(&table.header).map_err(internal)?;
    for row in &table.rows {
        w.write_record(row).map_err(internal)?;
    }
    let bytes = w.into_inner().map_err(|e| super::Error::Internal(e.to_string()))?;
    String::from_utf8(bytes).map_err(|e| super::Error::Internal(e.to_string()))
}
