//! A snapshot's responses as the rows of `responses.csv`: a release's file
//! and Parquet table, and the reference the live streamed export
//! ([`crate::core::truth::responses_export`]) is checked against.

use crate::core::kind::contract::Table;
use crate::core::releases::Snapshot;
use crate::core::truth::ground_truth::responses_header;
use crate::error::Result;
use sqlx::PgPool;
use uuid::Uuid;

/// Every response of the campaign, excluded ones with their reason, one row
/// per annotator and item, built in memory from a snapshot: the reference the
/// streamed export ([`crate::core::truth::responses_export`]) is checked against.
pub async fn raw_responses(pool: &PgPool, campaign_id: Uuid) -> Result<Table> {
    let snapshot = Snapshot::load(pool, campaign_id, false).await?;
    Ok(responses_table(&snapshot))
}

/// The responses of a snapshot as a table (the live export and a release's
/// `responses.csv`), by questionnaire position, annotator and item. Every
/// export names things the same way: `questionnaire` is the batch id (as in
/// the questionnaire tables and the worker API), `item` the importer's id,
/// `annotator` the annotator's id; live exports for admins add the crowd
/// platform's `worker_id`, releases never do.
pub fn responses_table(snapshot: &Snapshot) -> Table {
    let (mut header, mut rows) = (None, Vec::with_capacity(snapshot.responses.len()));
    each_response_row(snapshot, &mut |row| match header {
        None => header = Some(row),
        Some(_) => rows.push(row),
    });
    Table { header: header.unwrap_or_default(), rows }
}

/// The header and rows of [`responses_table`], handed to `each` one at a
/// time in the table's order (only the sort keys are held, never the whole
/// table).
pub fn each_response_row(snapshot: &Snapshot, each: &mut dyn FnMut(Vec<String>)) {
    let batch_position: std::collections::HashMap<Uuid, i32> =
        snapshot.batches.iter().map(|b| (b.id, b.position)).collect();
    let item_id: std::collections::HashMap<Uuid, &str> =
        snapshot.items.iter().map(|i| (i.id, i.external_id.as_str())).collect();
    let with_workers = !snapshot.worker_ids.is_empty();
    each(responses_header(with_workers).iter().map(|h| (*h).to_owned()).collect());
    // Rows by questionnaire position, annotator and item id, sorted as 16-byte
    // keys of ranks (ties in the order given): the ids themselves in the
    // keys would take several times that, beside a release's aggregation.
    // Annotators compare as their text does (lowercase hex,
    // hyphens in fixed places); an item not found sorts as an empty id.
    let annotators: std::collections::BTreeSet<Uuid> = snapshot.responses.iter().map(|r| r.annotator).collect();
    let annotator_rank: std::collections::HashMap<Uuid, u32> = annotators.into_iter().zip(0..).collect();
    let mut ids: Vec<&str> = item_id.values().copied().chain([""]).collect();
    ids.sort_unstable();
    ids.dedup();
    let id_rank: std::collections::HashMap<&str, u32> = ids.iter().copied().zip(0..).collect();
    let item_rank: std::collections::HashMap<Uuid, u32> =
        item_id.iter().map(|(item, id)| (*item, id_rank.get(id).copied().unwrap_or(0))).collect();
    drop(id_rank);
    let mut order: Vec<(i32, u32, u32, u32)> = snapshot
        .responses
        .iter()
        .zip(0..)
        .map(|(r, n)| {
            let position = batch_position.get(&r.batch_id).copied().unwrap_or(-1);
            let annotator = annotator_rank.get(&r.annotator).copied().unwrap_or(0);
            (position, annotator, item_rank.get(&r.item_id).copied().unwrap_or(0), n)
        })
        .collect();
    drop((annotator_rank, item_rank));
    order.sort_unstable();
    for (position, _, _, n) in order {
        let r = &snapshot.responses[n as usize];
        let item = item_id.get(&r.item_id).copied().unwrap_or_default();
        let mut row = vec![r.batch_id.to_string(), position.to_string(), item.to_owned(), r.annotator.to_string()];
        if with_workers {
            row.push(snapshot.worker_ids.get(&r.annotator).cloned().unwrap_or_default());
        }
        row.extend([
            r.answer.to_string(),
            r.time_on_task_ms.map(|t| t.to_string()).unwrap_or_default(),
            crate::core::support::export_time::time(r.answered_at),
            crate::core::support::export_time::time(r.changed_at),
            r.excluded_reason.as_deref().unwrap_or_default().to_owned(),
        ]);
        each(row);
    }
}
