//! Running the service: bind, serve, and shut down gracefully on SIGINT or
//! SIGTERM (in-flight requests finish, then the database is closed).

use crate::db::Database;
use crate::http::{app, AppState, HttpConfig};
use tokio::net::TcpListener;

/// Serves until a shutdown signal, then closes the database (stopping the
/// embedded cluster if this process started it).
pub async fn serve(db: Database, listener: TcpListener, config: HttpConfig) -> anyhow::Result<()> {
    raise_open_file_limit();
    let state = AppState::new(db.pool.clone(), config, crate::kinds::registry(), crate::kinds::pages());
    let tasks = state.tasks.clone();
    let addr = listener.local_addr()?;
    // Expired sessions and old login failures are deleted hourly, so neither table grows forever.
    let store = tower_sessions_sqlx_store::PostgresStore::new(db.pool.clone());
    let pool = db.pool.clone();
    let cleanup = tokio::spawn(async move {
        let mut hourly = tokio::time::interval(std::time::Duration::from_secs(3600));
        loop {
            hourly.tick().await;
            use tower_sessions::session_store::ExpiredDeletion as _;
            if let Err(e) = store.delete_expired().await {
                tracing::warn!(error = %e, "deleting expired sessions failed");
            }
            if let Err(e) = crate::auth::rate_limit::LoginLimiter::prune(&pool).await {
                tracing::warn!(error = %e, "pruning login failures failed");
            }
        }
    });
    tracing::info!(%addr, "serving");
    crate::http::listen::serve(listener, app(state, crate::kinds::routes()), shutdown_signal()).await;
    tracing::info!("shutting down");
    cleanup.abort();
    // Requests whose clients left are still running on their own tasks.
    tasks.close();
    tasks.wait().await;
    db.close().await;
    Ok(())
}

/// Every connection is an open file: with the soft limit many systems start
/// a service with (1,024), a load of a thousand clients would find
/// connections refused while the machine had room for many more. The soft
/// limit is raised to the hard one, as most servers do.
fn raise_open_file_limit() {
    match rlimit::increase_nofile_limit(u64::MAX) {
        Ok(limit) => tracing::debug!(open_files = limit, "open-file limit"),
        Err(error) => tracing::warn!(%error, "raising the open-file limit failed"),
    }
}

async fn shutdown_signal() {
    let ctrl_c = async {
        if tokio::signal::ctrl_c().await.is_err() {
            std::future::pending::<()>().await;
        }
    };
    let term = async {
        match tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate()) {
            Ok(mut s) => {
                s.recv().await;
            }
            Err(_) => std::future::pending::<()>().await,
        }
    };
    tokio::select! { _ = ctrl_c => {}, _ = term => {} }
}
