//! Ground truth and exports: the kind aggregates, the core gathers the data
//! and writes the generic raw-response table.

use crate::core::campaign::campaigns;
use crate::core::kind::contract::{CampaignRules, ItemRecord, ResponseRecord, StoredInput, TaskKind};
use crate::core::truth::aggregate_cache::{self, Derived, DerivedValue};
use crate::core::truth::caches::Caches;
use crate::error::Result;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use std::sync::Arc;
use uuid::Uuid;

/// Loads what the kind needs to aggregate a campaign. Responses excluded by
/// an earlier curation run (reason `curation:...`) are included: curation
/// recomputes those exclusions itself, so re-running it gives the same result.
pub async fn input(pool: &PgPool, campaign_id: Uuid) -> Result<StoredInput> {
    input_without(pool, campaign_id, &[]).await
}

/// [`input`] with some payload keys left out of every item (what a kind
/// does not aggregate, e.g. masks' polygons), so big campaigns fit in memory.
#[tracing::instrument(level = "debug", skip(pool, skip))]
pub async fn input_without(pool: &PgPool, campaign_id: Uuid, skip: &[&str]) -> Result<StoredInput> {
    use futures_util::TryStreamExt;
    let campaign = campaigns::get(pool, campaign_id).await?;
    // One snapshot for items, responses and workers, and room to sort the
    // responses in memory (PostgreSQL's default 4 MB sends a crowd
    // campaign's sort to disk).
    let mut tx = crate::db::one_moment(pool).await?;
    sqlx::query!("SET LOCAL work_mem = '64MB'").execute(&mut *tx).await?;
    // Read as a stream, each payload kept as text as it comes: read whole,
    // every row's parsed payload was held at once.
    let items = sqlx::query_as::<_, (Uuid, String, Value, Option<Value>)>(
        "SELECT id, external_id, payload - $2::text[], gold FROM items WHERE campaign_id = $1 ORDER BY created_at, external_id",
    )
    .bind(campaign_id)
    .bind(skip)
    .fetch(&mut *tx)
    .map_ok(|(id, external_id, payload, gold)| ItemRecord { id, external_id, payload: payload.into(), gold })
    .try_collect()
    .await?;
    let responses = responses(&mut tx, campaign_id).await?;
    let worker_ids = worker_ids(&mut *tx, campaign_id).await?;
    let batch_names = sqlx::query!(
        r#"SELECT id, external_id AS "external_id!" FROM batches WHERE campaign_id = $1 AND external_id IS NOT NULL"#,
        campaign_id,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|b| (b.id, b.external_id))
    .collect();
    tx.commit().await?;
    Ok(StoredInput {
        items,
        responses,
        worker_ids,
        batch_names,
        participants: Default::default(),
        review: campaign.settings.review,
    })
}

/// The responses that count, oldest first, identical answers sharing one
/// parsed copy (read as a stream, so only the shared copies are ever parsed).
#[tracing::instrument(level = "debug", skip(db))]
async fn responses(db: &mut sqlx::PgConnection, campaign_id: Uuid) -> Result<Vec<ResponseRecord>> {
    use futures_util::TryStreamExt;
    // Allocated once: grown by doubling, a crowd campaign's responses would
    // need the old and the new list at once.
    let capacity = crate::core::work::assignments::answers_stored(&mut *db, campaign_id).await?;
    let mut rows = sqlx::query!(
        r#"SELECT r.assignment_id, b.review_of, a.batch_id, r.item_id, r.annotator_id, r.answer::text AS "answer!",
                  a.state = 'completed' AS "submitted!", bi.position + 1 AS position
             FROM responses r
             JOIN assignments a ON a.id = r.assignment_id
             JOIN batches b ON b.id = a.batch_id
             LEFT JOIN batch_items bi ON bi.batch_id = a.batch_id AND bi.item_id = r.item_id
            WHERE r.campaign_id = $1 AND (r.excluded_reason IS NULL OR r.excluded_reason LIKE 'curation:%')
            ORDER BY r.created_at, r.id"#,
        campaign_id
    )
    .fetch(db);
    let mut shared = crate::core::truth::shared_answers::SharedAnswers::default();
    let mut responses = Vec::with_capacity(capacity);
    while let Some(r) = rows.try_next().await? {
        let answer = shared.from_text(&r.answer).map_err(|e| crate::error::Error::internal("stored answer", e))?;
        responses.push(ResponseRecord {
            assignment_id: r.assignment_id,
            reviews: r.review_of,
            batch_id: r.batch_id,
            item_id: r.item_id,
            annotator_id: r.annotator_id,
            answer,
            submitted: r.submitted,
            position: r.position,
        });
    }
    Ok(responses)
}

/// The crowd platform's worker id (an account name for experts) of everyone
/// who took a batch of the campaign: for admins' live views, never releases.
pub async fn worker_ids<'e>(
    db: impl sqlx::PgExecutor<'e>,
    campaign_id: Uuid,
) -> Result<std::collections::BTreeMap<Uuid, String>> {
    Ok(sqlx::query!(
        r#"SELECT DISTINCT u.id, coalesce(u.external_id, u.name, u.id::text) AS "worker_id!" FROM users u
           JOIN assignments a ON a.annotator_id = u.id WHERE a.campaign_id = $1"#,
        campaign_id,
    )
    .fetch_all(db)
    .await?
    .into_iter()
    .map(|u| (u.id, u.worker_id))
    .collect())
}

/// The campaign's ground truth as its kind computes it, as compact JSON
/// text: from the cache while the campaign's data is unchanged (see
/// [`crate::core::truth::aggregate_cache`]), else computed off the async workers (it can
/// be heavy on big campaigns). Kinds read it back into their typed results;
/// the API sends it as it is.
pub async fn aggregate(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &Caches,
    campaign_id: Uuid,
) -> Result<bytes::Bytes> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    aggregate_of(pool, kinds.of(&campaign)?, kinds.rules(&campaign)?, caches, campaign_id).await
}

/// [`aggregate`] when the campaign's kind is known.
async fn aggregate_of(
    pool: &PgPool,
    kind: &'static dyn TaskKind,
    rules: Arc<dyn CampaignRules>,
    caches: &Caches,
    campaign_id: Uuid,
) -> Result<bytes::Bytes> {
    let fingerprint = aggregate_cache::fingerprint(pool, campaign_id).await?;
    aggregate_at(pool, kind, rules, caches, campaign_id, fingerprint).await
}

/// [`aggregate_of`] with the data's fingerprint already read (read before
/// the data: a change in between makes the next read compute again).
#[tracing::instrument(level = "debug", skip(pool, kind, rules, caches, fingerprint), fields(kind = kind.name()))]
async fn aggregate_at(
    pool: &PgPool,
    kind: &'static dyn TaskKind,
    rules: Arc<dyn CampaignRules>,
    caches: &Caches,
    campaign_id: Uuid,
    fingerprint: String,
) -> Result<bytes::Bytes> {
    if let Some(cached) = caches.ground_truths.get(campaign_id, &fingerprint) {
        metrics::counter!("atelier_ground_truth_cache_hits_total").increment(1);
        return cached.text().await;
    }
    let input = input_without(pool, campaign_id, kind.about().payload_keys_not_aggregated).await?;
    let json = crate::core::support::heavy::run(move || {
        crate::core::kind::contract::aggregate_json_with_reviews(&*rules, input)
    })
    .await?;
    let json = bytes::Bytes::from(json);
    caches.ground_truths.put(campaign_id, fingerprint, &json);
    Ok(json)
}

/// How current a [`summary`] is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Freshness {
    /// Derived from the campaign's data as it is now.
    Current,
    /// Derived at `as_of`; the data has changed since, and the new summary
    /// is being computed.
    Updating {
        /// When the summary shown was derived.
        as_of: DateTime<Utc>,
    },
    /// None was derived yet (a new service, a campaign never shown) and the
    /// first is taking longer than [`FIRST_WAIT`]: it is being computed.
    Computing,
}

/// How long a view waits for a campaign's first summary before it is shown
/// without it, marked [`Freshness::Computing`]: small campaigns' come well
/// within it; at VTON-QBench size the ground truth takes seconds, and a
/// page that waits for them looks broken.
pub const FIRST_WAIT: std::time::Duration = std::time::Duration::from_millis(120);

impl Freshness {
    /// What a page says after "The figures below are", "The ground truth
    /// is" and the like when they are not current, in words; `None` when
    /// they are.
    pub fn notice(self) -> Option<String> {
        match self {
            Self::Current => None,
            Self::Updating { as_of } => Some(format!(
                "from {}: the campaign has changed since, and this is being updated.",
                as_of.format("%Y-%m-%d %H:%M:%S UTC")
            )),
            Self::Computing => Some("being computed from the campaign's answers, and shown here when ready.".into()),
        }
    }
}

/// A small result `derive`d from the campaign's ground truth (what a page
/// shows), kept beside it under `name` so a view reads neither the data nor
/// a release-sized ground truth. When the campaign has changed since the
/// last one was derived, that one comes back at once, marked
/// [`Freshness::Updating`], while the new one is derived in the background
/// (one computation per campaign and name, whoever asks meanwhile): a
/// ground truth can take seconds. The first is waited for up to
/// [`FIRST_WAIT`]; past it there is none to show yet (`None`, marked
/// [`Freshness::Computing`]) while it goes on being derived.
#[tracing::instrument(level = "debug", skip_all, fields(campaign_id = %campaign.id, name))]
pub async fn summary<T: Send + Sync + 'static>(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &Arc<Caches>,
    campaign: &campaigns::Campaign,
    name: &'static str,
    derive: fn(&dyn TaskKind, &[u8]) -> Result<T>,
) -> Result<(Option<Arc<T>>, Freshness)> {
    let (campaign_id, kind, rules) = (campaign.id, kinds.of(campaign)?, kinds.rules(campaign)?);
    let last = caches
        .ground_truths
        .derived(campaign_id, name)
        .and_then(|d| Some((d.fingerprint, d.at, d.value.downcast::<T>().ok()?)));
    let Some((derived_from, as_of, value)) = last else {
        // None yet: no fingerprint to compare (the derivation reads its
        // own), so the wait starts at once.
        let first = derive_in_background::<T>(pool, kind, rules, caches, campaign_id, name, derive);
        return match tokio::time::timeout(FIRST_WAIT, first).await {
            Ok(derived) => {
                let derived = derived.map_err(|e| crate::error::Error::internal("deriving a summary", e))??;
                Ok((Some(derived), Freshness::Current))
            }
            Err(_) => Ok((None, Freshness::Computing)),
        };
    };
    if derived_from == aggregate_cache::fingerprint(pool, campaign_id).await? {
        return Ok((Some(value), Freshness::Current));
    }
    drop(derive_in_background::<T>(pool, kind, rules, caches, campaign_id, name, derive));
    Ok((Some(value), Freshness::Updating { as_of }))
}

/// [`derive_summary`] in a task of its own, so it goes on (and is kept)
/// when nobody waits for it any more: its result, for whoever still waits;
/// a failure nobody waits for is logged here (one that is waited for is
/// the waiter's error, logged once where it is answered).
fn derive_in_background<T: Send + Sync + 'static>(
    pool: &PgPool,
    kind: &'static dyn TaskKind,
    rules: Arc<dyn CampaignRules>,
    caches: &Arc<Caches>,
    campaign_id: Uuid,
    name: &'static str,
    derive: fn(&dyn TaskKind, &[u8]) -> Result<T>,
) -> tokio::sync::oneshot::Receiver<Result<Arc<T>>> {
    let (pool, caches) = (pool.clone(), caches.clone());
    let (result, receiver) = tokio::sync::oneshot::channel();
    tokio::spawn(async move {
        let derived = derive_summary::<T>(&pool, kind, rules, &caches, campaign_id, name, derive).await;
        if let Err(Err(e)) = result.send(derived) {
            tracing::warn!(error = %e, %campaign_id, name, "deriving a summary failed");
        }
    });
    receiver
}

/// Derives and keeps a [`summary`] from the data as it is now; concurrent
/// calls for the same campaign and name share one computation.
async fn derive_summary<T: Send + Sync + 'static>(
    pool: &PgPool,
    kind: &'static dyn TaskKind,
    rules: Arc<dyn CampaignRules>,
    caches: &Arc<Caches>,
    campaign_id: Uuid,
    name: &'static str,
    derive: fn(&dyn TaskKind, &[u8]) -> Result<T>,
) -> Result<Arc<T>> {
    let value = caches
        .summaries
        .get((campaign_id, name), || {
            let (pool, caches, rules) = (pool.clone(), caches.clone(), rules.clone());
            async move {
                let fingerprint = aggregate_cache::fingerprint(&pool, campaign_id).await?;
                let json = aggregate_at(&pool, kind, rules, &caches, campaign_id, fingerprint.clone()).await?;
                let value: DerivedValue =
                    Arc::new(crate::core::support::heavy::run(move || derive(kind, &json)).await??);
                let at = Utc::now();
                let derived = Derived { fingerprint, at, value: value.clone() };
                caches.ground_truths.put_derived(campaign_id, name, derived);
                Ok(value)
            }
        })
        .await?;
    value.downcast::<T>().map_err(|_| crate::error::Error::unexpected("two summaries of different types share a name"))
}

/// The ground truth as CSV text in chunks (see [`crate::core::support::csv_chunks`]),
/// written off the async workers (tens of MB at benchmark scale) where the
/// ground truth was computed (see [`crate::core::support::heavy`]), row by row as the kind
/// reads them.
/// `partial` asks for results not yet final too (see
/// [`TaskKind::export`]).
#[tracing::instrument(level = "debug", skip(pool, kinds, caches))]
pub async fn csv(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &Caches,
    campaign_id: Uuid,
    partial: bool,
) -> Result<Vec<bytes::Bytes>> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds.of(&campaign)?;
    let aggregate = aggregate_of(pool, kind, kinds.rules(&campaign)?, caches, campaign_id).await?;
    crate::core::support::heavy::run(move || {
        let mut csv = crate::core::support::csv_chunks::CsvChunks::default();
        if partial {
            kind.export(&aggregate, true, &mut |row| csv.row(row));
        } else {
            kind.export(&aggregate, false, &mut |row| csv.row(row));
        }
        csv.chunks()
    })
    .await?
}

/// The columns of `responses.csv`, live (with the worker's id when anyone
/// took part) or in a release (without).
pub fn responses_header(with_workers: bool) -> Vec<&'static str> {
    let mut header = vec!["questionnaire", "questionnaire_position", "item", "annotator"];
    if with_workers {
        header.push("worker_id");
    }
    header.extend(["answer", "time_on_task_ms", "answered_at", "changed_at", "excluded_reason"]);
    header
}
