//! Vote ingest against PostgreSQL's own speed on the same cluster: the real
//! service (in this process, on the embedded PostgreSQL) takes votes from
//! crowd workers' sessions over HTTP, and `pgbench` inserts single rows into
//! the same cluster; beside the API's votes, a browser's (the task form
//! posted, then the page it redirects to) and that cycle's floor (the API
//! vote, then the least a page that reads the database can be on this
//! stack, served by a route this bench adds to the service). Each
//! concurrency runs in rounds (pgbench, API, form, floor, back to back); the
//! medians of the rounds' ratios are printed. Run with `cargo bench --bench
//! vote_ingest` (about twenty minutes; `VOTE_BENCH_SECONDS` sets each run's
//! length, `VOTE_BENCH_CONNECTIONS` the concurrencies, "16,64" by default; `VOTE_BENCH_SQL` runs statements on
//! the database after its migrations, for experiments; `VOTE_BENCH_LOG=1` logs as
//! the binary does, a line per request on standard error; `VOTE_BENCH_KEEP=1` keeps the
//! cluster running at the end, its socket printed for `psql`, until Ctrl-C).
//!
//! The votes come from `wrk` (a second process, as `pgbench` is) when it is
//! installed, as in the audit that set the target; otherwise, or with
//! `VOTE_BENCH_CLIENT=reqwest`, from reqwest clients in this process, which
//! take a share of the same two cores.

#[path = "support/figures.rs"]
mod figures;

use atelier::core::item::new_item::NewItem;
use atelier::db::embedded::EmbeddedCluster;
use atelier::http::{app, AppState, HttpConfig};
use futures_util::StreamExt;
use serde_json::{json, Value};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// The allocator the `atelier` binary runs with, so that the service here
/// costs what it costs in production.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

const ITEMS_PER_WORKER: usize = 49;
/// pgbench clients at most: each is a PostgreSQL connection, and the
/// embedded cluster allows 200, some of them the service's.
const PGBENCH_MAX_CLIENTS: usize = 150;
/// Workers (each with 49 fresh tasks) given to each ingest run.
const WORKERS_PER_RUN: usize = 4_000;
/// Workers given to each run of the browser's form cycle and of its floor:
/// enough for 8 s of either at 64 connections on a fast day (an earlier,
/// cheaper floor made 11,200 cycles/s: 1,830 workers), so that no run ends
/// early with its connections falling idle one by one (1,000 ran out after
/// 4.5 s, which lowered the rate).
const FORM_WORKERS_PER_RUN: usize = 2_500;

/// Workers whose answers are sent again in each run of retries or changes
/// (9,800 tasks; the run goes round them again when it is through).
const RESEND_WORKERS: usize = 200;

/// One worker's session and their questionnaire.
struct Worker {
    client: reqwest::Client,
    /// The session cookie, as a `Cookie` header sends it.
    cookie: String,
    csrf: String,
    assignment: String,
    items: Vec<String>,
}

impl Worker {
    /// The API vote of `rating` on `item` (`change`: replacing an earlier one).
    fn vote(&self, url: &str, item: &str, rating: i64, change: bool) -> reqwest::RequestBuilder {
        self.client
            .post(format!("{url}/api/v1/work/assignments/{}/responses", self.assignment))
            .header(reqwest::header::COOKIE, &self.cookie)
            .header("x-csrf-token", &self.csrf)
            .json(&json!({"item_id": item, "answer": {"rating": rating}, "change": change}))
    }
}

/// A worker who joined by the invitation and took a questionnaire; the
/// client is shared (one connection pool for all workers), the session goes
/// in the `Cookie` header.
async fn worker(client: &reqwest::Client, url: &str, token: &str, campaign: &str, n: usize) -> Worker {
    let joined = client.get(format!("{url}/join/{token}?worker_id=bench-{n}")).send().await.expect("join");
    let cookie = joined
        .headers()
        .get_all(reqwest::header::SET_COOKIE)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("atelier_session="))
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_owned();
    let me: Value = client
        .get(format!("{url}/api/v1/me"))
        .header(reqwest::header::COOKIE, &cookie)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    let csrf = me["csrf_token"].as_str().expect("csrf").to_owned();
    let view: Value = client
        .post(format!("{url}/api/v1/work/campaigns/{campaign}/assignment"))
        .header(reqwest::header::COOKIE, &cookie)
        .header("x-csrf-token", &csrf)
        .json(&json!({}))
        .send()
        .await
        .expect("assignment")
        .json()
        .await
        .expect("json");
    Worker {
        assignment: view["assignment"]["id"]
            .as_str()
            .unwrap_or_else(|| panic!("worker {n} got no questionnaire: {view}"))
            .to_owned(),
        items: view["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["id"].as_str().expect("id").to_owned())
            .collect(),
        client: client.clone(),
        cookie,
        csrf,
    }
}

/// Votes from `clients` concurrent connections for `seconds`, each vote
/// once (each run gets its own workers); (votes/s, p50 ms, p99 ms).
async fn ingest(url: &str, workers: &mut Vec<Worker>, clients: usize, seconds: u64) -> (f64, f64, f64) {
    let batch: Vec<Worker> = workers.drain(..WORKERS_PER_RUN.max(clients).min(workers.len())).collect();
    match wrk() {
        Some(wrk) => ingest_wrk(&wrk, url, &batch, clients, seconds),
        None => ingest_reqwest(url, batch, clients, seconds).await,
    }
}

/// `wrk`, unless it is missing or reqwest was asked for.
fn wrk() -> Option<std::path::PathBuf> {
    if std::env::var("VOTE_BENCH_CLIENT").is_ok_and(|c| c == "reqwest") {
        return None;
    }
    std::env::var_os("PATH")?.to_str()?.split(':').map(|d| std::path::Path::new(d).join("wrk")).find(|p| p.is_file())
}

/// The votes of `batch` sent by wrk over `clients` connections (two threads):
/// the workers take turns, each answering their questionnaire in order.
fn ingest_wrk(wrk: &std::path::Path, url: &str, batch: &[Worker], clients: usize, seconds: u64) -> (f64, f64, f64) {
    let dir = tempfile::tempdir().expect("tempdir");
    let (votes, script) = (dir.path().join("votes.tsv"), dir.path().join("votes.lua"));
    let mut lines = String::new();
    for position in 0..ITEMS_PER_WORKER {
        for w in batch {
            if let Some(item) = w.items.get(position) {
                let body = json!({"item_id": item, "answer": {"rating": 2}});
                lines.push_str(&format!(
                    "/api/v1/work/assignments/{}/responses\t{}\t{}\t{body}\n",
                    w.assignment, w.cookie, w.csrf
                ));
            }
        }
    }
    std::fs::write(&votes, lines).expect("votes file");
    std::fs::write(&script, include_str!("support/votes.lua")).expect("script");
    let threads = 2.min(clients);
    let out = std::process::Command::new(wrk)
        .args([
            "-t",
            &threads.to_string(),
            "-c",
            &clients.to_string(),
            "-d",
            &format!("{seconds}s"),
            "--timeout",
            "10s",
            "-s",
        ])
        .arg(&script)
        .arg(url)
        .arg("--")
        .arg(&votes)
        .arg(threads.to_string())
        .output()
        .expect("wrk runs");
    let text = String::from_utf8_lossy(&out.stdout);
    let line = text
        .lines()
        .find(|l| l.starts_with("VOTES "))
        .unwrap_or_else(|| panic!("wrk: {text}{}", String::from_utf8_lossy(&out.stderr)));
    let field = |name: &str| -> f64 {
        line.split_whitespace()
            .find_map(|kv| kv.strip_prefix(name).and_then(|v| v.strip_prefix('=')))
            .and_then(|v| v.parse().ok())
            .unwrap_or_else(|| panic!("wrk: no {name} in {line}"))
    };
    if field("exhausted") > 0.0 {
        eprintln!("warning: wrk ran out of fresh votes; raise WORKERS_PER_RUN");
    }
    if field("non2xx") > 0.0 || field("errors") > 0.0 {
        eprintln!("warning: {line}");
    }
    (field("ok") / field("seconds"), field("p50_ms"), field("p99_ms"))
}

/// The same votes from reqwest clients in this process, one worker's
/// questionnaire after another on each connection.
async fn ingest_reqwest(url: &str, batch: Vec<Worker>, clients: usize, seconds: u64) -> (f64, f64, f64) {
    let queues = spread(batch, clients);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for queue in queues {
        let url = url.to_owned();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            'outer: for w in queue {
                for item in &w.items {
                    if Instant::now() >= deadline {
                        break 'outer;
                    }
                    let start = Instant::now();
                    let r = w.vote(&url, item, 2, false).send().await;
                    if r.is_ok_and(|r| r.status().is_success()) {
                        latencies.push(start.elapsed().as_secs_f64() * 1000.0);
                    }
                }
            }
            latencies
        });
    }
    summary(tasks, started, seconds).await
}

/// The clients' successful requests per second (over the time they ran), and
/// their p50 and p99 in ms.
async fn summary(mut tasks: tokio::task::JoinSet<Vec<f64>>, started: Instant, seconds: u64) -> (f64, f64, f64) {
    let mut all = Vec::new();
    while let Some(l) = tasks.join_next().await {
        all.extend(l.expect("client task"));
    }
    all.sort_by(f64::total_cmp);
    let pct = |p: f64| {
        all.get(((all.len() as f64 * p) as usize).min(all.len().saturating_sub(1))).copied().unwrap_or(f64::NAN)
    };
    let ran = started.elapsed().as_secs_f64();
    if ran < seconds as f64 * 0.95 {
        eprintln!("warning: the clients ran out of work after {ran:.1} s");
    }
    (all.len() as f64 / ran, pct(0.5), pct(0.99))
}

/// The workers dealt round-robin to `clients` queues, one per connection.
fn spread(batch: Vec<Worker>, clients: usize) -> Vec<Vec<Worker>> {
    let mut queues: Vec<Vec<Worker>> = (0..clients).map(|_| Vec::new()).collect();
    for (i, w) in batch.into_iter().enumerate() {
        queues[i % clients].push(w);
    }
    queues
}

/// A browser's cycle, or the least the same stack can do in its place.
#[derive(Clone, Copy, PartialEq)]
enum Cycle {
    /// Post the task form (answered 303 to the task page), then load the page
    /// it redirects to, as a browser does.
    Form,
    /// The floor under it: two requests of the same session, the API vote
    /// and the least a task page can be on this stack ([`least_page`]), of
    /// the real task page's size.
    Floor { page_bytes: usize },
}

/// Cycles from `clients` concurrent connections for `seconds`; (cycles/s,
/// p50 ms, p99 ms of a cycle). The clients take workers from one queue, so
/// all of them stay busy until it is empty: with a share each, the clients
/// with one worker fewer stopped early, and a run that ran out of work
/// ended at fewer connections than it names.
async fn cycles(url: &str, workers: &mut Vec<Worker>, clients: usize, seconds: u64, cycle: Cycle) -> (f64, f64, f64) {
    let batch: Vec<Worker> = workers.drain(..FORM_WORKERS_PER_RUN.max(clients).min(workers.len())).collect();
    let queue = Arc::new(std::sync::Mutex::new(batch));
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for _ in 0..clients {
        let (url, queue) = (url.to_owned(), queue.clone());
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            let take = || queue.lock().ok().and_then(|mut q| q.pop());
            'outer: while let Some(w) = take() {
                for item in &w.items {
                    if Instant::now() >= deadline {
                        break 'outer;
                    }
                    let start = Instant::now();
                    let next = match cycle {
                        Cycle::Form => w
                            .client
                            .post(format!("{url}/work/a/{}/answer", w.assignment))
                            .header(reqwest::header::COOKIE, &w.cookie)
                            .form(&[("csrf_token", w.csrf.as_str()), ("item_id", item.as_str()), ("rating", "2")])
                            .send()
                            .await
                            .ok()
                            .filter(|r| r.status() == reqwest::StatusCode::SEE_OTHER)
                            .and_then(|r| r.headers().get(reqwest::header::LOCATION)?.to_str().ok().map(str::to_owned)),
                        Cycle::Floor { page_bytes } => w
                            .vote(&url, item, 2, false)
                            .send()
                            .await
                            .ok()
                            .filter(|r| r.status().is_success())
                            .map(|_| format!("{LEAST_PAGE}/{}/{item}?bytes={page_bytes}", w.assignment)),
                    };
                    let Some(next) = next else { continue };
                    let page =
                        w.client.get(format!("{url}{next}")).header(reqwest::header::COOKIE, &w.cookie).send().await;
                    if let Ok(page) = page {
                        if page.status().is_success() && page.bytes().await.is_ok() {
                            latencies.push(start.elapsed().as_secs_f64() * 1000.0);
                        }
                    }
                }
            }
            latencies
        });
    }
    summary(tasks, started, seconds).await
}

/// Answers sent again through the API from `clients` connections for
/// `seconds`, to items answered before the run (untimed): the same answer
/// (a retry) or a different one with `"change": true`, both the full path of
/// `responses::submit`; (answers/s, p50 ms, p99 ms).
async fn resend(url: &str, workers: &mut Vec<Worker>, clients: usize, seconds: u64, change: bool) -> (f64, f64, f64) {
    let batch: Vec<Worker> = workers.drain(..RESEND_WORKERS.max(clients).min(workers.len())).collect();
    // Every task answered first (2), untimed.
    futures_util::stream::iter(batch.iter().flat_map(|w| w.items.iter().map(move |i| (w, i))))
        .for_each_concurrent(clients, |(w, item)| async move {
            let _ = w.vote(url, item, 2, false).send().await;
        })
        .await;
    let queues = spread(batch, clients);
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for queue in queues {
        let url = url.to_owned();
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            // Changes alternate 0 and 1 (each differs from what is stored).
            'outer: for round in 0.. {
                for w in &queue {
                    for item in &w.items {
                        if Instant::now() >= deadline {
                            break 'outer;
                        }
                        let rating = if change { round % 2 } else { 2 };
                        let start = Instant::now();
                        let r = w.vote(&url, item, rating, change).send().await;
                        if r.is_ok_and(|r| r.status().is_success()) {
                            latencies.push(start.elapsed().as_secs_f64() * 1000.0);
                        }
                    }
                }
            }
            latencies
        });
    }
    summary(tasks, started, seconds).await
}

/// Workers asking for their (current) task at once from `clients` clients for
/// `seconds`: (requests/s, p50 ms, p99 ms).
async fn next_task(url: &str, campaign: &str, workers: &[Worker], clients: usize, seconds: u64) -> (f64, f64, f64) {
    let started = Instant::now();
    let deadline = started + Duration::from_secs(seconds);
    let mut tasks = tokio::task::JoinSet::new();
    for c in 0..clients {
        let w = &workers[c % workers.len()];
        let (client, cookie, csrf) = (w.client.clone(), w.cookie.clone(), w.csrf.clone());
        let (url, campaign) = (url.to_owned(), campaign.to_owned());
        tasks.spawn(async move {
            let mut latencies = Vec::new();
            while Instant::now() < deadline {
                let start = Instant::now();
                let r = client
                    .post(format!("{url}/api/v1/work/campaigns/{campaign}/assignment"))
                    .header(reqwest::header::COOKIE, &cookie)
                    .header("x-csrf-token", &csrf)
                    .json(&json!({}))
                    .send()
                    .await;
                if r.is_ok_and(|r| r.status().is_success()) {
                    latencies.push(start.elapsed().as_secs_f64() * 1000.0);
                }
            }
            latencies
        });
    }
    summary(tasks, started, seconds).await
}

/// pgbench single-row inserts at `clients` connections; transactions per second.
fn pgbench(cluster: &EmbeddedCluster, database: &str, clients: usize, seconds: u64) -> f64 {
    let script = cluster.data_dir().join("bench_insert.sql");
    std::fs::write(
        &script,
        "\\set v random(1, 3)\nINSERT INTO bench_votes (client, value, at) VALUES (:client_id, :v, now());\n",
    )
    .expect("script");
    // Run as this user: it reaches the socket directory, and the server trusts local connections.
    let beside = atelier::db::embedded::find_bin_dir().map(|d| d.join("pgbench")).filter(|p| p.is_file());
    let debian = std::fs::read_dir("/usr/lib/postgresql")
        .into_iter()
        .flatten()
        .flatten()
        .map(|e| e.path().join("bin/pgbench"))
        .find(|p| p.is_file());
    let bin = beside.or(debian).unwrap_or_else(|| "pgbench".into());
    let out = std::process::Command::new(bin)
        .args(["-n", "-h"])
        .arg(cluster.socket_dir())
        .args([
            "-p",
            "5432",
            "-U",
            atelier::db::embedded::SUPERUSER,
            "-c",
            &clients.to_string(),
            "-j",
            "2",
            "-T",
            &seconds.to_string(),
            "-f",
        ])
        .arg(&script)
        .arg(database)
        .output()
        .expect("pgbench runs");
    let text = String::from_utf8_lossy(&out.stdout);
    text.lines()
        .find(|l| l.starts_with("tps"))
        .and_then(|l| l.split_whitespace().nth(2))
        .and_then(|v| v.parse().ok())
        .unwrap_or_else(|| panic!("pgbench: {text}{}", String::from_utf8_lossy(&out.stderr)))
}

/// The sum of a metric's series whose labels contain every one of `labels`,
/// in the service's Prometheus text.
fn metric(text: &str, name: &str, labels: &[&str]) -> f64 {
    text.lines()
        .filter(|l| l.starts_with(name) && labels.iter().all(|label| l.contains(label)))
        .filter_map(|l| l.rsplit(' ').next()?.parse::<f64>().ok())
        .sum()
}

/// The service's storing statements so far, from its metrics: (count,
/// answers in them, seconds spent in them).
fn storing_statements() -> (f64, f64, f64) {
    let text = atelier::http::metrics::handle().render();
    let value = |name: &str| metric(&text, name, &["statement=\"answer insert\""]);
    (value("atelier_batch_size_count"), value("atelier_batch_size_sum"), value("atelier_batch_seconds_sum"))
}

/// The vote requests answered so far as the service timed them (inside its
/// middleware, `track`): (count, seconds).
fn vote_requests() -> (f64, f64) {
    let text = atelier::http::metrics::handle().render();
    let value = |name: &str| metric(&text, name, &["/responses\"", "status=\"200\""]);
    (value("atelier_http_request_duration_seconds_count"), value("atelier_http_request_duration_seconds_sum"))
}

/// The cluster's WAL so far: (records, full-page images, bytes).
async fn wal(pool: &sqlx::PgPool) -> (f64, f64, f64) {
    sqlx::query_as::<_, (f64, f64, f64)>(
        "SELECT wal_records::float8, wal_fpi::float8, wal_bytes::float8 FROM pg_stat_wal",
    )
    .fetch_one(pool)
    .await
    .unwrap_or((0.0, 0.0, 0.0))
}

/// Transactions committed in the database so far (each statement outside a
/// transaction is one): statements per request, roughly, once the
/// statistics are flushed (at most a second late).
async fn transactions(pool: &sqlx::PgPool) -> f64 {
    tokio::time::sleep(Duration::from_millis(1100)).await;
    sqlx::query_scalar::<_, f64>("SELECT xact_commit::float8 FROM pg_stat_database WHERE datname = current_database()")
        .fetch_one(pool)
        .await
        .unwrap_or(0.0)
}

/// Rounds at each concurrency (pgbench, the API vote, the form cycle and its
/// floor, back to back); three, so that the median of the rounds' ratios
/// leaves out one run slowed or sped up by the machine.
const ROUNDS: usize = 3;

/// One round's figures: pgbench's transactions/s, the API vote's and the
/// form cycle's (rate/s, p50 ms, p99 ms), the floor's cycles/s.
struct Round {
    pg: f64,
    api: (f64, f64, f64),
    form: (f64, f64, f64),
    floor: f64,
}

/// One run of API votes ([`ingest`]), with what the service and the
/// database did for them printed beside it.
async fn api_votes(
    pool: &sqlx::PgPool,
    url: &str,
    workers: &mut Vec<Worker>,
    clients: usize,
    seconds: u64,
) -> (f64, f64, f64) {
    let (before, wal_before, timed_before) = (storing_statements(), wal(pool).await, vote_requests());
    let (v, p50, p99) = ingest(url, workers, clients, seconds).await;
    let (after, wal_after, timed_after) = (storing_statements(), wal(pool).await, vote_requests());
    let (timed, timed_secs) = (timed_after.0 - timed_before.0, timed_after.1 - timed_before.1);
    println!(
        "  inside the service: {:.2} ms a vote on average ({timed:.0} votes timed by its middleware)",
        timed_secs / timed * 1e3
    );
    let (n, size, secs) = (after.0 - before.0, after.1 - before.1, after.2 - before.2);
    println!(
        "  storing statements: {n:.0}, {:.1} answers each, {:.2} ms each, busy {:.0} % of the run",
        size / n,
        secs / n * 1e3,
        secs / seconds as f64 * 100.0
    );
    let votes_sent = v * seconds as f64;
    println!(
        "  WAL per vote: {:.0} bytes, {:.1} records, {:.3} full-page images",
        (wal_after.2 - wal_before.2) / votes_sent,
        (wal_after.0 - wal_before.0) / votes_sent,
        (wal_after.1 - wal_before.1) / votes_sent
    );
    (v, p50, p99)
}

/// Where the service in this bench answers [`least_page`].
const LEAST_PAGE: &str = "/bench/least-page";

/// The least a task page can be on this stack, the page under the floor of
/// the browser's cycle: the page routes' whole middleware (session, CSRF,
/// flash, metrics), the signed-in account as every page takes it, the
/// task's item from its handle (remembered since the vote), one statement
/// reading its payload, and an HTML page of the size the client asks for
/// (the real task page's, measured in the setup). The task page reads more
/// (the assignment, the next task) but shares its statements between
/// concurrent pages.
async fn least_page(
    _user: atelier::http::extract::CurrentUser,
    axum::extract::State(s): axum::extract::State<AppState>,
    axum::extract::Path((assignment, handle)): axum::extract::Path<(uuid::Uuid, uuid::Uuid)>,
    axum::extract::Query(size): axum::extract::Query<PageSize>,
) -> axum::response::Response {
    use axum::response::IntoResponse;
    let Ok(item) = s.recorder.item_named(assignment, handle).await else {
        return axum::http::StatusCode::NOT_FOUND.into_response();
    };
    let payload: Option<Value> = sqlx::query_scalar("SELECT payload FROM items WHERE id = $1")
        .bind(item)
        .fetch_optional(s.statements.executor())
        .await
        .ok()
        .flatten();
    let Some(payload) = payload else { return axum::http::StatusCode::NOT_FOUND.into_response() };
    let mut page = format!("<!doctype html><html lang=\"en\"><body><main><pre>{payload}</pre>");
    while page.len() < size.bytes {
        page.push_str("<p>The least a task page can be.</p>");
    }
    page.push_str("</main></body></html>");
    axum::response::Html(page).into_response()
}

/// The size [`least_page`] makes its page (`?bytes=`).
#[derive(serde::Deserialize)]
struct PageSize {
    bytes: usize,
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

#[tokio::main]
async fn main() {
    let seconds: u64 = std::env::var("VOTE_BENCH_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8);
    // `VOTE_BENCH_LOG=1`: the service logs as the binary does (a line per request on standard error).
    if std::env::var_os("VOTE_BENCH_LOG").is_some() {
        atelier::logging::init();
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let cluster = EmbeddedCluster::start(dir.path()).expect("embedded PostgreSQL");
    let database = "vote_bench";
    {
        use sqlx::ConnectOptions;
        let mut admin = cluster.connect_options("postgres").connect().await.expect("connect");
        sqlx::query(&format!("CREATE DATABASE {database}")).execute(&mut admin).await.expect("create");
    }
    let pool = atelier::db::pool_options(20).connect_with(cluster.connect_options(database)).await.expect("pool");
    atelier::db::migrate(&pool).await.expect("migrate");
    sqlx::query("CREATE TABLE bench_votes (id bigserial PRIMARY KEY, client int, value int, at timestamptz)")
        .execute(&pool)
        .await
        .expect("table");
    // `VOTE_BENCH_SQL`: statements run on the database after its migrations,
    // for experiments with the schema (a dropped index, a changed setting).
    if let Ok(sql) = std::env::var("VOTE_BENCH_SQL") {
        println!("experiment: {sql}");
        sqlx::raw_sql(&sql).execute(&pool).await.expect("VOTE_BENCH_SQL");
    }
    let kinds = atelier::kinds::registry();
    // A VTON campaign: one 50-task questionnaire per worker, one sanity task each.
    // `VOTE_BENCH_CONNECTIONS` (e.g. "16") narrows the runs, for quick experiments.
    let concurrencies: Vec<usize> = std::env::var("VOTE_BENCH_CONNECTIONS")
        .ok()
        .map(|v| v.split(',').filter_map(|c| c.trim().parse().ok()).collect())
        .unwrap_or_else(|| vec![16, 64]);
    let workers_needed =
        ROUNDS * concurrencies.len() * (WORKERS_PER_RUN + 2 * FORM_WORKERS_PER_RUN) + 2 * RESEND_WORKERS + 16;
    let config = json!({"tasks_per_questionnaire": 50, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1, "background": []});
    let campaign =
        atelier::core::campaign::campaigns::create(&pool, &kinds, "vton", "bench", &config, &Default::default())
            .await
            .expect("campaign");
    let img = |r: &str, n: usize| format!("/img/{r}/{n}.png");
    let mut items: Vec<NewItem> = (0..workers_needed * ITEMS_PER_WORKER)
        .map(|n| NewItem {
            external_id: format!("img-{n}"),
            payload: json!({"garment": img("g", n), "person": img("p", n), "tryon": img("t", n), "reference": img("r", n), "model": "m", "category": "tops", "dataset": "bench"}),
            gold: None,
        })
        .collect();
    items.push(NewItem {
        external_id: "sanity".into(),
        payload: json!({"garment": "/g", "person": "/p", "tryon": "/t", "reference": "/r", "model": "m", "category": "tops", "dataset": "bench"}),
        gold: Some(json!({"rating": 1})),
    });
    // Every bench worker joins from this host: no limit of joins per address.
    sqlx::query("UPDATE campaigns SET joins_per_address = 0 WHERE id = $1")
        .bind(campaign.id)
        .execute(&pool)
        .await
        .expect("joins per address");
    atelier::core::item::items::import(&pool, &kinds, campaign.id, &items).await.expect("items");
    atelier::core::work::batches::form(&pool, &kinds, campaign.id, 1).await.expect("batches");
    atelier::core::campaign::campaigns::set_state(
        &pool,
        campaign.id,
        atelier::core::campaign::states::CampaignState::Open,
    )
    .await
    .expect("open");
    let admin = atelier::auth::users::create(&pool, atelier::auth::Role::Admin, "bench-admin", "bench-password-1")
        .await
        .expect("admin");
    let token = atelier::core::crowd::invitations::create(&pool, campaign.id, admin.id, &Default::default())
        .await
        .expect("invitation");

    let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.expect("bind");
    let url = format!("http://{}", listener.local_addr().expect("addr"));
    let state = AppState::new(
        pool.clone(),
        HttpConfig {
            public_url: url.clone(),
            secure_cookies: false,
            metrics_token: None,
            storage: atelier::storage::Storage::local(dir.path().join("uploads")).expect("store"),
            trusted_proxies: vec![],
            backups: None,
        },
        kinds.clone(),
        atelier::kinds::pages(),
    );
    // The service as the binary serves it, with the floor's page beside the
    // kinds' routes (under the same middleware as every page).
    let mut routes = atelier::kinds::routes();
    routes.push(atelier::http::kind_routes::KindRoutes {
        pages: axum::Router::new()
            .route(&format!("{LEAST_PAGE}/{{assignment}}/{{handle}}"), axum::routing::get(least_page)),
        ..Default::default()
    });
    tokio::spawn(async move {
        atelier::http::listen::serve(listener, app(state, routes), std::future::pending()).await;
    });
    // Sessions and questionnaires for every worker, 32 at a time.
    let campaign_id = campaign.id.to_string();
    let setup_client = reqwest::Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    let setup_started = Instant::now();
    let mut workers: Vec<Worker> = futures_util::stream::iter(0..workers_needed)
        .map(|n| worker(&setup_client, &url, &token, &campaign_id, n))
        .buffer_unordered(32)
        .collect()
        .await;
    workers.sort_by_key(|w| w.assignment.clone());
    // A task page as the form's runs get it (a spare worker's: it only reads).
    let spare = workers.last().expect("workers");
    let task_page = spare
        .client
        .get(format!("{url}/work/a/{}", spare.assignment))
        .header(reqwest::header::COOKIE, &spare.cookie)
        .send()
        .await
        .expect("task page");
    assert!(task_page.status().is_success(), "task page: {}", task_page.status());
    let page_bytes = task_page.bytes().await.expect("task page").len();
    // The setup grew the session and assignment tables from nothing within a
    // minute, faster than autovacuum's analyze follows; plans the service
    // made while they were small (a sequential scan of the sessions for each
    // lookup) would otherwise last into the runs. A service that has been up
    // a few minutes has these statistics.
    sqlx::query("ANALYZE").execute(&pool).await.expect("analyze");
    println!(
        "setup: {} workers joined and took a questionnaire in {:.1} s ({:.1} ms per worker)",
        workers.len(),
        setup_started.elapsed().as_secs_f64(),
        setup_started.elapsed().as_secs_f64() * 1e3 / workers.len() as f64
    );
    println!(
        "vote ingest vs pgbench, {seconds} s per run, in rounds (pgbench, API, form, floor) x {ROUNDS}, this machine ({} cores), votes from {}",
        std::thread::available_parallelism().map_or(0, |n| n.get()),
        if wrk().is_some() { "wrk" } else { "reqwest in this process" }
    );
    let sender = if wrk().is_some() { "sent by wrk" } else { "sent from the bench's process" };
    let command = "`cargo bench --bench vote_ingest`";
    let mut rows = Vec::new();
    let mut first_votes_16 = f64::NAN;
    for &clients in &concurrencies {
        let pg_clients = clients.min(PGBENCH_MAX_CLIENTS);
        if pg_clients < clients {
            println!("  pgbench at {pg_clients} clients (the cluster's connections), votes at {clients}");
        }
        // Each round runs pgbench, the API vote, the browser's cycle and its
        // floor back to back, so that each ratio compares runs a few seconds
        // apart (the machine's speed drifts over minutes); the figures are
        // the medians of the rounds' ratios.
        let mut rounds = Vec::new();
        for round in 1..=ROUNDS {
            let pg = pgbench(&cluster, database, pg_clients, seconds);
            let api = api_votes(&pool, &url, &mut workers, clients, seconds).await;
            let before = transactions(&pool).await;
            let form = cycles(&url, &mut workers, clients, seconds, Cycle::Form).await;
            let during = transactions(&pool).await;
            let floor = cycles(&url, &mut workers, clients, seconds, Cycle::Floor { page_bytes }).await.0;
            let after = transactions(&pool).await;
            println!(
                "  round {round}: pgbench {pg:.0}/s, API {:.0} votes/s ({:.3} of pgbench), form {:.0} cycles/s ({:.3} of \
                 the API), floor {floor:.0} cycles/s; transactions per cycle: form {:.2}, floor {:.2}",
                api.0,
                api.0 / pg,
                form.0,
                form.0 / api.0,
                (during - before) / (form.0 * seconds as f64),
                (after - during) / (floor * seconds as f64)
            );
            rounds.push(Round { pg, api, form, floor });
        }
        let of = |f: fn(&Round) -> f64| median(rounds.iter().map(f).collect());
        let spread = |f: fn(&Round) -> f64| {
            let all: Vec<f64> = rounds.iter().map(f).collect();
            (all.iter().copied().fold(f64::INFINITY, f64::min), all.iter().copied().fold(f64::NEG_INFINITY, f64::max))
        };
        let (pg, votes, p99) = (of(|r| r.pg), of(|r| r.api.0), of(|r| r.api.2));
        let ratio = of(|r| r.api.0 / r.pg);
        if clients == 16 {
            first_votes_16 = votes;
        }
        println!(
            "RESULT clients={clients} pgbench_tps={pg:.0} votes_per_s={votes:.0} ratio={ratio:.3} p50_ms={:.1} p99_ms={p99:.1}",
            of(|r| r.api.1),
        );
        rows.push(figures::Row {
            what: format!("votes through the API, {clients} connections ({sender})"),
            figure: format!("{}/s, p99 {p99:.1} ms", figures::thousands(votes as u64)),
            baseline: format!("pgbench {}/s: **{ratio:.3}**", figures::thousands(pg as u64)),
            target: format!("≥ 0.6 of pgbench; p99 < 50 ms ({})", figures::met(ratio >= 0.6 && p99 < 50.0)),
            command: command.to_owned(),
        });
        // The browser's path beside the API's (form post + redirect + next
        // page), and its floor (the API vote + the least task page).
        let (form, floor, p99) = (of(|r| r.form.0), of(|r| r.floor), of(|r| r.form.2));
        let (of_api, floor_of_api, of_floor) =
            (of(|r| r.form.0 / r.api.0), of(|r| r.floor / r.api.0), of(|r| r.form.0 / r.floor));
        let (lowest, highest) = spread(|r| r.form.0 / r.api.0);
        let (floor_lowest, floor_highest) = spread(|r| r.floor / r.api.0);
        println!(
            "RESULT form_cycle clients={clients} cycles_per_s={form:.0} of_api_votes={of_api:.3} \
             of_api_votes_range={lowest:.3}-{highest:.3} floor_cycles_per_s={floor:.0} \
             floor_of_api_votes={floor_of_api:.3} floor_of_api_votes_range={floor_lowest:.3}-{floor_highest:.3} \
             of_floor={of_floor:.3} p50_ms={:.1} p99_ms={p99:.1}",
            of(|r| r.form.1),
        );
        rows.push(figures::Row {
            what: format!("a browser's vote: task form post + redirect + next task page, {clients} connections"),
            figure: format!("{} cycles/s, p99 {p99:.1} ms", figures::thousands(form as u64)),
            baseline: format!(
                "the API vote in the same rounds {}/s: **{of_api:.3}** (rounds {lowest:.3}–{highest:.3}); the floor \
                 (the API vote + the least task page: same session, one lookup of the task's payload, a page of the \
                 same size) {} cycles/s: {floor_of_api:.3} of the API (rounds {floor_lowest:.3}–{floor_highest:.3}), \
                 the form cycle **{of_floor:.3}** of it",
                figures::thousands(votes as u64),
                figures::thousands(floor as u64),
            ),
            target: format!("≥ 0.5 of the API; p99 < 50 ms ({})", figures::met(of_api >= 0.5 && p99 < 50.0)),
            command: format!("{command} (`form_cycle` lines)"),
        });
    }
    // Retries and changed answers (the full path), beside a first answer's.
    for change in [false, true] {
        let what = if change { "changed answers" } else { "retries (the same answer again)" };
        let (rate, p50, p99) = resend(&url, &mut workers, 16, seconds, change).await;
        println!("RESULT resend change={change} clients=16 answers_per_s={rate:.0} p50_ms={p50:.1} p99_ms={p99:.1}");
        rows.push(figures::Row {
            what: format!("{what} through the API, 16 connections"),
            figure: format!("{}/s, p50 {p50:.1} / p99 {p99:.1} ms", figures::thousands(rate as u64)),
            // A shortened run without 16 connections has no first answers to compare with.
            baseline: match first_votes_16.is_finite() {
                true => format!("first answers in the same run: {}/s", figures::thousands(first_votes_16 as u64)),
                false => String::new(),
            },
            target: format!("p99 < 50 ms ({})", figures::met(p99 < 50.0)),
            command: command.to_owned(),
        });
    }
    let (rate, p50, p99) = next_task(&url, &campaign.id.to_string(), &workers, 16, seconds).await;
    println!("RESULT next_task clients=16 requests_per_s={rate:.0} p50_ms={p50:.1} p99_ms={p99:.1}");
    rows.push(figures::Row {
        what: "next task, 16 connections".to_owned(),
        figure: format!("{}/s, p50 {p50:.1} / p99 {p99:.1} ms", figures::thousands(rate as u64)),
        baseline: String::new(),
        target: format!("p99 < 20 ms ({})", figures::met(p99 < 20.0)),
        command: command.to_owned(),
    });
    let full_run = ["VOTE_BENCH_SECONDS", "VOTE_BENCH_CONNECTIONS", "VOTE_BENCH_SQL"]
        .iter()
        .all(|v| std::env::var_os(v).is_none());
    figures::record(&rows, full_run);
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM responses").fetch_one(&pool).await.expect("count");
    println!("responses stored: {stored}");
    if std::env::var("VOTE_BENCH_KEEP").is_ok() {
        println!("KEEP socket={} db={database} (Ctrl-C stops the cluster)", cluster.socket_dir().display());
        // Until Ctrl-C (or an hour): then the cluster is stopped as the bench ends.
        let _ = tokio::time::timeout(Duration::from_secs(3600), tokio::signal::ctrl_c()).await;
    }
}
