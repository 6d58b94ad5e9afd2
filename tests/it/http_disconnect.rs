//! Clients that vanish mid-request lose nothing for anyone else: while a
//! share of the clients disconnect at random moments (half-sent bodies,
//! right after the request, mid-response, many at the same instant), the
//! others keep voting, joining and creating invitations; afterwards every
//! acknowledged write is stored exactly once and visible, no connection is
//! left idle in a transaction, PostgreSQL logged no nested `BEGIN`, and
//! nothing waits on a lock.

use crate::fixtures::{admin_token, api, join, open_vton_campaign, WorkerSession};
use crate::support::{say_skipped, server_log, TestApp};
use rand::Rng;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use sqlx::{Connection, PgConnection};
use std::sync::Arc;
use std::time::Duration;
use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::TcpStream;
use tokio::sync::Barrier;

/// A raw HTTP/1.1 request, so the test decides when the connection dies.
struct RawRequest {
    head: String,
    body: Vec<u8>,
}

impl RawRequest {
    fn new(method: &str, path: &str, headers: &[(&str, &str)], body: &[u8]) -> Self {
        let mut head = format!("{method} {path} HTTP/1.1\r\nhost: localhost\r\ncontent-length: {}\r\n", body.len());
        for (name, value) in headers {
            head.push_str(&format!("{name}: {value}\r\n"));
        }
        head.push_str("\r\n");
        Self { head, body: body.to_vec() }
    }
}

/// The moments a client can leave.
#[derive(Clone, Copy, Debug)]
enum Leave {
    /// Headers and half the body sent.
    HalfBody,
    /// The whole request sent, then gone at once.
    AfterRequest,
    /// The whole request sent, gone microseconds to milliseconds later (mid-handling).
    MidHandling,
    /// Gone after reading the first bytes of the response.
    MidResponse,
}

/// Mid-handling twice: it is the moment that leaves work half done.
const LEAVES: [Leave; 5] =
    [Leave::HalfBody, Leave::MidHandling, Leave::AfterRequest, Leave::MidHandling, Leave::MidResponse];

async fn send_and_leave(addr: &str, req: &RawRequest, leave: Leave, barrier: Option<Arc<Barrier>>) {
    let Ok(mut stream) = TcpStream::connect(addr).await else { return };
    // A reset, not a polite close: the abrupt way a tab or a network goes away.
    let _ = stream.set_zero_linger();
    let _ = stream.write_all(req.head.as_bytes()).await;
    let body = match leave {
        Leave::HalfBody => &req.body[..req.body.len() / 2],
        _ => &req.body[..],
    };
    let _ = stream.write_all(body).await;
    match leave {
        Leave::HalfBody | Leave::AfterRequest => {}
        Leave::MidHandling => {
            // Anywhere in the first milliseconds of the handler, at microsecond resolution.
            let until = std::time::Instant::now() + Duration::from_micros(rand::rng().random_range(0..3000));
            while std::time::Instant::now() < until {
                tokio::task::yield_now().await;
            }
        }
        Leave::MidResponse => {
            let mut first = [0u8; 12];
            let _ = tokio::time::timeout(Duration::from_secs(5), stream.read(&mut first)).await;
        }
    }
    if let Some(b) = barrier {
        // Several clients drop at the same instant.
        b.wait().await;
    }
    drop(stream);
}

/// A worker session reduced to the raw headers a disconnecting client sends.
async fn raw_worker(app: &TestApp, invitation: &str, worker_id: &str) -> (WorkerSession, String) {
    let w = join(app, invitation, worker_id).await;
    // reqwest's jar is not readable: open the link once more by hand to see the cookie.
    let resp = reqwest::Client::builder()
        .redirect(reqwest::redirect::Policy::none())
        .build()
        .expect("client")
        .get(app.at(&format!("/join/{invitation}?worker_id={worker_id}")))
        .send()
        .await
        .expect("join");
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .filter_map(|v| v.to_str().ok())
        .find(|v| v.starts_with("atelier_session="))
        .and_then(|v| v.split(';').next())
        .expect("session cookie")
        .to_owned();
    (w, cookie)
}

async fn csrf_for(app: &TestApp, cookie: &str) -> String {
    let me: Value = reqwest::Client::new()
        .get(app.at("/api/v1/me"))
        .header("cookie", cookie)
        .send()
        .await
        .expect("me")
        .json()
        .await
        .expect("json");
    me["csrf_token"].as_str().expect("csrf").to_owned()
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn clients_that_disconnect_mid_request_lose_no_one_elses_acknowledged_writes() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        120,
        2,
        json!({"tasks_per_questionnaire": 8, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2}),
    )
    .await;
    let addr = app.url.trim_start_matches("http://").to_owned();

    // Disconnecting clients with sessions of their own (a worker voting) and
    // an admin token (creating invitations).
    let (leaver, leaver_cookie) = raw_worker(&app, &invitation, "leaver").await;
    let leaver_csrf = csrf_for(&app, &leaver_cookie).await;
    let (_, leaver_view) = leaver.next(&app, &campaign).await;
    let leaver_assignment = leaver_view["assignment"]["id"].as_str().expect("assignment").to_owned();
    let leaver_items: Vec<Value> = leaver_view["items"].as_array().expect("items").clone();
    let bearer = format!("Bearer {admin}");

    let rounds = 12;
    let per_round = 24;
    let mut requests = Vec::new();
    for round in 0..rounds {
        let mut this_round = Vec::new();
        for n in 0..per_round {
            let item = &leaver_items[(round * per_round + n) % leaver_items.len()];
            let vote = serde_json::to_vec(&json!({"item_id": item["id"], "answer": {"rating": 1}})).expect("json");
            // Mostly votes (they take a transaction), then invitations and joins.
            let req = match n % 4 {
                0 | 1 => RawRequest::new(
                    "POST",
                    &format!("/api/v1/work/assignments/{leaver_assignment}/responses"),
                    &[("cookie", &leaver_cookie), ("x-csrf-token", &leaver_csrf), ("content-type", "application/json")],
                    &vote,
                ),
                2 => RawRequest::new(
                    "POST",
                    &format!("/api/v1/admin/campaigns/{campaign}/invitations"),
                    &[("authorization", &bearer)],
                    b"",
                ),
                _ => RawRequest::new("GET", &format!("/join/{invitation}?worker_id=gone-{round}-{n}"), &[], b""),
            };
            this_round.push((req, LEAVES[(n / 4 + round) % LEAVES.len()]));
        }
        requests.push(this_round);
    }
    // A busy database (two backends burning CPU on this small machine) answers
    // slowly, as under real load: the moments in which a dropped request
    // hurts (BEGIN sent, its answer not read yet) grow from microseconds to
    // milliseconds.
    let hogs: Vec<_> = (0..2)
        .map(|_| {
            let options = app.db_options.clone();
            tokio::spawn(async move {
                let mut conn = PgConnection::connect_with(&options).await.expect("hog");
                sqlx::query("SET statement_timeout = '3s'").execute(&mut conn).await.expect("timeout");
                let _ = sqlx::query("SELECT count(*) FROM generate_series(1, 1000000000)").execute(&mut conn).await;
            })
        })
        .collect();

    // All rounds at once, while the well-behaved clients below work: the
    // load widens the moments in which a dropped request hurts.
    let mut leavers = tokio::task::JoinSet::new();
    for round in requests {
        let barrier = Arc::new(Barrier::new(round.len().div_ceil(2)));
        for (n, (req, leave)) in round.into_iter().enumerate() {
            // Half of each round leaves at one shared instant.
            let barrier = (n % 2 == 0).then(|| barrier.clone());
            let addr = addr.clone();
            leavers.spawn(async move { send_and_leave(&addr, &req, leave, barrier).await });
        }
    }

    // Meanwhile, well-behaved clients work and remember what was acknowledged.
    let app = Arc::new(app);
    let mut voters = tokio::task::JoinSet::new();
    for v in 0..8 {
        let app = app.clone();
        let (campaign, invitation) = (campaign.clone(), invitation.clone());
        voters.spawn(async move {
            let w = join(&app, &invitation, &format!("voter-{v}")).await;
            let (status, view) = w.next(&app, &campaign).await;
            assert_eq!(status, StatusCode::OK, "{view}");
            let assignment = view["assignment"]["id"].as_str().expect("assignment").to_owned();
            let mut acknowledged = Vec::new();
            for (i, item) in view["items"].as_array().expect("items").iter().enumerate() {
                let rating = 1 + (v + i) % 3;
                let (status, body) = w
                    .post(
                        &app,
                        &format!("/api/v1/work/assignments/{assignment}/responses"),
                        json!({"item_id": item["id"], "answer": {"rating": rating}}),
                    )
                    .await;
                assert_eq!(status, StatusCode::OK, "{body}");
                acknowledged.push((assignment.clone(), item["id"].as_str().expect("item").to_owned(), rating));
            }
            acknowledged
        });
    }
    let mut creators = tokio::task::JoinSet::new();
    for _ in 0..3 {
        let (app, admin, campaign) = (app.clone(), admin.clone(), campaign.clone());
        creators.spawn(async move {
            let mut made = Vec::new();
            for _ in 0..6 {
                let (status, inv) =
                    api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), None)
                        .await;
                assert_eq!(status, StatusCode::CREATED, "{inv}");
                made.push(inv["token"].as_str().expect("token").to_owned());
            }
            made
        });
    }
    let mut joiners = tokio::task::JoinSet::new();
    for j in 0..6 {
        let (app, invitation) = (app.clone(), invitation.clone());
        joiners.spawn(async move { join(&app, &invitation, &format!("joiner-{j}")).await });
    }

    while leavers.join_next().await.is_some() {}
    for hog in hogs {
        hog.await.expect("hog");
    }
    let mut votes = Vec::new();
    while let Some(r) = voters.join_next().await {
        votes.extend(r.expect("voter"));
    }
    let mut invitations = Vec::new();
    while let Some(r) = creators.join_next().await {
        invitations.extend(r.expect("creator"));
    }
    let mut joined = Vec::new();
    while let Some(r) = joiners.join_next().await {
        joined.push(r.expect("joiner"));
    }

    // Requests whose clients left finish on their own; wait for the service to go quiet.
    let mut observer = PgConnection::connect_with(&app.db_options).await.expect("observer");
    for _ in 0..100 {
        let active: i64 = sqlx::query_scalar(
            "SELECT count(*) FROM pg_stat_activity
             WHERE datname = current_database() AND pid <> pg_backend_pid() AND state = 'active'",
        )
        .fetch_one(&mut observer)
        .await
        .expect("activity");
        if active == 0 {
            break;
        }
        tokio::time::sleep(Duration::from_millis(100)).await;
    }
    tokio::time::sleep(Duration::from_millis(300)).await;

    let stuck: Vec<String> = sqlx::query_scalar(
        "SELECT coalesce(query, '') FROM pg_stat_activity
         WHERE datname = current_database() AND state LIKE 'idle in transaction%'",
    )
    .fetch_all(&mut observer)
    .await
    .expect("activity");
    assert!(stuck.is_empty(), "connections left idle in transaction, last queries: {stuck:?}");
    let waiting: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid
         WHERE NOT l.granted AND a.datname = current_database()",
    )
    .fetch_one(&mut observer)
    .await
    .expect("locks");
    assert_eq!(waiting, 0, "nothing waits on a lock");

    // Every acknowledged vote is stored exactly once, as given, and visible from outside.
    assert_eq!(votes.len(), 8 * 8);
    for (assignment, handle, rating) in &votes {
        let assignment_id: uuid::Uuid = assignment.parse().expect("uuid");
        let item = crate::fixtures::items_of_handles(&app, assignment_id, &[handle.parse().expect("uuid")]).await[0];
        let item = item.to_string();
        let stored: Vec<Value> =
            sqlx::query_scalar("SELECT answer FROM responses WHERE assignment_id = $1::uuid AND item_id = $2::uuid")
                .bind(assignment)
                .bind(&item)
                .fetch_all(&mut observer)
                .await
                .expect("responses");
        assert_eq!(stored, vec![json!({"rating": rating})], "vote on {item} in {assignment}");
    }
    // Every acknowledged invitation exists and works.
    for token in &invitations {
        let n: i64 = sqlx::query_scalar("SELECT count(*) FROM invitations WHERE token = $1")
            .bind(token)
            .fetch_one(&mut observer)
            .await
            .expect("invitation");
        assert_eq!(n, 1, "invitation {token} was acknowledged");
        let joined = join(&app, token, &format!("check-{token}")).await;
        assert!(!joined.csrf.is_empty());
    }
    // Every acknowledged join kept its worker and its session.
    for w in &joined {
        let (status, me) = w.get(&app, "/api/v1/me").await;
        assert_eq!(status, StatusCode::OK, "{me}");
        assert_eq!(me["user"]["id"], w.user_id.as_str());
        assert_eq!(me["csrf_token"], w.csrf.as_str());
    }
    // Admin requests (which update the token's last use) do not hang on a held lock.
    let admin_request = reqwest::Client::builder().timeout(Duration::from_secs(10)).build().expect("client");
    let resp = admin_request
        .get(app.at(&format!("/api/v1/admin/campaigns/{campaign}")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("admin request does not hang");
    assert_eq!(resp.status(), StatusCode::OK);

    match server_log() {
        Some(log) => {
            let text = std::fs::read_to_string(&log).unwrap_or_default();
            let marker = format!("db={} ", app.database);
            let nested: Vec<&str> = text
                .lines()
                .filter(|l| l.contains(&marker) && l.contains("already a transaction in progress"))
                .collect();
            assert!(nested.is_empty(), "PostgreSQL saw BEGIN inside an abandoned transaction: {nested:?}");
        }
        None => say_skipped("http_disconnect: PostgreSQL's log is not readable with DATABASE_URL; log check skipped"),
    }
}
