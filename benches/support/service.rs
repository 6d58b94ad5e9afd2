//! The release service as a separate process, for the harnesses: started on
//! a data directory of its own (embedded PostgreSQL), driven over loopback,
//! killed and restarted at will.

// Each harness uses part of it.
#![allow(dead_code)]

use serde_json::Value;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// The service's binary (also the command line).
pub const BIN: &str = env!("CARGO_BIN_EXE_atelier");

/// Where the service lives and how to reach it.
pub struct Harness {
    /// The data directory (cluster in `postgres/`).
    pub data_dir: PathBuf,
    /// Loopback port.
    pub port: u16,
    /// The service's log file.
    pub log: PathBuf,
}

impl Harness {
    /// An address on the service.
    pub fn url(&self, path: &str) -> String {
        format!("http://127.0.0.1:{}{path}", self.port)
    }

    /// Runs an `atelier` command on the data directory; its standard output.
    pub fn cli(&self, args: &[&str], stdin: Option<&str>) -> String {
        let mut child = Command::new(BIN)
            .args(args)
            .arg("--data-dir")
            .arg(&self.data_dir)
            .env_remove("DATABASE_URL")
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("atelier runs");
        if let Some(text) = stdin {
            use std::io::Write;
            child.stdin.take().expect("stdin").write_all(text.as_bytes()).expect("stdin");
        }
        let out = child.wait_with_output().expect("atelier ends");
        assert!(out.status.success(), "atelier {args:?}: {}", String::from_utf8_lossy(&out.stderr));
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Starts `atelier serve`.
    pub fn serve(&self) -> Child {
        self.serve_with(&[], &[])
    }

    /// Starts `atelier serve` with more arguments and environment.
    pub fn serve_with(&self, args: &[&str], env: &[(String, String)]) -> Child {
        let log = std::fs::OpenOptions::new().create(true).append(true).open(&self.log).expect("log");
        Command::new(BIN)
            .args(["serve", "--bind", &format!("127.0.0.1:{}", self.port), "--data-dir"])
            .arg(&self.data_dir)
            .args(args)
            .envs(env.iter().map(|(k, v)| (k, v)))
            .env_remove("DATABASE_URL")
            .env("RUST_LOG", "warn")
            .stdout(log.try_clone().expect("log"))
            .stderr(log)
            .spawn()
            .expect("atelier serve")
    }

    /// Seconds until `/readyz` answers 200.
    pub async fn ready(&self, client: &reqwest::Client) -> f64 {
        let start = Instant::now();
        while start.elapsed() < Duration::from_secs(120) {
            if client.get(self.url("/readyz")).send().await.is_ok_and(|r| r.status().is_success()) {
                return start.elapsed().as_secs_f64();
            }
            tokio::time::sleep(Duration::from_millis(50)).await;
        }
        panic!("the service did not become ready in 120 s (log: {})", self.log.display());
    }

    /// The running PostgreSQL's process id.
    pub fn postmaster_pid(&self) -> i32 {
        let text = std::fs::read_to_string(self.data_dir.join("postgres/postmaster.pid")).expect("postmaster.pid");
        text.lines().next().and_then(|l| l.trim().parse().ok()).expect("pid")
    }
}

/// Sends a signal to a process.
pub fn signal(pid: i32, signal: nix::sys::signal::Signal) {
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(pid), signal).expect("signal");
}

/// A free loopback port.
pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("port").local_addr().expect("addr").port()
}

/// POSTs JSON as the admin; the reply, which must be a success.
pub async fn admin(client: &reqwest::Client, h: &Harness, token: &str, path: &str, body: Value) -> Value {
    let r = client.post(h.url(path)).bearer_auth(token).json(&body).send().await.expect("admin request");
    let status = r.status();
    let body: Value = r.json().await.unwrap_or(Value::Null);
    assert!(status.is_success(), "{path}: {status} {body}");
    body
}

/// A fresh service in `dir` with an admin account: the harness, the admin's
/// API token and the running process.
pub async fn start(dir: &std::path::Path, http: &reqwest::Client) -> (Harness, String, Child) {
    let h = Harness { data_dir: dir.join("data"), port: free_port(), log: dir.join("service.log") };
    h.cli(&["user", "add", "--role", "admin", "--name", "harness", "--password-stdin"], Some("harness-password-1\n"));
    let token = h.cli(&["token", "create", "--user", "harness"], None).trim().to_owned();
    let child = h.serve();
    h.ready(http).await;
    (h, token, child)
}

/// A browser-like client (cookies kept, redirects not followed) logged in
/// as the harness's admin through the login page.
pub async fn logged_in_browser(h: &Harness) -> reqwest::Client {
    let browser = reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build();
    let browser = browser.expect("client");
    let login = browser.get(h.url("/login")).send().await.expect("login page").text().await.expect("html");
    let marker = "name=\"csrf_token\" value=\"";
    let at = login.find(marker).expect("csrf") + marker.len();
    let csrf = login[at..at + 32].to_owned();
    let r = browser
        .post(h.url("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "harness"), ("password", "harness-password-1")])
        .send()
        .await
        .expect("login");
    assert_eq!(r.status().as_u16(), 303, "logged in");
    browser
}

/// The service's resident memory now and at its peak (since the last
/// [`reset_peak`]), in MB.
pub fn rss_mb(pid: u32) -> (f64, f64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    let field = |name: &str| {
        status
            .lines()
            .find(|l| l.starts_with(name))
            .and_then(|l| l.split_whitespace().nth(1))
            .and_then(|v| v.parse::<f64>().ok())
            .map_or(f64::NAN, |kb| kb / 1024.0)
    };
    (field("VmRSS:"), field("VmHWM:"))
}

/// Starts measuring the peak resident memory afresh (Linux `clear_refs` 5).
pub fn reset_peak(pid: u32) {
    let _ = std::fs::write(format!("/proc/{pid}/clear_refs"), "5");
}
