//! Ground truths computed once and reused while nothing they are computed
//! from has changed. Each use first asks the database for a fingerprint of
//! the campaign's data (counts and latest change times of its responses,
//! assignments, items and batches, and its settings): one cheap query, so a
//! cached result is never stale, whichever instance changed the data.
//!
//! Beside each ground truth, small results derived from it (what a page
//! shows) are kept under their own name, so a view does not read a
//! release-sized ground truth back each time. The last derived result
//! outlives a change, for views that would rather show it, marked as such,
//! than wait seconds for the new one (see [`super::ground_truth::summary`]).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::any::Any;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// Campaigns whose ground truth is kept (the most recently used).
const KEEP: usize = 4;
/// Derived results kept (campaign and name; the most recently used).
const KEEP_DERIVED: usize = 32;

/// The ground truths one service keeps (see [`super::Caches`]), and the
/// results derived from them.
#[derive(Default)]
pub struct GroundTruths {
    // Compact JSON text, shared and not copied: a release-sized ground truth
    // is tens of MB as text (hundreds as a `Value`).
    computed: Mutex<Vec<(Uuid, String, Bytes)>>,
    derived: Mutex<Vec<((Uuid, &'static str), Derived)>>,
}

/// A result derived from a ground truth, of whatever type its reader chose.
pub type DerivedValue = Arc<dyn Any + Send + Sync>;

/// A derived result and what it was derived from.
#[derive(Clone)]
pub struct Derived {
    /// The fingerprint of the data it was derived from.
    pub fingerprint: String,
    /// When it was derived.
    pub at: DateTime<Utc>,
    /// The result.
    pub value: DerivedValue,
}

/// The fingerprint of everything a campaign's ground truth depends on. It
/// reads indexes and the assignments, never every response: responses are
/// never deleted, new ones are counted in their assignments (`answered`),
/// changed ones and exclusions are found through their own small indexes
/// (migration 0033).
#[tracing::instrument(level = "debug", skip(pool))]
pub async fn fingerprint(pool: &PgPool, campaign_id: Uuid) -> super::Result<String> {
    Ok(sqlx::query_scalar(
        "SELECT concat_ws('|',
           (SELECT max(updated_at) FROM responses WHERE campaign_id = $1 AND updated_at > created_at),
           (SELECT concat_ws(':', count(*), max(excluded_at))
              FROM responses WHERE campaign_id = $1 AND excluded_reason IS NOT NULL),
           (SELECT concat_ws(':', count(*), sum(answered), max(completed_at),
                             count(*) FILTER (WHERE state = 'expired'), count(*) FILTER (WHERE state = 'active'))
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

impl GroundTruths {
    /// The cached ground truth for this fingerprint, if any.
    pub fn get(&self, campaign_id: Uuid, fingerprint: &str) -> Option<Bytes> {
        let mut cache = self.computed.lock().ok()?;
        let at = cache.iter().position(|(id, f, _)| *id == campaign_id && f == fingerprint)?;
        // Most recently used last.
        let entry = cache.remove(at);
        let value = entry.2.clone();
        cache.push(entry);
        Some(value)
    }

    /// Keeps a computed ground truth.
    pub fn put(&self, campaign_id: Uuid, fingerprint: String, value: &Bytes) {
        if let Ok(mut cache) = self.computed.lock() {
            cache.retain(|(id, _, _)| *id != campaign_id);
            if cache.len() >= KEEP {
                cache.remove(0);
            }
            cache.push((campaign_id, fingerprint, value.clone()));
        }
    }

    /// The last result derived under `name` for the campaign, whatever data it
    /// was derived from (compare its fingerprint).
    pub fn derived(&self, campaign_id: Uuid, name: &'static str) -> Option<Derived> {
        let mut cache = self.derived.lock().ok()?;
        let at = cache.iter().position(|(key, _)| *key == (campaign_id, name))?;
        let entry = cache.remove(at);
        let value = entry.1.clone();
        cache.push(entry);
        Some(value)
    }

    /// Keeps a derived result, replacing the campaign's earlier one of that name.
    pub fn put_derived(&self, campaign_id: Uuid, name: &'static str, derived: Derived) {
        if let Ok(mut cache) = self.derived.lock() {
            cache.retain(|(key, _)| *key != (campaign_id, name));
            if cache.len() >= KEEP_DERIVED {
                cache.remove(0);
            }
            cache.push(((campaign_id, name), derived));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_service_keeps_its_own_and_the_latest_per_campaign() {
        let (one, other) = (GroundTruths::default(), GroundTruths::default());
        let campaign = Uuid::new_v4();
        one.put(campaign, "f1".into(), &Bytes::from_static(b"{}"));
        assert_eq!(one.get(campaign, "f1"), Some(Bytes::from_static(b"{}")));
        assert_eq!(other.get(campaign, "f1"), None, "another service's cache is its own");
        assert_eq!(one.get(campaign, "f0"), None, "another fingerprint is another ground truth");
        one.put(campaign, "f2".into(), &Bytes::from_static(b"[]"));
        assert_eq!(one.get(campaign, "f1"), None, "a campaign keeps its latest only");
        let derived = Derived { fingerprint: "f2".into(), at: Utc::now(), value: Arc::new(7_u32) };
        one.put_derived(campaign, "page", derived);
        let kept = one.derived(campaign, "page").expect("kept");
        assert_eq!((kept.fingerprint.as_str(), kept.value.downcast_ref::<u32>()), ("f2", Some(&7)));
        assert!(other.derived(campaign, "page").is_none());
        for _ in 0..=KEEP {
            one.put(Uuid::new_v4(), "f".into(), &Bytes::new());
        }
        assert_eq!(one.get(campaign, "f2"), None, "at most KEEP campaigns");
    }
}
