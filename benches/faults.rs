//! Fault harness: crowd workers vote without pause against the real service
//! (the release binary on its embedded PostgreSQL) while it is killed with
//! SIGKILL and restarted, while PostgreSQL is killed outright, and while
//! PostgreSQL is shut down; every client retries a vote until it is
//! acknowledged. At the end every acknowledged vote must be stored exactly
//! once, no request may have had a 500, and every refusal while the database
//! was away must have been a 503 with `Retry-After`.
//!
//! Run with `cargo bench --bench faults` (about a minute; `FAULT_PHASE_SECONDS`
//! sets the time between faults, `FAULT_CLIENTS` the concurrency). Everything
//! runs on this machine, in a temporary directory, on loopback.

use serde_json::{json, Value};
use std::collections::{HashMap, HashSet};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

#[path = "support/figures.rs"]
mod figures;
#[path = "support/service.rs"]
mod service;
use service::{admin, signal, Harness};

/// Enough work that the clients never run out (about 6,100 questionnaires;
/// the run stores about 155,000 votes on this machine, and the 150,000 of
/// before ran out during the last phase).
const ITEMS: usize = 300_000;

/// What the clients saw, by kind of reply.
#[derive(Default)]
struct Tally {
    ok: AtomicU64,
    unavailable_with_retry_after: AtomicU64,
    unavailable_without_retry_after: AtomicU64,
    server_errors: AtomicU64,
    other_refusals: AtomicU64,
    connection_failures: AtomicU64,
}

/// Acknowledged votes: (assignment, item) → (response id, rating).
type Acknowledged = Arc<Mutex<HashMap<(String, String), (String, i64)>>>;

/// One worker's session, joined and holding a questionnaire; retried until
/// the service answers (it may be down at any moment), or `None` once the
/// run is over.
async fn worker(
    h: &Harness,
    invitation: &str,
    campaign: &str,
    n: u64,
    stop: &AtomicBool,
) -> Option<(reqwest::Client, String, String, Vec<String>)> {
    while !stop.load(Ordering::Relaxed) {
        let attempt = async {
            let client = reqwest::Client::builder()
                .cookie_store(true)
                .redirect(reqwest::redirect::Policy::none())
                .timeout(Duration::from_secs(30))
                .build()
                .ok()?;
            client.get(h.url(&format!("/join/{invitation}?worker_id=fault-{n}"))).send().await.ok()?;
            let me: Value = client.get(h.url("/api/v1/me")).send().await.ok()?.json().await.ok()?;
            let csrf = me["csrf_token"].as_str()?.to_owned();
            let view: Value = client
                .post(h.url(&format!("/api/v1/work/campaigns/{campaign}/assignment")))
                .header("x-csrf-token", &csrf)
                .json(&json!({}))
                .send()
                .await
                .ok()?
                .json()
                .await
                .ok()?;
            let assignment = view["assignment"]["id"].as_str()?.to_owned();
            let items = view["items"].as_array()?.iter().filter_map(|i| Some(i["id"].as_str()?.to_owned())).collect();
            Some((client, csrf, assignment, items))
        };
        if let Some(w) = attempt.await {
            return Some(w);
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    None
}

/// Votes until `stop`, each vote retried until acknowledged.
async fn client_loop(
    h: Arc<Harness>,
    invitation: String,
    campaign: String,
    ids: Arc<AtomicU64>,
    stop: Arc<AtomicBool>,
    tally: Arc<Tally>,
    acked: Acknowledged,
) {
    while !stop.load(Ordering::Relaxed) {
        let Some((client, csrf, assignment, items)) =
            worker(&h, &invitation, &campaign, ids.fetch_add(1, Ordering::Relaxed), &stop).await
        else {
            return;
        };
        for (i, item) in items.iter().enumerate() {
            let rating = (i % 3 + 1) as i64;
            loop {
                if stop.load(Ordering::Relaxed) {
                    return;
                }
                let sent = client
                    .post(h.url(&format!("/api/v1/work/assignments/{assignment}/responses")))
                    .header("x-csrf-token", &csrf)
                    .json(&json!({"item_id": item, "answer": {"rating": rating}}))
                    .send()
                    .await;
                let r = match sent {
                    Ok(r) => r,
                    Err(_) => {
                        tally.connection_failures.fetch_add(1, Ordering::Relaxed);
                        tokio::time::sleep(Duration::from_millis(50)).await;
                        continue;
                    }
                };
                let status = r.status().as_u16();
                let retry_after = r.headers().contains_key("retry-after");
                match status {
                    200 | 201 => {
                        let Ok(body) = r.json::<Value>().await else {
                            // The reply was cut: not acknowledged; the retry will tell.
                            tally.connection_failures.fetch_add(1, Ordering::Relaxed);
                            continue;
                        };
                        tally.ok.fetch_add(1, Ordering::Relaxed);
                        let id = body["response"]["id"].as_str().unwrap_or_default().to_owned();
                        acked.lock().expect("acked").insert((assignment.clone(), item.clone()), (id, rating));
                        break;
                    }
                    503 if retry_after => {
                        tally.unavailable_with_retry_after.fetch_add(1, Ordering::Relaxed);
                    }
                    503 => {
                        tally.unavailable_without_retry_after.fetch_add(1, Ordering::Relaxed);
                    }
                    500..=599 => {
                        tally.server_errors.fetch_add(1, Ordering::Relaxed);
                    }
                    _ => {
                        // A refusal (an expired lease, say) is an answer: not retried.
                        tally.other_refusals.fetch_add(1, Ordering::Relaxed);
                        break;
                    }
                }
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
    }
}

fn print_tally(t: &Tally) {
    println!(
        "  replies so far: {} acknowledged, {} 503 with Retry-After, {} 503 without, {} other 5xx, {} refusals, {} connection failures",
        t.ok.load(Ordering::Relaxed),
        t.unavailable_with_retry_after.load(Ordering::Relaxed),
        t.unavailable_without_retry_after.load(Ordering::Relaxed),
        t.server_errors.load(Ordering::Relaxed),
        t.other_refusals.load(Ordering::Relaxed),
        t.connection_failures.load(Ordering::Relaxed),
    );
}

#[tokio::main]
async fn main() {
    let phase =
        Duration::from_secs(std::env::var("FAULT_PHASE_SECONDS").ok().and_then(|s| s.parse().ok()).unwrap_or(8));
    let clients: usize = std::env::var("FAULT_CLIENTS").ok().and_then(|s| s.parse().ok()).unwrap_or(32);
    let dir = tempfile::tempdir().expect("tempdir");
    let http = reqwest::Client::new();
    let (h, token, mut service) = service::start(dir.path(), &http).await;
    let h = Arc::new(h);

    let config = json!({"tasks_per_questionnaire": 50, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1, "background": []});
    let campaign = admin(
        &http,
        &h,
        &token,
        "/api/v1/admin/campaigns",
        json!({"kind": "vton", "name": "faults", "config": config}),
    )
    .await;
    let campaign = campaign["id"].as_str().expect("id").to_owned();
    let img = |r: &str, n: usize| format!("/img/{r}/{n}.png");
    let mut items: Vec<Value> = (0..ITEMS)
        .map(|n| json!({"external_id": format!("img-{n}"), "payload": {"garment": img("g", n), "person": img("p", n), "tryon": img("t", n), "reference": img("r", n), "model": "m", "category": "tops", "dataset": "faults"}}))
        .collect();
    items.push(json!({"external_id": "sanity", "payload": {"garment": "/g", "person": "/p", "tryon": "/t", "reference": "/r", "model": "m", "category": "tops", "dataset": "faults"}, "gold": {"rating": 1}}));
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/items"), json!({"items": items})).await;
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/batches"), json!({"seed": 1})).await;
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/state"), json!({"state": "open"})).await;
    let invitation =
        admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), Value::Null).await;
    let invitation = invitation["token"].as_str().expect("token").to_owned();

    println!(
        "fault harness: {clients} clients voting, {} s between faults, service log {}",
        phase.as_secs(),
        h.log.display()
    );
    let (stop, tally, acked, ids) = (
        Arc::new(AtomicBool::new(false)),
        Arc::new(Tally::default()),
        Acknowledged::default(),
        Arc::new(AtomicU64::new(0)),
    );
    let mut load = tokio::task::JoinSet::new();
    for _ in 0..clients {
        load.spawn(client_loop(
            h.clone(),
            invitation.clone(),
            campaign.clone(),
            ids.clone(),
            stop.clone(),
            tally.clone(),
            acked.clone(),
        ));
    }
    tokio::time::sleep(phase).await;
    print_tally(&tally);

    // 1. The service is killed outright and started again (it adopts the
    //    PostgreSQL the killed one left running).
    service.kill().expect("kill -9 the service");
    service.wait().expect("reaped");
    let start = Instant::now();
    service = h.serve();
    h.ready(&http).await;
    let mut back_after = vec![start.elapsed().as_secs_f64()];
    println!("RESULT fault=service_kill9 back_after_s={:.2}", back_after[0]);
    tokio::time::sleep(phase).await;
    print_tally(&tally);

    // 2. PostgreSQL is killed outright, then 3. shut down (fast shutdown, as
    //    `pg_ctl stop` does): the service must notice and restart it.
    for (fault, how) in
        [("postgres_kill9", nix::sys::signal::Signal::SIGKILL), ("postgres_shutdown", nix::sys::signal::Signal::SIGINT)]
    {
        let start = Instant::now();
        signal(h.postmaster_pid(), how);
        tokio::time::sleep(Duration::from_millis(200)).await;
        h.ready(&http).await;
        back_after.push(start.elapsed().as_secs_f64());
        println!("RESULT fault={fault} back_after_s={:.2}", start.elapsed().as_secs_f64());
        tokio::time::sleep(phase).await;
        print_tally(&tally);
    }

    stop.store(true, Ordering::Relaxed);
    while load.join_next().await.is_some() {}
    print_tally(&tally);

    let stored = stored_votes(&h).await;
    let acked = std::mem::take(&mut *acked.lock().expect("acked"));
    let lost: Vec<_> = acked.iter().filter(|(k, (_, rating))| stored.get(*k).map(|s| s.1) != Some(*rating)).collect();
    let doubled = stored.values().filter(|s| s.0 > 1).count();
    let ids: HashSet<&String> = acked.values().map(|(id, _)| id).collect();
    let unacknowledged_stored = stored.len().saturating_sub(acked.len());
    println!(
        "RESULT acknowledged={} stored={} lost={} doubled={} distinct_ids={} stored_unacknowledged={} status_5xx_other_than_503={} 503_without_retry_after={}",
        acked.len(),
        stored.len(),
        lost.len(),
        doubled,
        ids.len(),
        unacknowledged_stored,
        tally.server_errors.load(Ordering::Relaxed),
        tally.unavailable_without_retry_after.load(Ordering::Relaxed),
    );

    let (rss, peak) = service::rss_mb(service.id());
    println!("RESULT service_rss_mb now={rss:.0} peak_since_restart={peak:.0}");

    // The service stops the PostgreSQL it adopted.
    signal(service.id() as i32, nix::sys::signal::Signal::SIGTERM);
    service.wait().expect("service ends");
    tokio::time::sleep(Duration::from_millis(500)).await;
    let left_running = h.data_dir.join("postgres/postmaster.pid").exists();
    println!("RESULT postgres_left_running_after_sigterm={left_running}");
    let failed = !lost.is_empty()
        || doubled > 0
        || tally.server_errors.load(Ordering::Relaxed) > 0
        || tally.unavailable_without_retry_after.load(Ordering::Relaxed) > 0
        || left_running;
    let broken = lost.len() + doubled;
    let back: Vec<String> = back_after.iter().map(|s| format!("{s:.2} s")).collect();
    let row = figures::Row {
        what: format!("faults: service kill -9, PostgreSQL kill -9 and shutdown under {clients} retrying clients"),
        figure: format!(
            "{broken} of {} votes lost or doubled; back in {}{}",
            figures::thousands(acked.len() as u64),
            back.join(" / "),
            if failed {
                " (a 500, a 503 without `Retry-After` or PostgreSQL left running: see the bench's output)"
            } else {
                ""
            }
        ),
        baseline: String::new(),
        target: format!("none lost ({})", figures::met(!failed)),
        command: "`cargo bench --bench faults`".to_owned(),
    };
    let full_run = ["FAULT_PHASE_SECONDS", "FAULT_CLIENTS"].iter().all(|v| std::env::var_os(v).is_none());
    figures::record(&[row], full_run);
    if failed {
        eprintln!("FAILED: see the RESULT lines (service log: {})", h.log.display());
        let _ = dir.keep();
        std::process::exit(1);
    }
    println!("all acknowledged votes stored exactly once; no 500; refusals were 503 with Retry-After");
}

/// Votes in the database: (assignment, item handle) → (rows, rating). Read with the
/// cluster started by the CLI (the service is running, so it is adopted).
async fn stored_votes(h: &Harness) -> HashMap<(String, String), (i64, i64)> {
    use sqlx::ConnectOptions;
    let options = sqlx::postgres::PgConnectOptions::new()
        .socket(atelier::db::embedded::socket_dir_for(&h.data_dir.join("postgres")))
        .port(5432)
        .username(atelier::db::embedded::SUPERUSER)
        .database(atelier::db::EMBEDDED_DATABASE);
    let mut conn = options.connect().await.expect("connect to the service's PostgreSQL");
    let rows: Vec<(String, String, i64, i64)> = sqlx::query_as(
        "SELECT assignment_id::text, item_id::text, count(*), max((answer->>'rating')::bigint)
         FROM responses GROUP BY 1, 2",
    )
    .fetch_all(&mut conn)
    .await
    .expect("responses");
    // Workers know items by their handles in the assignment (the ids the
    // votes were acknowledged under): stored votes are keyed the same way.
    let handle = |a: &str, i: &str| -> String {
        match (a.parse(), i.parse()) {
            (Ok(a), Ok(i)) => atelier::core::work::handles::handle(a, i).to_string(),
            _ => i.to_owned(),
        }
    };
    rows.into_iter().map(|(a, i, n, r)| ((a.clone(), handle(&a, &i)), (n, r))).collect()
}
