//! The session store: sessions live in PostgreSQL (so every instance sees
//! them), and the lookups of concurrent requests share one query. Creating,
//! saving and deleting go to the store as they are.

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

/// [`PostgresStore`] with batched lookups.
#[derive(Clone)]
pub struct SessionStoreWithBatchedLoads {
    store: PostgresStore,
    loads: Arc<Batcher<String, Option<Vec<u8>>>>,
}

impl std::fmt::Debug for SessionStoreWithBatchedLoads {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("SessionStoreWithBatchedLoads").finish_non_exhaustive()
    }
}

impl SessionStoreWithBatchedLoads {
    /// The store on `pool`, in PostgresStore's table; lookups go through
    /// `statements`, a pool for single statements.
    pub fn new(pool: PgPool, statements: PgPool) -> Self {
        let store = PostgresStore::new(pool);
        let pool = statements;
        let loads = Batcher::new(
            "session lookup",
            MAX_BATCH,
            IN_FLIGHT,
            Arc::new(move |ids: Vec<String>| {
                let pool = pool.clone();
                Box::pin(async move { Ok(load_many(&pool, &ids).await?) })
                    as futures_util::future::BoxFuture<'static, _>
            }),
        );
        Self { store, loads: Arc::new(loads) }
    }
}

/// The live sessions' data for these ids, in their order.
async fn load_many(pool: &PgPool, ids: &[String]) -> sqlx::Result<Vec<Option<Vec<u8>>>> {
    let rows: Vec<(i64, Vec<u8>)> = sqlx::query_as(
        "SELECT k.n, s.data FROM unnest($1::text[]) WITH ORDINALITY AS k(id, n)
         JOIN tower_sessions.session s ON s.id = k.id AND s.expiry_date > now()",
    )
    .bind(ids)
    .fetch_all(pool)
    .await?;
    Ok(in_input_order(ids.len(), rows))
}

#[async_trait]
impl SessionStore for SessionStoreWithBatchedLoads {
    async fn create(&self, record: &mut Record) -> session_store::Result<()> {
        self.store.create(record).await
    }

    async fn save(&self, record: &Record) -> session_store::Result<()> {
        self.store.save(record).await
    }

    async fn load(&self, id: &Id) -> session_store::Result<Option<Record>> {
        match self.loads.call(id.to_string()).await {
            Some(Some(data)) => {
                rmp_serde::from_slice(&data).map(Some).map_err(|e| session_store::Error::Decode(e.to_string()))
            }
            Some(None) => Ok(None),
            None => self.store.load(id).await,
        }
    }

    async fn delete(&self, id: &Id) -> session_store::Result<()> {
        self.store.delete(id).await
    }
}
