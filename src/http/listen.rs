//! Accepting connections: the application's router on hyper's HTTP/1
//! server, with the timeout axum's own `serve` leaves out. A client that
//! opens a connection and does not finish a request head within
//! [`HEADER_READ_TIMEOUT`] (a slow or idle client, or a keep-alive
//! connection left idle that long) is disconnected, so such clients cannot
//! hold the process's file descriptors. Requests being served are not
//! limited by it.

use axum::Router;
use hyper_util::rt::{TokioIo, TokioTimer};
use hyper_util::server::graceful::GracefulShutdown;
use hyper_util::service::TowerToHyperService;
use std::future::Future;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::net::TcpListener;
use tower::Service;

/// How long a connection may take to send a request's head, counted from
/// when the server starts waiting for it (also after each response).
pub const HEADER_READ_TIMEOUT: Duration = Duration::from_secs(20);

/// Serves `router` on `listener` until `shutdown` completes; then stops
/// accepting, lets in-flight requests finish and closes idle connections.
/// Handlers see the peer's address as `ConnectInfo<SocketAddr>`.
pub async fn serve(listener: TcpListener, router: Router, shutdown: impl Future<Output = ()>) {
    serve_with_header_timeout(listener, router, HEADER_READ_TIMEOUT, shutdown).await;
}

/// [`serve`] with another header-read timeout (tests use a short one).
pub async fn serve_with_header_timeout(
    listener: TcpListener,
    router: Router,
    header_timeout: Duration,
    shutdown: impl Future<Output = ()>,
) {
    let mut make_service = router.into_make_service_with_connect_info::<SocketAddr>();
    let mut http = hyper::server::conn::http1::Builder::new();
    http.timer(TokioTimer::new()).header_read_timeout(header_timeout);
    let graceful = GracefulShutdown::new();
    let mut shutdown = std::pin::pin!(shutdown);
    loop {
        let (stream, peer) = tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok(accepted) => accepted,
                Err(error) => {
                    // Out of file descriptors, or a connection reset before it
                    // was accepted: wait a moment rather than spin.
                    tracing::warn!(%error, "accepting a connection failed");
                    tokio::time::sleep(Duration::from_millis(50)).await;
                    continue;
                }
            },
            () = &mut shutdown => break,
        };
        let service = match make_service.call(peer).await {
            Ok(service) => service,
            Err(never) => match never {},
        };
        let connection = http.serve_connection(TokioIo::new(stream), TowerToHyperService::new(service));
        let connection = graceful.watch(connection);
        tokio::spawn(async move {
            if let Err(error) = connection.await {
                tracing::debug!(%error, %peer, "connection ended with an error");
            }
        });
    }
    drop(listener);
    graceful.shutdown().await;
}
