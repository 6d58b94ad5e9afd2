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
//! than wait seconds for the new one (see [`crate::core::truth::ground_truth::summary`]).
//!
//! A big ground truth is kept deflated: its text is a large part of the
//! service's memory before a release cut, and deflated a tenth of that. It is deflated on the heavy-work
//! thread once its first reader has it, and inflated there for each later
//! one (exports, mostly: pages read their derived results).

use bytes::Bytes;
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::any::Any;
use std::io::{Read, Write};
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// Campaigns whose ground truth is kept (the most recently used).
const KEEP: usize = 4;
/// Derived results kept (campaign and name; the most recently used).
const KEEP_DERIVED: usize = 32;
/// Ground truths of this many bytes of text or more are kept deflated
/// (inflating one costs its reader time; smaller ones, read by
/// every view of an expert campaign's page, stay as they are).
const DEFLATE_FROM: usize = 16 << 20;

/// Kept ground truths by campaign: the fingerprint each was computed at.
type Computed = Arc<Mutex<Vec<(Uuid, String, KeptText)>>>;

/// The ground truths one service keeps (see [`crate::core::Caches`]), and the
/// results derived from them.
pub struct GroundTruths {
    // Compact JSON text, shared and not copied: a release-sized ground truth
    // is tens of MB as text (hundreds as a `Value`).
    computed: Computed,
    derived: Mutex<Vec<((Uuid, &'static str), Derived)>>,
    /// From what size a ground truth is kept deflated.
    deflate_from: usize,
}

impl Default for GroundTruths {
    fn default() -> Self {
        Self { computed: Computed::default(), derived: Mutex::default(), deflate_from: DEFLATE_FROM }
    }
}

/// A kept ground truth: its compact JSON text, or that text deflated.
#[derive(Clone)]
pub enum KeptText {
    /// As computed.
    Text(Bytes),
    /// Deflated (raw DEFLATE, fastest level), with the text's length.
    Deflated(Bytes, usize),
}

impl KeptText {
    /// The text, inflated on the heavy-work thread if it is kept deflated
    /// (one big piece of work at a time, as the computation itself).
    pub async fn text(self) -> crate::error::Result<Bytes> {
        match self {
            Self::Text(text) => Ok(text),
            Self::Deflated(deflated, len) => crate::core::support::heavy::run(move || inflate(&deflated, len)).await?,
        }
    }
}

/// `text` deflated at the fastest level (~1/10 of JSON text).
fn deflate(text: &[u8]) -> std::io::Result<Bytes> {
    let mut encoder = flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast());
    encoder.write_all(text)?;
    // Without the room the buffer grew into (up to as much again).
    let mut deflated = encoder.finish()?;
    deflated.shrink_to_fit();
    Ok(deflated.into())
}

/// The text [`deflate`] deflated, `len` bytes long.
fn inflate(deflated: &[u8], len: usize) -> crate::error::Result<Bytes> {
    let mut text = Vec::with_capacity(len);
    flate2::read::DeflateDecoder::new(deflated)
        .read_to_end(&mut text)
        .map_err(|e| crate::error::Error::internal("inflating a kept ground truth", e))?;
    Ok(text.into())
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
pub async fn fingerprint(pool: &PgPool, campaign_id: Uuid) -> crate::error::Result<String> {
    Ok(sqlx::query_scalar!(
        r#"SELECT concat_ws('|',
           (SELECT max(updated_at) FROM responses WHERE campaign_id = $1 AND updated_at > created_at),
           (SELECT concat_ws(':', count(*), max(excluded_at))
              FROM responses WHERE campaign_id = $1 AND excluded_reason IS NOT NULL),
           (SELECT concat_ws(':', count(*), sum(answered), max(completed_at),
                             count(*) FILTER (WHERE state = 'expired'), count(*) FILTER (WHERE state = 'active'))
              FROM assignments WHERE campaign_id = $1),
           (SELECT concat_ws(':', count(*), max(updated_at), max(created_at)) FROM items WHERE campaign_id = $1),
           (SELECT count(*) FROM batches WHERE campaign_id = $1),
           (SELECT md5(concat_ws(':', kind, config::text, participants, lease_minutes, annotators_per_batch, review))
              FROM campaigns WHERE id = $1)) AS "fingerprint!""#,
        campaign_id
    )
    .fetch_one(pool)
    .await?)
}

impl GroundTruths {
    /// The cached ground truth for this fingerprint, if any.
    pub fn get(&self, campaign_id: Uuid, fingerprint: &str) -> Option<KeptText> {
        let mut cache = self.computed.lock().ok()?;
        let at = cache.iter().position(|(id, f, _)| *id == campaign_id && f == fingerprint)?;
        // Most recently used last.
        let entry = cache.remove(at);
        let value = entry.2.clone();
        cache.push(entry);
        Some(value)
    }

    /// Keeps a computed ground truth; a big one is deflated afterwards on
    /// the heavy-work thread (call from within the runtime), kept as text
    /// meanwhile.
    pub fn put(&self, campaign_id: Uuid, fingerprint: String, value: &Bytes) {
        if let Ok(mut cache) = self.computed.lock() {
            cache.retain(|(id, _, _)| *id != campaign_id);
            if cache.len() >= KEEP {
                cache.remove(0);
            }
            cache.push((campaign_id, fingerprint.clone(), KeptText::Text(value.clone())));
        }
        if value.len() < self.deflate_from {
            return;
        }
        let (computed, text) = (self.computed.clone(), value.clone());
        crate::core::support::heavy::spawn(move || {
            let deflated = match deflate(&text) {
                Ok(deflated) => KeptText::Deflated(deflated, text.len()),
                Err(e) => return tracing::warn!(error = %e, "a ground truth is kept as text: deflating it failed"),
            };
            let Ok(mut cache) = computed.lock() else { return };
            // Unless it was replaced meanwhile.
            if let Some(kept) = cache.iter_mut().find(|(id, f, _)| *id == campaign_id && *f == fingerprint) {
                kept.2 = deflated;
            }
        });
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
        assert!(matches!(one.get(campaign, "f1"), Some(KeptText::Text(t)) if t == "{}"));
        assert!(other.get(campaign, "f1").is_none(), "another service's cache is its own");
        assert!(one.get(campaign, "f0").is_none(), "another fingerprint is another ground truth");
        one.put(campaign, "f2".into(), &Bytes::from_static(b"[]"));
        assert!(one.get(campaign, "f1").is_none(), "a campaign keeps its latest only");
        let derived = Derived { fingerprint: "f2".into(), at: Utc::now(), value: Arc::new(7_u32) };
        one.put_derived(campaign, "page", derived);
        let kept = one.derived(campaign, "page").expect("kept");
        assert_eq!((kept.fingerprint.as_str(), kept.value.downcast_ref::<u32>()), ("f2", Some(&7)));
        assert!(other.derived(campaign, "page").is_none());
        for _ in 0..=KEEP {
            one.put(Uuid::new_v4(), "f".into(), &Bytes::new());
        }
        assert!(one.get(campaign, "f2").is_none(), "at most KEEP campaigns");
    }

    #[tokio::test]
    async fn a_big_ground_truth_is_kept_deflated_and_read_back_as_it_was() {
        let truths = GroundTruths { deflate_from: 1_000, ..GroundTruths::default() };
        let (small, big) = (Uuid::new_v4(), Uuid::new_v4());
        let text: Bytes = format!("[{}0]", "{\"image\":\"a.jpg\",\"votes\":[1,2,3]},".repeat(200)).into();
        truths.put(small, "f".into(), &Bytes::from_static(b"[]"));
        truths.put(big, "f".into(), &text);
        // Deflated on the heavy-work thread: this waits behind it.
        crate::core::support::heavy::run(|| ()).await.expect("the heavy-work thread");
        let Some(KeptText::Deflated(deflated, len)) = truths.get(big, "f") else { panic!("kept deflated") };
        assert!(deflated.len() * 10 < text.len(), "{} bytes deflated from {len}", deflated.len());
        let kept = truths.get(big, "f").expect("kept").text().await.expect("inflated");
        assert_eq!(kept, text);
        assert!(matches!(truths.get(small, "f"), Some(KeptText::Text(t)) if t == "[]"), "a small one stays text");
    }
}
