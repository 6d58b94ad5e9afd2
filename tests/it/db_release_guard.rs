//! The pool never hands out a connection left inside a transaction, even when
//! sqlx itself loses track of one (a `BEGIN` whose answer was never read).

use crate::support::TestApp;
use futures_util::FutureExt;
use sqlx::{Connection, PgConnection};

#[tokio::test]
async fn a_begin_dropped_in_flight_leaves_no_transaction_behind_for_the_next_borrower() {
    let app = TestApp::spawn().await;
    // One connection, so the next borrower gets exactly the one that was abandoned.
    let pool = atelier::db::pool_options(1).connect_with(app.db_options.clone()).await.expect("pool");
    sqlx::query("CREATE TABLE acknowledged (n INTEGER PRIMARY KEY)").execute(&pool).await.expect("table");
    let mut observer = PgConnection::connect_with(&app.db_options).await.expect("observer");

    // How often BEGIN is still unanswered after one poll depends on the
    // machine's load: go on until enough were abandoned in flight.
    let mut abandoned = 0;
    for n in 0..5000 {
        if abandoned >= 20 {
            break;
        }
        {
            let mut conn = pool.acquire().await.expect("acquire");
            // One poll sends BEGIN and waits for its answer; dropping the
            // future then is what a client disconnect does to a handler.
            // (Rarely the answer is already there and BEGIN completes.)
            if conn.begin().now_or_never().is_none() {
                abandoned += 1;
            }
        }
        // The next borrower writes outside any transaction and is acknowledged...
        sqlx::query("INSERT INTO acknowledged (n) VALUES ($1)").bind(n).execute(&pool).await.expect("insert");
        // ...so the write must be visible to everyone else at once.
        let seen: i64 = sqlx::query_scalar("SELECT count(*) FROM acknowledged WHERE n = $1")
            .bind(n)
            .fetch_one(&mut observer)
            .await
            .expect("count");
        assert_eq!(seen, 1, "write {n} was acknowledged but is not committed");
    }
    eprintln!("abandoned {abandoned}");
    assert!(abandoned >= 20, "the test abandoned only {abandoned} BEGINs in flight");
    let stuck: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_stat_activity WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
    )
    .fetch_one(&mut observer)
    .await
    .expect("activity");
    assert_eq!(stuck, 0, "no connection is left idle in transaction");
}

#[tokio::test]
async fn the_transaction_check_tells_a_clean_connection_from_one_inside_a_block() {
    let app = TestApp::spawn().await;
    let mut conn = PgConnection::connect_with(&app.db_options).await.expect("connect");
    use atelier::db::release_guard::is_outside_transaction;
    assert!(is_outside_transaction(&mut conn).await.expect("check"), "a fresh connection is clean");
    sqlx::raw_sql("BEGIN").execute(&mut conn).await.expect("begin");
    assert!(!is_outside_transaction(&mut conn).await.expect("check"), "inside a block");
    sqlx::raw_sql("SELECT 1/0").execute(&mut conn).await.expect_err("division by zero");
    assert!(!is_outside_transaction(&mut conn).await.expect("check"), "inside a failed block");
    sqlx::raw_sql("ROLLBACK").execute(&mut conn).await.expect("rollback");
    assert!(is_outside_transaction(&mut conn).await.expect("check"), "clean again after ROLLBACK");
    let mut tx = conn.begin().await.expect("sqlx transaction");
    assert!(!is_outside_transaction(&mut tx).await.expect("check"), "inside sqlx's own transaction");
    tx.rollback().await.expect("rollback");
}
