//! Connections kept out of the pool for one hot statement. sqlx tests every
//! connection returned to its pool with a round trip to the server (and
//! hands it out again only after that), which a statement run thousands of
//! times a second pays each time; a held connection is simply used again.

use sqlx::pool::PoolConnection;
use sqlx::{PgConnection, PgPool, Postgres};
use std::sync::Arc;
use tokio::sync::{Mutex, OwnedMutexGuard};

type Slot = Arc<Mutex<Option<PoolConnection<Postgres>>>>;

/// A few connections taken from a pool once and kept; one per statement
/// that may run at the same time.
pub struct Held {
    pool: PgPool,
    slots: Vec<Slot>,
}

/// One held connection while a statement uses it.
struct HeldConnection<'a> {
    pool: &'a PgPool,
    slot: OwnedMutexGuard<Option<PoolConnection<Postgres>>>,
}

impl Held {
    /// `n` connections from `pool`, taken when first used.
    pub fn new(pool: PgPool, n: usize) -> Self {
        Self { pool, slots: (0..n.max(1)).map(|_| Arc::new(Mutex::new(None))).collect() }
    }

    /// Runs `statement` on a held connection; after a failure the
    /// connection goes back to the pool and the next statement takes another.
    pub async fn run<T, E: From<sqlx::Error>>(
        &self,
        statement: impl AsyncFnOnce(&mut PgConnection) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut held = self.get().await;
        let outcome = statement(held.connection().await?).await;
        if outcome.is_err() {
            held.give_back();
        }
        outcome
    }

    /// A free held connection, or the first one once it is free.
    async fn get(&self) -> HeldConnection<'_> {
        let free = self.slots.iter().find_map(|s| s.clone().try_lock_owned().ok());
        let slot = match free {
            Some(slot) => slot,
            None => self.slots[0].clone().lock_owned().await,
        };
        HeldConnection { pool: &self.pool, slot }
    }
}

impl HeldConnection<'_> {
    /// The connection, taken from the pool if none is held yet.
    async fn connection(&mut self) -> Result<&mut PgConnection, sqlx::Error> {
        if self.slot.is_none() {
            *self.slot = Some(self.pool.acquire().await?);
        }
        match self.slot.as_mut() {
            Some(conn) => Ok(&mut **conn),
            None => Err(sqlx::Error::PoolClosed),
        }
    }

    /// Gives the connection back to the pool (which tests it) after a
    /// failure: the next statement takes a fresh one.
    fn give_back(&mut self) {
        *self.slot = None;
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn statements_at_once_each_get_their_own_slot_and_wait_only_when_all_are_busy() {
        // A lazy pool to nowhere: slots are handed out without connecting.
        let pool =
            sqlx::postgres::PgPoolOptions::new().connect_lazy("postgres://nobody@127.0.0.1:1/none").expect("lazy");
        let held = Held::new(pool, 2);
        let first = held.get().await;
        let second = held.get().await;
        assert!(!Arc::ptr_eq(OwnedMutexGuard::mutex(&first.slot), OwnedMutexGuard::mutex(&second.slot)));
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), held.get()).await;
        assert!(third.is_err(), "a third statement waits while both are busy");
        drop(first);
        let third = tokio::time::timeout(std::time::Duration::from_millis(50), held.get()).await;
        assert!(third.is_ok(), "and goes once one is free");
    }
}
