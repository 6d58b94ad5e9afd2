//! A real S3-compatible server for the tests: moto's server (PyPI
//! `moto[server]`, a standalone HTTP process speaking the S3 API, signed
//! requests, presigned URLs and all), started by the tests in the shared
//! virtual environment, one per test; and a TCP proxy in front of it that a
//! test can cut, to make the store unreachable mid-upload or mid-download.
//!
//! Chosen over `s3s-fs` (crates.io): moto is a maintained, widely used S3
//! emulator that installs in seconds from PyPI, where building `s3s-fs`
//! would add minutes to every clean CI run.

use std::process::{Child, Command, Stdio};
use std::sync::atomic::{AtomicU8, AtomicUsize, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tokio::io::{AsyncReadExt, AsyncWriteExt};

/// The moto release the tests run.
const MOTO: &str = "moto[server]==5.2.6";

/// A running S3 server; stopped when dropped.
pub struct S3Server {
    child: Child,
    /// Its address, e.g. `http://127.0.0.1:41234`.
    pub endpoint: String,
}

impl S3Server {
    /// Starts a server (installing moto once); `None`, said, where Python
    /// is missing (CI's `ATELIER_REQUIRE_PYTHON` makes that a failure).
    pub async fn start() -> Option<Self> {
        let python = super::python_with(&[MOTO]);
        let Some(python) = python else {
            super::say_skipped("object storage: python3 with venv not found for the S3 server (moto)");
            return None;
        };
        let port = std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port();
        let child = Command::new(python)
            .args(["-m", "moto.server", "-H", "127.0.0.1", "-p", &port.to_string()])
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .expect("moto server starts");
        let endpoint = format!("http://127.0.0.1:{port}");
        let deadline = Instant::now() + Duration::from_secs(60);
        while reqwest::get(format!("{endpoint}/")).await.is_err() {
            assert!(Instant::now() < deadline, "the S3 server did not come up");
            tokio::time::sleep(Duration::from_millis(100)).await;
        }
        Some(Self { child, endpoint })
    }

    /// Makes a bucket.
    pub async fn bucket(&self, name: &str) {
        let resp = reqwest::Client::new().put(format!("{}/{name}", self.endpoint)).send().await.expect("create bucket");
        assert!(resp.status().is_success(), "create bucket: {}", resp.status());
    }

    /// The AWS environment a service would be given for this server (or a
    /// proxy in front of it at `endpoint`).
    pub fn vars(endpoint: &str) -> Vec<(String, String)> {
        [
            ("AWS_ENDPOINT_URL", endpoint),
            ("AWS_ALLOW_HTTP", "true"),
            ("AWS_REGION", "us-east-1"),
            ("AWS_ACCESS_KEY_ID", "test-key"),
            ("AWS_SECRET_ACCESS_KEY", "test-secret"),
        ]
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).to_owned()))
        .collect()
    }

    /// A store on `bucket/prefix` of this server.
    pub fn storage(&self, bucket: &str, prefix: &str, redirect: bool) -> atelier::storage::Storage {
        let location = atelier::storage::Location::S3 { bucket: bucket.into(), prefix: prefix.into() };
        atelier::storage::Storage::open(&location, &Self::vars(&self.endpoint), redirect).expect("an S3 store")
    }
}

impl Drop for S3Server {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// What the proxy does with the traffic.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Fault {
    /// Everything passes.
    None = 0,
    /// Connections are closed as soon as they are accepted (the store is unreachable).
    Refuse = 1,
    /// Each connection is cut once this many bytes have gone either way.
    CutAfter = 2,
}

/// A TCP proxy in front of the S3 server that a test can cut.
pub struct FaultProxy {
    /// Its address, to give the service as the store's endpoint.
    pub endpoint: String,
    mode: Arc<AtomicU8>,
    budget: Arc<AtomicUsize>,
}

impl FaultProxy {
    /// Starts a proxy to `upstream` (`http://host:port`).
    pub async fn start(upstream: &str) -> Self {
        let upstream = upstream.trim_start_matches("http://").to_owned();
        let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
        let endpoint = format!("http://{}", listener.local_addr().expect("addr"));
        let mode = Arc::new(AtomicU8::new(Fault::None as u8));
        let budget = Arc::new(AtomicUsize::new(usize::MAX));
        let (m, b) = (mode.clone(), budget.clone());
        tokio::spawn(async move {
            while let Ok((client, _)) = listener.accept().await {
                let (mode, upstream, budget) = (m.load(Ordering::SeqCst), upstream.clone(), b.load(Ordering::SeqCst));
                tokio::spawn(async move {
                    if mode == Fault::Refuse as u8 {
                        drop(client);
                        return;
                    }
                    let Ok(server) = tokio::net::TcpStream::connect(&upstream).await else { return };
                    let limit = if mode == Fault::CutAfter as u8 { budget } else { usize::MAX };
                    pipe(client, server, limit).await;
                });
            }
        });
        Self { endpoint, mode, budget }
    }

    /// Lets everything through again.
    pub fn heal(&self) {
        self.mode.store(Fault::None as u8, Ordering::SeqCst);
    }

    /// Makes the store unreachable.
    pub fn refuse(&self) {
        self.mode.store(Fault::Refuse as u8, Ordering::SeqCst);
    }

    /// Cuts every new connection after `bytes` bytes.
    pub fn cut_after(&self, bytes: usize) {
        self.budget.store(bytes, Ordering::SeqCst);
        self.mode.store(Fault::CutAfter as u8, Ordering::SeqCst);
    }
}

/// Copies both ways until either side closes or `limit` bytes have passed
/// (counted over both directions); then both connections are dropped.
async fn pipe(client: tokio::net::TcpStream, server: tokio::net::TcpStream, limit: usize) {
    let passed = Arc::new(AtomicUsize::new(0));
    let (client_read, client_write) = client.into_split();
    let (server_read, server_write) = server.into_split();
    let up = tokio::spawn(one_way(client_read, server_write, passed.clone(), limit));
    let down = tokio::spawn(one_way(server_read, client_write, passed, limit));
    // Either direction ending ends the connection.
    tokio::select! {
        _ = up => {}
        _ = down => {}
    }
}

/// One direction of [`pipe`].
async fn one_way(
    mut from: tokio::net::tcp::OwnedReadHalf,
    mut to: tokio::net::tcp::OwnedWriteHalf,
    passed: Arc<AtomicUsize>,
    limit: usize,
) {
    let mut buf = vec![0u8; 16 * 1024];
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => break,
            Ok(n) => n,
        };
        let before = passed.fetch_add(n, Ordering::SeqCst);
        let allowed = limit.saturating_sub(before).min(n);
        if allowed > 0 && to.write_all(&buf[..allowed]).await.is_err() {
            break;
        }
        if allowed < n {
            break;
        }
    }
}
