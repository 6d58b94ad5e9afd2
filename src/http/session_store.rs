//! The session store: sessions live in PostgreSQL (so every instance sees
//! them); each instance remembers the ones it read (see [`SessionCache`]),
//! and the lookups of concurrent requests share one query. Saving and
//! deleting announce the change to every instance in the same statement.

use super::session_cache::{SessionCache, CHANNEL};
use crate::db::batcher::{in_input_order, Batcher};
use async_trait::async_trait;
use sqlx::PgPool;
use std::sync::Arc;
use tower_sessions::session::{Id, Record};
use tower_sessions::session_store::{self, SessionStore};
use tower_sessions_sqlx_store::PostgresStore;

/// Lookups per query at most.
const MAX_BATCH: usize = 128;
/// Lookup queries running at once.
const IN_FLIGHT: usize = 2;

/// [`PostgresStore`] with remembered sessions and batched lookups.
#[derive(Clone)]
pub struct SessionStoreWithBatchedLoads {
    store: PostgresStore,
    pool: PgPool,
    loads: Arc<Batcher<String, Option<Vec<u8>>>>,
    cache: Arc<SessionCache>,
}

impl std::fmt::Debug for SessionStoreWithBatchedLoads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStoreWithBatchedLoads").finish_non_exhaustive()
    }
}

impl SessionStoreWithBatchedLoads {
    /// The store on `pool`, in PostgresStore's table; lookups go through
    /// `statements`, a pool for single statements. Its listener starts here
    /// (on the caller's runtime).
    /// `cache` is the instance's (see [`crate::http::Shared::sessions`]).
    pub fn new(pool: PgPool, statements: crate::db::statements::StatementPool, cache: Arc<SessionCache>) -> Self {
        let store = PostgresStore::new(pool.clone());
        cache.listen(pool.clone());
        let loads = Batcher::on_held("session lookup", MAX_BATCH, IN_FLIGHT, statements, |conn, ids| {
            Box::pin(async move { load_many(conn, &ids).await })
        });
        Self { store, pool, loads: Arc::new(loads), cache }
    }

    /// Runs a statement that changes the session `id` and announces it to
    /// every instance (its last parameter, bound here, is the channel), and
    /// forgets the session here at once.
    async fn change(
        &self,
        id: &str,
        statement: sqlx::query::Query<'_, sqlx::Postgres, sqlx::postgres::PgArguments>,
    ) -> session_store::Result<()> {
        statement.bind(CHANNEL).execute(&self.pool).await.map_err(backend)?;
        self.cache.forget(id);
        Ok(())
    }
}

/// The live sessions' data for these ids, in their order.
async fn load_many<'e>(db: impl sqlx::PgExecutor<'e>, ids: &[String]) -> sqlx::Result<Vec<Option<Vec<u8>>>> {
    let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT k.n, s.data FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n)
         JOIN tower_sessions.session s ON s.id = k.id AND s.expiry_date > now()",
    )
    .bind(ids)
    .fetch_all(db)
    .await?;
    Ok(in_input_order(ids.len(), rows))
}

#[async_trait]
impl SessionStore for SessionStoreWithBatchedLoads {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        self.store.create(record).await
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        let data = rmp_serde::to_vec(record).map_err(|e| session_store::Error::Encode(e.to_string()))?;
        let id = record.id.to_string();
        // NOTIFY is delivered at commit: the change and its announcement are one.
        let statement = sqlx::query(
            "WITH saved AS (
                 INSERT INTO tower_sessions.session (id, data, expiry_date) VALUES ($1, $2, $3)
                 ON CONFLICT (id) DO UPDATE SET data = excluded.data, expiry_date = excluded.expiry_date
                 RETURNING id)
             SELECT pg_notify($4, id) FROM saved",
        )
        .bind(&id)
        .bind(data)
        .bind(record.expiry_date);
        self.change(&id, statement).await
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        let key = id.to_string();
        if let Some(record) = self.cache.get(&key) {
            return Ok(Some(record));
        }
        let ticket = self.cache.ticket();
        let record = match self.loads.call(key).await {
            Some(Some(data)) => {
                Some(rmp_serde::from_slice::<Record>(&data).map_err(|e| session_store::Error::Decode(e.to_string()))?)
            }
            Some(None) => None,
            None => self.store.load(id).await?,
        };
        if let Some(record) = &record {
            self.cache.remember(ticket, record);
        }
        Ok(record)
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        let id = id.to_string();
        let statement = sqlx::query(
            "WITH gone AS (DELETE FROM tower_sessions.session WHERE id = $1 RETURNING id)
             SELECT pg_notify($2, id) FROM gone",
        )
        .bind(&id);
        self.change(&id, statement).await
    }
}

/// Ends every live session of these users at once (an admin's "revoke and
/// end sessions"): sessions keep their user inside their encoded data, so
/// the live ones are read and those of the users deleted, each deletion
/// announced to every instance. Returns how many were ended.
pub async fn end_sessions_of(pool: &PgPool, cache: &SessionCache, users: &[uuid::Uuid]) -> sqlx::Result<usize> {
    if users.is_empty() {
        return Ok(0);
    }
    let users: std::collections::HashSet<String> = users.iter().map(ToString::to_string).collect();
    let live: Vec<(String, Vec<u8>)> =
        sqlx::query_as("SELECT id, data FROM tower_sessions.session WHERE expiry_date > now()").fetch_all(pool).await?;
    let theirs: Vec<String> = live
        .into_iter()
        .filter(|(_, data)| {
            rmp_serde::from_slice::<Record>(data).ok().is_some_and(|r| {
                r.data.get(super::extract::USER_KEY).and_then(|u| u.as_str()).is_some_and(|u| users.contains(u))
            })
        })
        .map(|(id, _)| id)
        .collect();
    let ended: Vec<(String,)> = sqlx::query_as(
        "WITH gone AS (DELETE FROM tower_sessions.session WHERE id = ANY($1) RETURNING id)
         SELECT id FROM gone, LATERAL (SELECT pg_notify($2, id)) n",
    )
    .bind(&theirs)
    .bind(CHANNEL)
    .fetch_all(pool)
    .await?;
    // Other instances forget them when the announcement arrives; this one now.
    for (id,) in &ended {
        cache.forget(id);
    }
    Ok(ended.len())
}

fn backend(e: sqlx::Error) -> session_store::Error {
    session_store::Error::Backend(e.to_string())
}
