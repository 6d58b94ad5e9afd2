//! The time a request may take (`http::request_time`): a request that runs
//! out of it gets 408; an upload bigger than an ordinary body, once the
//! caller is known to be an admin, gets the longer upload time.

use atelier::http::request_time::{allow_admin_upload, limit, RequestTime};
use axum::extract::Request;
use axum::routing::post;
use axum::Router;
use reqwest::StatusCode;
use std::time::Duration;

const WORK: Duration = Duration::from_millis(600);

async fn server() -> String {
    let time = RequestTime { ordinary: Duration::from_millis(200), upload: Duration::from_secs(2) };
    // `/upload` stands for an admin's import: it grants the upload time as the admin extractor does.
    let router = Router::new()
        .route(
            "/work",
            post(|body: axum::body::Bytes| async move {
                tokio::time::sleep(WORK).await;
                format!("done with {} bytes", body.len())
            }),
        )
        .route(
            "/upload",
            post(|req: Request| async move {
                let (parts, body) = req.into_parts();
                allow_admin_upload(&parts);
                // An import reads its whole body before it works on it.
                axum::body::to_bytes(body, usize::MAX).await.expect("the body arrives");
                let how_long = parts.headers.get("x-work-ms").and_then(|v| v.to_str().ok()?.parse().ok());
                tokio::time::sleep(how_long.map_or(WORK, Duration::from_millis)).await;
                "stored"
            }),
        )
        .layer(axum::extract::DefaultBodyLimit::disable())
        .layer(axum::middleware::from_fn_with_state(time, limit));
    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    tokio::spawn(atelier::http::listen::serve(listener, router, std::future::pending()));
    url
}

async fn post_body(url: &str, path: &str, body: Vec<u8>, work_ms: Option<u64>) -> StatusCode {
    let mut req = reqwest::Client::new().post(format!("{url}{path}")).body(body);
    if let Some(ms) = work_ms {
        req = req.header("x-work-ms", ms.to_string());
    }
    req.send().await.expect("post").status()
}

#[tokio::test]
async fn requests_get_their_time_and_an_admins_large_upload_gets_more() {
    let url = server().await;
    let large = vec![b'x'; atelier::http::MAX_BODY + 1];
    assert_eq!(post_body(&url, "/work", b"{}".to_vec(), None).await, StatusCode::REQUEST_TIMEOUT, "ordinary time");
    assert_eq!(
        post_body(&url, "/work", large.clone(), None).await,
        StatusCode::REQUEST_TIMEOUT,
        "a large body alone earns no more time"
    );
    assert_eq!(
        post_body(&url, "/upload", b"small".to_vec(), None).await,
        StatusCode::REQUEST_TIMEOUT,
        "a small upload has the ordinary time"
    );
    assert_eq!(post_body(&url, "/upload", large.clone(), None).await, StatusCode::OK, "a large upload's time");
    assert_eq!(
        post_body(&url, "/upload", large, Some(3_000)).await,
        StatusCode::REQUEST_TIMEOUT,
        "and no more than that"
    );
}
