//! The pool for single statements: its type offers one statement at a
//! time and never a transaction, so the rule it rests on (nothing on it
//! ever begins one) is kept by the compiler instead of by convention.

use sqlx::postgres::PgPoolOptions;
use sqlx::PgPool;
use std::time::Duration;

/// Connections kept for single statements, at most.
const STATEMENT_POOL_SIZE: u32 = 16;

/// A second pool on the same server for single autocommit statements only
/// (the batched hot path: answers, task pages, session lookups), never a
/// transaction. It goes without the release guard
/// ([`crate::db::release_guard`]): the guard's check is a round trip on every
/// return of a connection, and it only matters where a `BEGIN` can be
/// abandoned, which cannot happen on a pool that never begins one.
///
/// A transaction on it does not compile:
///
/// ```compile_fail
/// use sqlx::Acquire;
/// async fn begins(statements: &atelier::db::statements::StatementPool) {
///     let _ = statements.executor().begin().await;
/// }
/// ```
#[derive(Clone, Debug)]
pub struct StatementPool(PgPool);

impl StatementPool {
    /// A statement pool on the server `pool` connects to, connecting lazily.
    pub fn beside(pool: &PgPool) -> Self {
        Self(
            PgPoolOptions::new()
                .max_connections(STATEMENT_POOL_SIZE)
                .acquire_timeout(Duration::from_secs(5))
                .test_before_acquire(false)
                // The batched statements take arrays of a varying length:
                // custom plans would be planned again on every call, which
                // costs more than running them.
                .connect_lazy_with(
                    pool.connect_options().as_ref().clone().options([("plan_cache_mode", "force_generic_plan")]),
                ),
        )
    }

    /// An executor for single statements: the pool behind a type that
    /// offers no `begin` (nor `acquire`).
    pub fn executor(&self) -> impl sqlx::PgExecutor<'_> + Copy {
        &self.0
    }

    /// The pool itself, for the connections [`crate::db::held::Held`] keeps
    /// (which run single statements too).
    pub(in crate::db) fn pool(&self) -> &PgPool {
        &self.0
    }
}
