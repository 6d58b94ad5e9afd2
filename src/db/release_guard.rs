//! A pool hook that refuses to hand out a connection still inside a
//! transaction.
//!
//! sqlx 0.8 (and 0.9.0) raise their transaction depth only after `BEGIN` is
//! answered, so a future dropped while waiting for that answer queues no
//! `ROLLBACK`, and the pool takes the connection back as if it were clean
//! (launchbadge/sqlx#4393). The next borrower would then run inside the
//! abandoned transaction: its writes are acknowledged but never committed,
//! and its locks are held. This hook checks every returning connection on the
//! server side, so neither that bug nor the next one of its kind can lose an
//! acknowledged write.

use futures_util::future::BoxFuture;
use sqlx::pool::PoolConnectionMetadata;
use sqlx::{Executor, PgConnection, Row};

/// SQLSTATE of "current transaction is aborted".
const IN_FAILED_TRANSACTION: &str = "25P02";

/// Whether the server has this connection outside any transaction block.
///
/// Sent with the simple-query protocol: outside a block, PostgreSQL starts the
/// statement's own transaction with the statement, so `now()` (transaction
/// start) equals `statement_timestamp()` exactly; inside a block left open,
/// `now()` is when that block began, at least one round trip earlier.
pub async fn is_outside_transaction(conn: &mut PgConnection) -> Result<bool, sqlx::Error> {
    match conn.fetch_one(sqlx::raw_sql("SELECT now() = statement_timestamp()")).await {
        Ok(row) => row.try_get::<bool, _>(0),
        Err(sqlx::Error::Database(e)) if e.code().as_deref() == Some(IN_FAILED_TRANSACTION) => Ok(false),
        Err(e) => Err(e),
    }
}

/// The `after_release` hook: keeps a clean connection, closes one left in a
/// transaction (closing rolls it back on the server) and counts it.
pub fn after_release(
    conn: &mut PgConnection,
    _meta: PoolConnectionMetadata,
) -> BoxFuture<'_, Result<bool, sqlx::Error>> {
    Box::pin(async move {
        let clean = is_outside_transaction(conn).await?;
        if !clean {
            metrics::counter!("atelier_db_connections_discarded_in_transaction_total").increment(1);
            tracing::warn!("a pooled connection came back inside a transaction; closed it (its work is rolled back)");
        }
        Ok(clean)
    })
}
