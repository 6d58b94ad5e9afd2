//! The server loop (`http::listen`): a connection that does not finish a
//! request head in time, or sits idle, is closed; a request being served is
//! not cut by that timeout; handlers see the peer's address.

use axum::extract::ConnectInfo;
use axum::routing::get;
use axum::Router;
use std::net::SocketAddr;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, TcpStream};

const HEADER_TIMEOUT: Duration = Duration::from_millis(500);

async fn server() -> SocketAddr {
    let router = Router::new()
        .route("/peer", get(|ConnectInfo(peer): ConnectInfo<SocketAddr>| async move { peer.to_string() }))
        .route(
            "/slow",
            get(|| async {
                tokio::time::sleep(HEADER_TIMEOUT * 3).await;
                "finished"
            }),
        );
    let listener = TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let addr = listener.local_addr().expect("addr");
    tokio::spawn(atelier::http::listen::serve_with_header_timeout(
        listener,
        router,
        HEADER_TIMEOUT,
        std::future::pending(),
    ));
    addr
}

/// Reads until the server closes the connection; what it sent. Fails if
/// the connection is still open after `within`.
async fn read_until_closed(stream: &mut TcpStream, within: Duration) -> String {
    let mut text = Vec::new();
    tokio::time::timeout(within, stream.read_to_end(&mut text))
        .await
        .expect("the server closed the connection")
        .expect("read");
    String::from_utf8_lossy(&text).into_owned()
}

#[tokio::test]
async fn slow_and_idle_connections_are_closed_and_requests_in_progress_are_not() {
    let addr = server().await;

    // A request head that never ends.
    let mut partial = TcpStream::connect(addr).await.expect("connect");
    partial.write_all(b"GET /peer HTTP/1.1\r\nHost: x\r\n").await.expect("write");
    let sent = read_until_closed(&mut partial, HEADER_TIMEOUT * 10).await;
    assert!(!sent.contains("200 OK"), "no response to a request never finished: {sent}");

    // A connection that never says anything.
    let mut idle = TcpStream::connect(addr).await.expect("connect");
    read_until_closed(&mut idle, HEADER_TIMEOUT * 10).await;

    // A request whose handler takes longer than the header timeout finishes,
    // and the handler saw this connection's address; the connection, idle
    // after the response, is then closed too.
    let mut slow = TcpStream::connect(addr).await.expect("connect");
    let me = slow.local_addr().expect("local addr");
    slow.write_all(b"GET /slow HTTP/1.1\r\nHost: x\r\n\r\nGET /peer HTTP/1.1\r\nHost: x\r\n\r\n").await.expect("write");
    let sent = read_until_closed(&mut slow, HEADER_TIMEOUT * 20).await;
    assert!(sent.starts_with("HTTP/1.1 200 OK") && sent.contains("finished"), "{sent}");
    assert!(sent.contains(&me.to_string()), "the handler saw the peer {me}: {sent}");
}
