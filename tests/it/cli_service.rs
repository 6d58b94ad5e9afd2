//! The service as a newcomer runs it: `atelier serve` with no database
//! configured starts its own PostgreSQL, CLI subcommands work beside it,
//! SIGTERM stops everything, and a restart finds the data intact.

use crate::cli_stats::atelier;
use std::io::Write;
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0").expect("bind").local_addr().expect("addr").port()
}

pub fn start(data_dir: &str, port: u16) -> Child {
    start_logging(data_dir, port, None)
}

/// Starts the service; its log (standard error) goes to `log` if given.
fn start_logging(data_dir: &str, port: u16, log: Option<&std::path::Path>) -> Child {
    let stderr = match log {
        Some(path) => Stdio::from(std::fs::File::create(path).expect("log file")),
        None => Stdio::null(),
    };
    // Started with a low soft limit on open files, as many systems start services.
    Command::new("sh")
        .args(["-c", "ulimit -Sn 256 2>/dev/null; exec \"$0\" \"$@\"", env!("CARGO_BIN_EXE_atelier")])
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--data-dir", data_dir])
        .env_remove("DATABASE_URL")
        .env_remove("RUST_LOG")
        .stdout(Stdio::null())
        .stderr(stderr)
        .spawn()
        .expect("atelier serve starts")
}

pub async fn wait_ready(port: u16, child: &mut Child) {
    let deadline = Instant::now() + Duration::from_secs(90);
    while Instant::now() < deadline {
        if let Ok(r) = reqwest::get(format!("http://127.0.0.1:{port}/readyz")).await {
            if r.status().is_success() {
                return;
            }
        }
        assert!(child.try_wait().expect("status").is_none(), "atelier serve exited early");
        tokio::time::sleep(Duration::from_millis(200)).await;
    }
    panic!("atelier serve did not become ready");
}

pub fn terminate(mut child: Child) {
    let pid = nix::unistd::Pid::from_raw(child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).expect("SIGTERM");
    let status = child.wait().expect("exit");
    assert!(status.success(), "clean exit on SIGTERM: {status:?}");
}

fn postgres_running_in(dir: &str) -> bool {
    let out = Command::new("pgrep").args(["-f", &format!("postgres.*{dir}")]).output().expect("pgrep");
    !out.stdout.is_empty()
}

pub fn cli(args: &[&str], stdin: Option<&str>) -> (bool, String, String) {
    let mut child = Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(args)
        .env_remove("DATABASE_URL")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("cli");
    if let Some(input) = stdin {
        child.stdin.take().expect("stdin").write_all(input.as_bytes()).expect("write");
    }
    let out = child.wait_with_output().expect("output");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

#[tokio::test]
async fn serve_starts_its_own_postgres_stops_cleanly_and_restarts_with_data_intact() {
    // A directory the postgres user can reach, also when the tests run as root.
    let base = std::env::temp_dir().join(format!("atelier-serve-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&base).expect("dir");
    let data_dir = base.join("pg").to_string_lossy().into_owned();

    let port = free_port();
    let mut child = start(&data_dir, port);
    wait_ready(port, &mut child).await;
    assert!(postgres_running_in(&data_dir));
    // It raised its soft limit on open files (connections) to the hard one.
    let limits = std::fs::read_to_string(format!("/proc/{}/limits", child.id())).expect("limits");
    let open_files: Vec<&str> =
        limits.lines().find(|l| l.starts_with("Max open files")).expect("open files").split_whitespace().collect();
    assert_eq!(open_files[3], open_files[4], "soft limit raised to the hard one: {limits}");

    // CLI subcommands use the running cluster.
    let (ok, out, err) = cli(
        &["user", "add", "--role", "admin", "--name", "ops", "--password-stdin", "--data-dir", &data_dir],
        Some("long-enough-pw\n"),
    );
    assert!(ok, "{out}{err}");
    let (ok, token, err) = cli(&["token", "create", "--user", "ops", "--data-dir", &data_dir], None);
    assert!(ok, "{err}");
    let token = token.trim().to_owned();
    let client = reqwest::Client::new();
    let created = client
        .post(format!("http://127.0.0.1:{port}/api/v1/admin/campaigns"))
        .bearer_auth(&token)
        .json(&serde_json::json!({"kind": "vton", "name": "survives restarts"}))
        .send()
        .await
        .expect("create");
    assert_eq!(created.status(), reqwest::StatusCode::CREATED);
    let (ok, _, err) = cli(
        &["user", "add", "--role", "admin", "--name", "ops", "--password-stdin", "--data-dir", &data_dir],
        Some("long-enough-pw\n"),
    );
    assert!(!ok && err.contains("already exists"), "{err}");

    terminate(child);
    assert!(!postgres_running_in(&data_dir), "no PostgreSQL left behind");
    // --data-dir is Atelier's directory: the cluster lives in postgres/ inside it.
    let cluster = base.join("pg").join("postgres");
    assert!(cluster.join("PG_VERSION").exists(), "the cluster is in <data-dir>/postgres");

    // The earlier layout (--data-dir pointing at the cluster itself) is still recognised.
    let port = free_port();
    let log = base.join("service.log");
    let mut child = start_logging(cluster.to_str().expect("path"), port, Some(&log));
    wait_ready(port, &mut child).await;
    // One log line per request, by route template: invitation tokens never reach the log.
    let secret = "Tok3nThatMustNotBeLogged";
    client.get(format!("http://127.0.0.1:{port}/join/{secret}?worker_id=w")).send().await.expect("join");
    let list: serde_json::Value = client
        .get(format!("http://127.0.0.1:{port}/api/v1/admin/campaigns"))
        .bearer_auth(&token)
        .send()
        .await
        .expect("list")
        .json()
        .await
        .expect("json");
    assert_eq!(list[0]["name"], "survives restarts");
    terminate(child);
    let logged = std::fs::read_to_string(&log).expect("log");
    assert!(!logged.contains(secret), "{logged}");
    let line = logged.lines().find(|l| l.contains("route=/join/{token}")).unwrap_or_else(|| panic!("{logged}"));
    assert!(line.contains("status=404") && line.contains("method=GET") && line.contains("request_id="), "{line}");
    assert!(line.contains("latency_ms="), "{line}");
    assert!(!postgres_running_in(&data_dir));
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_bad_database_url_is_reported_clearly() {
    let (ok, _, err) = atelier(&["migrate", "--database-url", "postgres://nobody@127.0.0.1:1/none"]);
    assert!(!ok);
    assert!(err.contains("error:") && err.contains("database"), "{err}");
}

/// The postmaster's pid from its pid file.
fn postmaster_pid(cluster: &std::path::Path) -> i32 {
    let text = std::fs::read_to_string(cluster.join("postmaster.pid")).expect("postmaster.pid");
    text.lines().next().and_then(|l| l.trim().parse().ok()).expect("pid")
}

#[tokio::test]
async fn the_service_restarts_a_dead_postgres_and_adopts_one_a_killed_service_left() {
    let base = std::env::temp_dir().join(format!("atelier-supervise-{}", uuid::Uuid::new_v4().simple()));
    std::fs::create_dir_all(&base).expect("dir");
    let data_dir = base.join("d").to_string_lossy().into_owned();
    let cluster = base.join("d").join("postgres");
    let port = free_port();
    let mut child = start(&data_dir, port);
    wait_ready(port, &mut child).await;
    let client = reqwest::Client::new();
    let ready = |port: u16| {
        let client = client.clone();
        async move {
            client.get(format!("http://127.0.0.1:{port}/readyz")).send().await.map(|r| r.status().as_u16()).unwrap_or(0)
        }
    };

    // PostgreSQL dies under the service: readiness says so at once (503 with
    // Retry-After, never 500), and the service brings it back by itself.
    let pid = nix::unistd::Pid::from_raw(postmaster_pid(&cluster));
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGKILL).expect("kill postgres");
    let started = Instant::now();
    let mut saw_unavailable = false;
    loop {
        let resp = client.get(format!("http://127.0.0.1:{port}/readyz")).send().await.expect("readyz");
        let status = resp.status().as_u16();
        assert_ne!(status, 500, "never a 500 while the database is away");
        if status == 503 {
            saw_unavailable = true;
            assert!(resp.headers().contains_key("retry-after"));
        }
        if status == 200 && saw_unavailable {
            break;
        }
        assert!(started.elapsed() < Duration::from_secs(60), "PostgreSQL came back");
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    assert!(saw_unavailable, "the outage showed in /readyz");

    // The service is killed outright: PostgreSQL stays behind. The next
    // service adopts it and stops it on SIGTERM.
    nix::sys::signal::kill(nix::unistd::Pid::from_raw(child.id() as i32), nix::sys::signal::Signal::SIGKILL)
        .expect("kill -9");
    child.wait().expect("reaped");
    assert!(postgres_running_in(&data_dir), "a killed service leaves PostgreSQL running");
    let port = free_port();
    let mut child = start(&data_dir, port);
    wait_ready(port, &mut child).await;
    assert_eq!(ready(port).await, 200);
    terminate(child);
    assert!(!postgres_running_in(&data_dir), "the adopted cluster is stopped with the service");
    let _ = std::fs::remove_dir_all(&base);
}

#[test]
fn a_private_data_directory_works_and_a_closed_parent_moves_only_the_cluster() {
    use std::os::unix::fs::PermissionsExt;
    if !nix_is_root() {
        crate::support::say_skipped(
            "data directory permissions: only meaningful as root (the postgres user runs the cluster)",
        );
        return;
    }
    // As `mktemp -d` makes it: empty, mode 0700.
    let private = tempfile::Builder::new().prefix("atelier-private-").tempdir().expect("tempdir");
    std::fs::set_permissions(private.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let dir = private.path().to_string_lossy().into_owned();
    let (ok, out, err) = migrate_and_stop(&dir);
    assert!(ok, "{out}{err}");
    assert!(private.path().join("postgres/PG_VERSION").exists(), "the cluster in <data-dir>/postgres");
    let mode = std::fs::metadata(private.path()).expect("meta").permissions().mode() & 0o777;
    assert_eq!(mode, 0o711, "traversable, not listable");

    // Under a parent closed to others (as a checkout under /root): the cluster moves, and the log says where.
    let closed = tempfile::Builder::new().prefix("atelier-closed-").tempdir().expect("tempdir");
    std::fs::set_permissions(closed.path(), std::fs::Permissions::from_mode(0o700)).expect("chmod");
    let data = closed.path().join("checkout/data");
    let dir = data.to_string_lossy().into_owned();
    let (ok, out, err) = migrate_and_stop(&dir);
    assert!(ok, "{out}{err}");
    assert!(err.contains("/var/lib/atelier"), "says where the cluster went: {err}");
    let fallback = atelier::db::embedded::fallback_cluster_dir(&data);
    assert!(fallback.join("PG_VERSION").exists(), "{}", fallback.display());
    assert_eq!(
        std::fs::metadata(closed.path()).expect("meta").permissions().mode() & 0o777,
        0o700,
        "not ours: untouched"
    );
    let _ = std::fs::remove_dir_all(fallback.parent().expect("parent"));
}

fn nix_is_root() -> bool {
    std::fs::metadata("/proc/self").map(|m| std::os::unix::fs::MetadataExt::uid(&m) == 0).unwrap_or(false)
}

/// `atelier migrate` on an embedded cluster in `dir` (it starts the cluster and stops it again).
fn migrate_and_stop(dir: &str) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(["migrate", "--data-dir", dir])
        .env_remove("DATABASE_URL")
        .env("RUST_LOG", "atelier=info")
        .output()
        .expect("runs");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into(), String::from_utf8_lossy(&out.stderr).into())
}
