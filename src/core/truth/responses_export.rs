//! The live `responses.csv`, written out as the rows come from the database:
//! memory holds one chunk, not the campaign. Same columns, order and cell
//! rules as a release's `responses.csv`.

use crate::core::support::csv_chunks::neutralise_formula;
use crate::core::support::export_time::time;
use crate::core::truth::ground_truth::responses_header;
use crate::db::Time;
use crate::error::{Error, Result};
use futures_util::StreamExt;
use serde_json::Value;
use sqlx::PgPool;
use tokio::sync::mpsc;
use uuid::Uuid;

/// Bytes gathered before a chunk is handed on.
const CHUNK: usize = 64 * 1024;

/// A chunk of the file, or the error that ended it early.
pub type Chunk = std::result::Result<Vec<u8>, std::io::Error>;

/// One response as the export writes it.
struct Row {
    batch_id: Uuid,
    position: i32,
    external_id: String,
    annotator_id: Uuid,
    worker_id: String,
    answer: Value,
    time_on_task_ms: Option<i32>,
    created_at: Time,
    updated_at: Time,
    excluded_reason: Option<String>,
}

/// The campaign's responses as CSV chunks, produced on a task as the database
/// delivers them; a failure midway ends the stream with an error (the
/// download breaks visibly instead of looking complete).
pub async fn csv_chunks(pool: &PgPool, campaign_id: Uuid) -> Result<mpsc::Receiver<Chunk>> {
    // The worker column is there when anyone took part, as in the table.
    let with_workers: bool = sqlx::query_scalar!(
        r#"SELECT EXISTS (SELECT 1 FROM assignments WHERE campaign_id = $1) AS "exists!""#,
        campaign_id
    )
    .fetch_one(pool)
    .await?;
    let (tx, rx) = mpsc::channel::<Chunk>(8);
    let pool = pool.clone();
    tokio::spawn(async move {
        if let Err(e) = write(&pool, campaign_id, with_workers, &tx).await {
            tracing::error!(error = %e, "responses export failed");
            let _ = tx.send(Err(std::io::Error::other(e.to_string()))).await;
        }
    });
    Ok(rx)
}

async fn write(pool: &PgPool, campaign_id: Uuid, with_workers: bool, tx: &mpsc::Sender<Chunk>) -> Result<()> {
    let mut out = csv::Writer::from_writer(Vec::with_capacity(CHUNK * 2));
    let csv_error = |e: csv::Error| Error::internal("writing the responses CSV", e);
    out.write_record(responses_header(with_workers)).map_err(csv_error)?;
    // Ordered as the in-memory table sorts: bytewise, hence "C".
    let mut rows = sqlx::query_as!(
        Row,
        r#"SELECT a.batch_id, b.position, i.external_id, r.annotator_id,
                  coalesce(u.external_id, u.name, u.id::text) AS "worker_id!",
                  r.answer, r.time_on_task_ms, r.created_at AS "created_at: Time",
                  r.updated_at AS "updated_at: Time", r.excluded_reason
           FROM responses r JOIN assignments a ON a.id = r.assignment_id JOIN batches b ON b.id = a.batch_id
           JOIN items i ON i.id = r.item_id JOIN users u ON u.id = r.annotator_id
           WHERE r.campaign_id = $1
           ORDER BY b.position, r.annotator_id::text COLLATE "C", i.external_id COLLATE "C""#,
        campaign_id,
    )
    .fetch(pool);
    while let Some(row) = rows.next().await {
        let r = row?;
        let mut cells = vec![r.batch_id.to_string(), r.position.to_string(), r.external_id, r.annotator_id.to_string()];
        if with_workers {
            cells.push(r.worker_id);
        }
        cells.extend([
            r.answer.to_string(),
            r.time_on_task_ms.map(|t| t.to_string()).unwrap_or_default(),
            time(r.created_at),
            time(r.updated_at),
            r.excluded_reason.unwrap_or_default(),
        ]);
        out.write_record(cells.iter().map(|c| neutralise_formula(c).into_owned())).map_err(csv_error)?;
        if out.get_ref().len() >= CHUNK {
            let full = std::mem::replace(&mut out, csv::Writer::from_writer(Vec::with_capacity(CHUNK * 2)));
            send(tx, into_bytes(full)?).await?;
        }
    }
    send(tx, into_bytes(out)?).await
}

fn into_bytes(writer: csv::Writer<Vec<u8>>) -> Result<Vec<u8>> {
    writer.into_inner().map_err(|e| Error::internal("writing the responses CSV", e))
}

async fn send(tx: &mpsc::Sender<Chunk>, chunk: Vec<u8>) -> Result<()> {
    tx.send(Ok(chunk)).await.map_err(|_| Error::unexpected("the client left"))
}
