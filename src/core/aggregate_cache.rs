//! Ground truths computed once and reused while nothing they are computed
//! from has changed. Each use first asks the database for a fingerprint of
//! the campaign's data (counts and latest change times of its responses,
//! assignments, items and batches, and its settings): one cheap query, so a
//! cached result is never stale, whichever instance changed the data.

use bytes::Bytes;
use sqlx::PgPool;
use std::sync::Mutex;
use uuid::Uuid;

/// Campaigns whose ground truth is kept (the most recently used).
const KEEP: usize = 4;

// Compact JSON text, shared and not copied: a release-sized ground truth is
// tens of MB as text (hundreds as a `Value`).
static CACHE: Mutex<Vec<(Uuid, String, Bytes)>> = Mutex::new(Vec::new());

/// The fingerprint of everything a campaign's ground truth depends on.
pub async fn fingerprint(pool: &PgPool, campaign_id: Uuid) -> super::Result<String> {
    Ok(sqlx::query_scalar(
        "SELECT concat_ws('|',
           (SELECT concat_ws(':', count(*), max(updated_at), count(excluded_reason), max(excluded_at))
              FROM responses WHERE campaign_id = $1),
           (SELECT concat_ws(':', count(*), max(completed_at), count(*) FILTER (WHERE state = 'expired'),
                             count(*) FILTER (WHERE state = 'active'))
              FROM assignments WHERE campaign_id = $1),
           (SELECT concat_ws(':', count(*), max(updated_at), max(created_at)) FROM items WHERE campaign_id = $1),
           (SELECT count(*) FROM batches WHERE campaign_id = $1),
           (SELECT md5(concat_ws(':', kind, config::text, participants, lease_minutes, annotators_per_batch, review))
              FROM campaigns WHERE id = $1))",
    )
    .bind(campaign_id)
    .fetch_one(pool)
    .await?)
}

/// The cached ground truth for this fingerprint, if any.
pub fn get(campaign_id: Uuid, fingerprint: &str) -> Option<Bytes> {
    let mut cache = CACHE.lock().ok()?;
    let at = cache.iter().position(|(id, f, _)| *id == campaign_id && f == fingerprint)?;
    // Most recently used last.
    let entry = cache.remove(at);
    let value = entry.2.clone();
    cache.push(entry);
    Some(value)
}

/// Keeps a computed ground truth.
pub fn put(campaign_id: Uuid, fingerprint: String, value: &Bytes) {
    if let Ok(mut cache) = CACHE.lock() {
        cache.retain(|(id, _, _)| *id != campaign_id);
        if cache.len() >= KEEP {
            cache.remove(0);
        }
        cache.push((campaign_id, fingerprint, value.clone()));
    }
}
