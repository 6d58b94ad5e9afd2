//! Admin pages of a 30,000-question A100 campaign (the size the issue
//! measured at 33 MB and 1.24 s for one page): each page's server time and
//! size, median of several views, beside the floor of the same stack (the
//! API tokens page: a session, a CSRF token, one small query, a template).
//!
//! Run with `cargo bench --bench admin_pages` (about two minutes; release
//! build, the embedded PostgreSQL). `ADMIN_PAGES_QUESTIONS` changes the size.

#[path = "support/figures.rs"]
mod figures;
#[path = "support/service.rs"]
mod service;

use serde_json::{json, Value};
use service::admin;
use std::time::Instant;

/// Views of each page timed; the median is reported.
const VIEWS: usize = 7;

fn question(id: &str) -> Value {
    json!({
        "id": id,
        "outfit": [{"image": format!("/img/{id}/top.png"), "category": "Tops"}, {"image": format!("/img/{id}/pants.png"), "category": "Pants"}],
        "blank_category": "Shoes",
        "choices": (1..=5).map(|c| json!({"id": format!("{id}-c{c}"), "image": format!("/img/{id}/c{c}.png"), "category": "Shoes"})).collect::<Vec<_>>(),
    })
}

/// The median server time (ms) of `VIEWS` views after one warm-up, and the size.
async fn median_ms(client: &reqwest::Client, url: &str) -> (f64, usize) {
    let mut times = Vec::with_capacity(VIEWS);
    let mut bytes = 0;
    for view in 0..=VIEWS {
        let start = Instant::now();
        let r = client.get(url).send().await.expect("page");
        assert!(r.status().is_success(), "{url}: {}", r.status());
        bytes = r.bytes().await.expect("body").len();
        if view > 0 {
            times.push(start.elapsed().as_secs_f64() * 1000.0);
        }
    }
    times.sort_by(f64::total_cmp);
    (times[times.len() / 2], bytes)
}

/// The first view's server time (ms) and the median of `VIEWS` later ones.
async fn first_and_median_ms(client: &reqwest::Client, url: &str) -> (f64, f64) {
    let start = Instant::now();
    let response = client.get(url).send().await.expect("a page");
    assert!(response.status().is_success(), "{url}: {}", response.status());
    response.bytes().await.expect("its body");
    let first = start.elapsed().as_secs_f64() * 1000.0;
    (first, median_ms(client, url).await.0)
}

#[tokio::main]
async fn main() {
    let questions: usize = std::env::var("ADMIN_PAGES_QUESTIONS").ok().and_then(|s| s.parse().ok()).unwrap_or(30_000);
    let dir = tempfile::tempdir().expect("tempdir");
    let http = reqwest::Client::new();
    let (h, token, process) = service::start(dir.path(), &http).await;
    let c = admin(
        &http,
        &h,
        &token,
        "/api/v1/admin/campaigns",
        json!({"kind": "a100-lat", "name": "pages", "config": {"participants": 3, "shuffle_questions": false}}),
    )
    .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let set: Vec<Value> = (0..questions).map(|n| question(&format!("q{n:05}"))).collect();
    let client = service::logged_in_browser(&h).await;
    let campaign_page = h.url(&format!("/admin/campaigns/{id}"));
    let start = Instant::now();
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{id}/a100/questions"), json!({"questions": set})).await;
    println!("imported {questions} questions in {:.2} s", start.elapsed().as_secs_f64());
    // The campaign page in each state an admin passes through: its first
    // view in that state (what the admin meets after the action) and the
    // median of later ones.
    let mut states = Vec::new();
    states.push(("imported", first_and_median_ms(&client, &campaign_page).await));
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{id}/batches"), json!({"seed": 1})).await;
    states.push(("batched", first_and_median_ms(&client, &campaign_page).await));
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{id}/state"), json!({"state": "open"})).await;
    states.push(("open", first_and_median_ms(&client, &campaign_page).await));
    for note in ["v1", "v2"] {
        admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{id}/releases"), json!({"note": note})).await;
    }
    let (floor, floor_bytes) = median_ms(&client, &h.url("/admin/tokens")).await;
    println!("RESULT floor (the API tokens page): {floor:.1} ms, {floor_bytes} bytes");
    // The diff's own floor: downloading both archives and reading them
    // through (gunzip and tar, nothing kept), which a first comparison must do.
    let start = Instant::now();
    for number in [1, 2] {
        let url = h.url(&format!("/api/v1/admin/campaigns/{id}/releases/{number}/archive"));
        let archive = http.get(url).bearer_auth(&token).send().await.expect("archive").bytes().await.expect("bytes");
        atelier::core::releases::packing::unpack_only(&archive, |_| false).expect("a release archive");
    }
    let read_through = start.elapsed().as_secs_f64() * 1000.0;
    println!("RESULT both archives downloaded and read through: {read_through:.1} ms");
    // A pair's first comparison (both archives read; kept afterwards), once.
    let start = Instant::now();
    let first = client.get(h.url(&format!("/admin/campaigns/{id}/releases/diff?from=2&to=1"))).send().await;
    assert!(first.is_ok_and(|r| r.status().is_success()), "the diff page");
    let ms = start.elapsed().as_secs_f64() * 1000.0;
    let first_diff = ms;
    println!(
        "RESULT release diff, first view of a pair at {questions} questions: {ms:.1} ms ({:.1}x the floor)",
        ms / floor
    );
    let mut pages = std::collections::BTreeMap::new();
    for (what, path) in [
        ("campaign list", "/admin".to_owned()),
        ("campaign page", format!("/admin/campaigns/{id}")),
        ("A100 page, first page of questions", format!("/admin/campaigns/{id}/a100")),
        ("A100 page, last page of questions", format!("/admin/campaigns/{id}/a100?page=300")),
        ("pilot page", format!("/admin/campaigns/{id}/a100/pilot")),
        ("payouts page", format!("/admin/campaigns/{id}/payouts")),
        ("study preview", format!("/admin/campaigns/{id}/preview")),
        ("data browser, first page", format!("/admin/campaigns/{id}/data")),
        ("data browser, last page", format!("/admin/campaigns/{id}/data?page=301")),
        (
            "data browser, an answer filter (reads every answer)",
            format!("/admin/campaigns/{id}/data?status=unanswered"),
        ),
        (
            "data browser, sorted by least agreement (reads every answer)",
            format!("/admin/campaigns/{id}/data?sort=least-agreement"),
        ),
        ("release diff (later views: the kept comparison)", format!("/admin/campaigns/{id}/releases/diff?from=1&to=2")),
    ] {
        let (ms, bytes) = median_ms(&client, &h.url(&path)).await;
        pages.insert(what, (ms, bytes as f64 / 1000.0));
        println!(
            "RESULT {what} at {questions} questions: {ms:.1} ms median ({:.1}x the floor), {:.1} kB",
            ms / floor,
            bytes as f64 / 1000.0
        );
    }
    let page = |what: &str| pages.get(what).copied().unwrap_or((f64::NAN, f64::NAN));
    let command = "`cargo bench --bench admin_pages`".to_owned();
    let floor_cell = format!("the API tokens page (session, one query, a template) {floor:.1} ms");
    let listed = [
        "campaign page",
        "A100 page, first page of questions",
        "A100 page, last page of questions",
        "pilot page",
        "payouts page",
        "study preview",
        "campaign list",
    ];
    let slowest = listed.iter().map(|w| page(w).0).fold(0.0, f64::max);
    let heaviest = listed.iter().map(|w| page(w).1).fold(0.0, f64::max);
    let browser = [
        "data browser, first page",
        "data browser, last page",
        "data browser, an answer filter (reads every answer)",
        "data browser, sorted by least agreement (reads every answer)",
    ];
    let later = page("release diff (later views: the kept comparison)");
    let mut rows = vec![
        figures::Row {
            what: format!("admin pages of a {}-question A100 campaign, median of 7 views: campaign page / A100 page (first, last page of questions) / pilot / payouts / preview / campaign list", figures::thousands(questions as u64)),
            figure: format!(
                "{:.1} ms / {:.1}, {:.1} ms / {:.1} ms / {:.1} ms / {:.1} ms / {:.1} ms; every page ≤ {heaviest:.0} kB",
                page(listed[0]).0, page(listed[1]).0, page(listed[2]).0, page(listed[3]).0, page(listed[4]).0,
                page(listed[5]).0, page(listed[6]).0
            ),
            baseline: floor_cell.clone(),
            target: format!("< 300 ms, < 1 MB ({})", figures::met(slowest < 300.0 && heaviest < 1000.0)),
            command: command.clone(),
        },
        figures::Row {
            what: format!("the release diff page at {} questions: first view of a pair / later views (the kept comparison)", figures::thousands(questions as u64)),
            figure: format!("{first_diff:.1} ms / {:.1} ms median, {:.1} kB", later.0, later.1),
            baseline: format!(
                "{floor_cell}; both archives downloaded and read through (gunzip, tar), nothing else: {read_through:.1} ms"
            ),
            target: format!(
                "< 300 ms (first view of a pair: {}; later views: {})",
                figures::met(first_diff < 300.0),
                figures::met(later.0 < 300.0)
            ),
            command: command.clone(),
        },
        figures::Row {
            what: format!("data browser at {} questions (no answers): first page / last page / an answer filter (`status=unanswered`) / sorted (`sort=least-agreement`)", figures::thousands(questions as u64)),
            figure: format!(
                "{:.1} / {:.1} / {:.1} / {:.1} ms median, ≤ {:.0} kB",
                page(browser[0]).0,
                page(browser[1]).0,
                page(browser[2]).0,
                page(browser[3]).0,
                browser.iter().map(|w| page(w).1).fold(0.0, f64::max)
            ),
            baseline: floor_cell,
            target: format!("< 300 ms, < 1 MB ({})", figures::met(browser.iter().all(|w| page(w).0 < 300.0 && page(w).1 < 1000.0))),
            command,
        },
    ];
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{id}/state"), json!({"state": "closed"})).await;
    states.push(("closed", first_and_median_ms(&client, &campaign_page).await));
    for (state, (first, median)) in &states {
        println!(
            "RESULT campaign page, {state}, at {questions} questions: first view {first:.1} ms, median {median:.1} ms"
        );
    }
    let slowest_state = states.iter().map(|(_, (first, median))| first.max(*median)).fold(0.0, f64::max);
    rows.push(figures::Row {
        what: format!(
            "the campaign page of a {}-question A100 campaign in each state, first view / median of 7: imported / batched / open / closed",
            figures::thousands(questions as u64)
        ),
        figure: states
            .iter()
            .map(|(_, (first, median))| format!("{first:.1} / {median:.1} ms"))
            .collect::<Vec<_>>()
            .join("; "),
        baseline: format!("the API tokens page (session, one query, a template) {floor:.1} ms"),
        target: format!("< 300 ms in every state ({})", figures::met(slowest_state < 300.0)),
        command: "`cargo bench --bench admin_pages`".to_owned(),
    });
    figures::record(&rows, std::env::var_os("ADMIN_PAGES_QUESTIONS").is_none());
    service::signal(process.id() as i32, nix::sys::signal::Signal::SIGTERM);
    tokio::time::sleep(std::time::Duration::from_secs(2)).await;
}
