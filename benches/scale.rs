//! Scale run at VTON-QBench size: the release service on its embedded
//! PostgreSQL imports 62,688 try-on triplets in one upload, crowd workers
//! rate them in questionnaires of 50 (five sanity tasks) until every
//! questionnaire has its annotators, and then the admin's views, exports and
//! a release are timed with the service's resident memory (current and peak).
//!
//! Run with `cargo bench --bench scale` (about five minutes on two cores;
//! `SCALE` shrinks it, e.g. `SCALE=0.1`; `SCALE_ANNOTATORS` sets the
//! annotators per questionnaire, 7 by default as in the release; `SCALE_PAUSE`
//! waits that many seconds after the rating, printing where the data is, before
//! the admin's views: time for autovacuum, or for a look with `psql`;
//! `SCALE_KEEP` leaves the service running on its data afterwards).

#[path = "support/figures.rs"]
mod figures;
#[path = "support/service.rs"]
mod service;

use futures_util::StreamExt;
use serde_json::{json, Value};
use service::{admin, reset_peak, rss_mb, Harness};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

const RELEASE_IMAGES: f64 = 62_688.0;
const SANITY_ITEMS: usize = 40;
const CLIENTS: usize = 32;

/// What a careful rater answers for image `n` (sanity tasks expect the same):
/// the harness needs agreement, or every questionnaire would be dropped.
fn rating_of(n: usize) -> u8 {
    (n % 3 + 1) as u8
}

fn triplets_csv(images: usize) -> String {
    let mut csv = String::from("id,garment,person,tryon,reference,model,category,dataset,expected\n");
    let row = |csv: &mut String, id: String, n: usize, expected: String| {
        csv.push_str(&format!(
            "{id},/release/garment/{n:06}.jpg,/release/person/{n:06}.jpg,/release/tryon/m{}/{n:06}.jpg,/release/reference/{n:06}.jpg,model-{},{},vitonhd,{expected}\n",
            n % 9,
            n % 9,
            ["upper_body", "lower_body", "dresses"][n % 3],
        ));
    };
    for n in 0..images {
        row(&mut csv, format!("img-{n}"), n, String::new());
    }
    for s in 0..SANITY_ITEMS {
        let n = images + s;
        row(&mut csv, format!("sanity-{s}"), n, rating_of(n).to_string());
    }
    csv
}

/// The image number in a try-on path (`.../000123.jpg`).
fn number_in(payload: &Value) -> usize {
    payload["tryon"]
        .as_str()
        .and_then(|p| p.rsplit('/').next())
        .and_then(|f| f.trim_end_matches(".jpg").parse().ok())
        .unwrap_or(0)
}

/// One worker: joins, rates their questionnaire, submits it. `false` when no
/// questionnaire was left.
async fn one_worker(h: &Harness, invitation: &str, campaign: &str, n: u64, images: usize, votes: &AtomicU64) -> bool {
    let Ok(client) = reqwest::Client::builder().cookie_store(true).redirect(reqwest::redirect::Policy::none()).build()
    else {
        return false;
    };
    let Ok(_) = client.get(h.url(&format!("/join/{invitation}?worker_id=scale-{n}"))).send().await else {
        return false;
    };
    let Some(me) = client.get(h.url("/api/v1/me")).send().await.ok() else { return false };
    let Some(csrf) = me.json::<Value>().await.ok().and_then(|m| Some(m["csrf_token"].as_str()?.to_owned())) else {
        return false;
    };
    let post = |path: String, body: Value| client.post(h.url(&path)).header("x-csrf-token", &csrf).json(&body).send();
    let Some(view) = post(format!("/api/v1/work/campaigns/{campaign}/assignment"), json!({})).await.ok() else {
        return false;
    };
    let Ok(view) = view.json::<Value>().await else { return false };
    let Some(assignment) = view["assignment"]["id"].as_str() else { return false };
    for (i, item) in view["items"].as_array().into_iter().flatten().enumerate() {
        // One rater in ten slips on one image in ten; one in eight rates
        // every image 3 but the sanity tasks right (curation's "identical"
        // rule removes them, so curation has something to record).
        let number = number_in(&item["payload"]);
        let careful = rating_of(number);
        let rating = if n % 8 == 4 && number < images {
            3
        } else if n.is_multiple_of(10) && i.is_multiple_of(10) {
            careful % 3 + 1
        } else {
            careful
        };
        let body = json!({"item_id": item["id"], "answer": {"rating": rating}});
        if post(format!("/api/v1/work/assignments/{assignment}/responses"), body).await.is_ok() {
            votes.fetch_add(1, Ordering::Relaxed);
        }
    }
    let _ = post(format!("/api/v1/work/assignments/{assignment}/complete"), json!({})).await;
    true
}

/// Seconds until a page no longer says `marker` (its figures being computed
/// or updated in the background), asked for every 50 ms.
async fn until_page_lacks(client: &reqwest::Client, url: &str, marker: &str) -> f64 {
    let start = Instant::now();
    while client.get(url).send().await.expect("page").text().await.expect("html").contains(marker) {
        tokio::time::sleep(Duration::from_millis(50)).await;
    }
    start.elapsed().as_secs_f64()
}

/// Times one GET (status checked); seconds and bytes.
async fn timed_get(client: &reqwest::Client, url: &str, token: Option<&str>) -> (f64, usize) {
    let start = Instant::now();
    let mut request = client.get(url);
    if let Some(t) = token {
        request = request.bearer_auth(t);
    }
    let r = request.send().await.expect("request");
    assert!(r.status().is_success(), "{url}: {}", r.status());
    let bytes = r.bytes().await.expect("body").len();
    (start.elapsed().as_secs_f64(), bytes)
}

/// Every step reported so far: what, seconds, the service's peak RSS (MB).
static STEPS: std::sync::Mutex<Vec<(String, f64, f64, String)>> = std::sync::Mutex::new(Vec::new());

fn report(what: &str, seconds: f64, detail: &str, pid: u32) {
    let (now, peak) = rss_mb(pid);
    println!("RESULT {what}: {seconds:.3} s{detail}; service RSS {now:.0} MB now, peak {peak:.0} MB");
    if let Ok(mut steps) = STEPS.lock() {
        steps.push((what.to_owned(), seconds, peak, detail.to_owned()));
    }
}

/// A reported step's seconds and peak RSS (NaN when it was not reported).
fn step(what: &str) -> (f64, f64) {
    let steps = STEPS.lock().map(|s| s.clone()).unwrap_or_default();
    steps.iter().find(|(w, ..)| w == what).map_or((f64::NAN, f64::NAN), |(_, s, p, _)| (*s, *p))
}

/// What a reported step said beside its time.
fn detail(what: &str) -> String {
    let steps = STEPS.lock().map(|s| s.clone()).unwrap_or_default();
    steps.into_iter().find(|(w, ..)| w == what).map(|(.., d)| d).unwrap_or_default()
}

/// The table rows of a run (see `figures`); `cut_rss`: the service's RSS
/// (MB) before the cut and two seconds after it.
fn rows(stored: u64, clients: usize, archive_mb: f64, verify: (f64, f64), cut_rss: (f64, f64)) -> Vec<figures::Row> {
    let command = "`cargo bench --bench scale`".to_owned();
    let row = |what: &str, figure: String, target: String| figures::Row {
        what: what.to_owned(),
        figure,
        baseline: String::new(),
        target,
        command: command.clone(),
    };
    let s = |what: &str| step(what).0;
    let (cut, cut_peak) = step("release cut");
    let vton_warm = s("VTON page, second view").max(s("VTON page, third view"));
    let vton_after = s("VTON page, right after the change (the last figures, marked)");
    let browser = [
        "data browser, first page",
        "data browser, excluded answers (`excluded=yes`)",
        "data browser, a sanity task's page",
    ];
    let browser_second: Vec<f64> = browser.iter().map(|w| s(&format!("{w}, second view"))).collect();
    let (rating, _) = step("rating (every questionnaire filled)");
    vec![
        row(
            "VTON-QBench import: 62,688 triplets in one upload",
            format!("{:.2} s", s("import (one upload)")),
            format!("< 5 s ({})", figures::met(s("import (one upload)") < 5.0)),
        ),
        row(
            &format!("{} ratings by {clients} clients, with joins and submissions", figures::thousands(stored)),
            format!("{rating:.1} s ({}/s)", figures::thousands((stored as f64 / rating) as u64)),
            String::new(),
        ),
        row(
            "campaign page at VTON-QBench size: first view after the burst / later / 4 at once",
            format!(
                "{:.3} s / {:.3}, {:.3} s / {:.3} s",
                s("campaign page, first view"),
                s("campaign page, second view"),
                s("campaign page, third view"),
                s("campaign page, 4 at once")
            ),
            format!("< 100 ms ({})", figures::met(s("campaign page, second view").max(s("campaign page, third view")) < 0.1)),
        ),
        row(
            "ground truth at VTON-QBench size: first / cached; CSV; responses CSV; questionnaires CSV",
            format!(
                "{:.2} s / {:.2} s; {:.2} s; {:.2} s; {:.2} s (peak {:.0} MB at first)",
                s("ground truth JSON, first"),
                s("ground truth JSON, second"),
                s("ground truth CSV, first"),
                s("responses CSV, first"),
                s("questionnaires CSV, first"),
                step("ground truth JSON, first").1
            ),
            format!("GT < 3 s ({})", figures::met(s("ground truth JSON, first") < 3.0)),
        ),
        row(
            "VTON page at VTON-QBench size: first view / its figures first shown after / warm / right after a change / 4 at once / new figures shown after",
            format!(
                "{:.3} s / {:.2} s / {:.3}, {:.3} s / {vton_after:.3} s / {:.3} s / {:.1} s",
                s("VTON page, first view"),
                s("VTON page, until its figures are first shown"),
                s("VTON page, second view"),
                s("VTON page, third view"),
                s("VTON page, 4 at once"),
                s("VTON page, until the new figures are shown")
            ),
            format!("< 100 ms warm, < 300 ms after a change ({})", figures::met(vton_warm < 0.1 && vton_after < 0.3)),
        ),
        row(
            "VTON curation at VTON-QBench size: first run / re-run when nothing changed",
            format!("{:.2} s / {:.2} s", s("curation, first run"), s("curation, re-run, nothing changed")),
            format!("a re-run writes nothing ({})", figures::met(detail("curation, re-run, nothing changed").contains(", 0 changed"))),
        ),
        row(
            "data browser at VTON-QBench size: first page / `excluded=yes` / a sanity task's page (answered in every questionnaire, 100 answers a page), second views",
            format!("{:.0} / {:.0} / {:.0} ms", browser_second[0] * 1e3, browser_second[1] * 1e3, browser_second[2] * 1e3),
            format!("< 300 ms ({})", figures::met(browser_second.iter().all(|t| *t < 0.3))),
        ),
        row(
            "a release at VTON-QBench size, with the `hf/` folder (Parquet, card, Croissant)",
            format!(
                "{cut:.2} s, service {:.0} MB before, peak {cut_peak:.0} MB, {:.0} MB 2 s after; archive {archive_mb:.1} MB",
                cut_rss.0, cut_rss.1
            ),
            format!("< 5 s ({}), RSS < 300 MB ({})", figures::met(cut < 5.0), figures::met(cut_peak < 300.0)),
        ),
        row(
            "`atelier release verify` of that release (streams the archive, compares every file by digest)",
            format!("{:.2} s, peak {:.0} MB", verify.0, verify.1),
            format!("< 300 MB ({})", figures::met(verify.1 < 300.0)),
        ),
    ]
}

#[tokio::main]
async fn main() {
    let scale: f64 = std::env::var("SCALE").ok().and_then(|s| s.parse().ok()).unwrap_or(1.0);
    let annotators: u64 = std::env::var("SCALE_ANNOTATORS").ok().and_then(|s| s.parse().ok()).unwrap_or(7);
    let images = (RELEASE_IMAGES * scale).round() as usize;
    let dir = tempfile::tempdir().expect("tempdir");
    let http = reqwest::Client::new();
    let (h, token, process) = service::start(dir.path(), &http).await;
    let h = Arc::new(h);
    let pid = process.id();
    println!("scale run: {images} images, {annotators} annotators per questionnaire, service log {}", h.log.display());

    let config = json!({"tasks_per_questionnaire": 50, "sanity_per_questionnaire": 5,
                        "annotators_per_questionnaire": annotators, "background": []});
    let campaign = admin(
        &http,
        &h,
        &token,
        "/api/v1/admin/campaigns",
        // Every client joins from this one address: no per-address limit.
        json!({"kind": "vton", "name": "scale", "config": config, "settings": {"joins_per_address": 0}}),
    )
    .await;
    let campaign = campaign["id"].as_str().expect("id").to_owned();
    let csv = triplets_csv(images);
    reset_peak(pid);
    let start = Instant::now();
    let r = http
        .post(h.url(&format!("/api/v1/admin/campaigns/{campaign}/vton/triplets")))
        .bearer_auth(&token)
        .header("content-type", "text/csv")
        .body(csv.clone())
        .send()
        .await
        .expect("import");
    assert!(r.status().is_success(), "import: {} {}", r.status(), r.text().await.unwrap_or_default());
    report(
        "import (one upload)",
        start.elapsed().as_secs_f64(),
        &format!(", {:.1} MB CSV", csv.len() as f64 / 1e6),
        pid,
    );
    let start = Instant::now();
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/batches"), json!({"seed": 1})).await;
    admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/state"), json!({"state": "open"})).await;
    report("batches formed", start.elapsed().as_secs_f64(), "", pid);
    let invitation =
        admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), Value::Null).await;
    let invitation = invitation["token"].as_str().expect("token").to_owned();

    reset_peak(pid);
    let start = Instant::now();
    let votes = Arc::new(AtomicU64::new(0));
    let next = Arc::new(AtomicU64::new(0));
    let mut clients = tokio::task::JoinSet::new();
    for _ in 0..CLIENTS {
        let (h, invitation, campaign, votes, next) =
            (h.clone(), invitation.clone(), campaign.clone(), votes.clone(), next.clone());
        clients.spawn(async move {
            while one_worker(&h, &invitation, &campaign, next.fetch_add(1, Ordering::Relaxed), images, &votes).await {}
        });
    }
    while clients.join_next().await.is_some() {}
    let seconds = start.elapsed().as_secs_f64();
    let stored = votes.load(Ordering::Relaxed);
    report(
        "rating (every questionnaire filled)",
        seconds,
        &format!(", {stored} ratings, {:.0} ratings/s with joins and submissions", stored as f64 / seconds),
        pid,
    );

    // The admin's views, as a browser (the campaign page) and as scripts.
    let browser = service::logged_in_browser(&h).await;
    let page = h.url(&format!("/admin/campaigns/{campaign}"));
    if let Some(secs) = std::env::var("SCALE_PAUSE").ok().and_then(|s| s.parse().ok()) {
        println!("PAUSE data_dir={} campaign={campaign}", h.data_dir.display());
        tokio::time::sleep(std::time::Duration::from_secs(secs)).await;
    }
    for view in ["first", "second", "third"] {
        reset_peak(pid);
        let (s, bytes) = timed_get(&browser, &page, None).await;
        report(&format!("campaign page, {view} view"), s, &format!(", {bytes} bytes"), pid);
    }
    reset_peak(pid);
    let start = Instant::now();
    let four = futures_util::stream::iter(0..4).map(|_| timed_get(&browser, &page, None)).buffer_unordered(4);
    let times: Vec<(f64, usize)> = four.collect().await;
    let slowest = times.iter().map(|t| t.0).fold(0.0, f64::max);
    report("campaign page, 4 at once", start.elapsed().as_secs_f64(), &format!(" (slowest {slowest:.3} s)"), pid);
    for (what, path) in [
        ("ground truth JSON", "ground-truth"),
        ("ground truth CSV", "ground-truth.csv"),
        ("responses CSV", "responses.csv"),
        ("questionnaires CSV", "vton/questionnaires.csv"),
    ] {
        for view in ["first", "second"] {
            reset_peak(pid);
            let url = h.url(&format!("/api/v1/admin/campaigns/{campaign}/{path}"));
            let (s, bytes) = timed_get(&http, &url, Some(&token)).await;
            report(&format!("{what}, {view}"), s, &format!(", {:.1} MB", bytes as f64 / 1e6), pid);
        }
    }
    // The VTON page (its figures kept beside the ground truth), curation
    // recorded and re-run, and the page right after that change.
    let vton_page = h.url(&format!("/admin/campaigns/{campaign}/vton"));
    reset_peak(pid);
    let (s, bytes) = timed_get(&browser, &vton_page, None).await;
    report("VTON page, first view", s, &format!(", {bytes} bytes"), pid);
    // Its figures are derived in the background after the first view (which
    // waits for them at most `FIRST_WAIT`): warm views are those after.
    let shown = until_page_lacks(&browser, &vton_page, "being computed").await;
    report("VTON page, until its figures are first shown", shown, "", pid);
    for view in ["second", "third"] {
        reset_peak(pid);
        let (s, bytes) = timed_get(&browser, &vton_page, None).await;
        report(&format!("VTON page, {view} view"), s, &format!(", {bytes} bytes"), pid);
    }
    let curation = format!("/api/v1/admin/campaigns/{campaign}/vton/curation");
    for run in ["first run", "re-run, nothing changed"] {
        reset_peak(pid);
        let start = Instant::now();
        let summary = admin(&http, &h, &token, &curation, Value::Null).await;
        let detail = format!(", {} excluded, {} changed", summary["responses_excluded"], summary["responses_changed"]);
        report(&format!("curation, {run}"), start.elapsed().as_secs_f64(), &detail, pid);
        if run == "first run" {
            // The exclusions changed the ground truth's inputs.
            reset_peak(pid);
            let (s, _) = timed_get(&browser, &vton_page, None).await;
            report("VTON page, right after the change (the last figures, marked)", s, "", pid);
            reset_peak(pid);
            let start = Instant::now();
            let four =
                futures_util::stream::iter(0..4).map(|_| timed_get(&browser, &vton_page, None)).buffer_unordered(4);
            let times: Vec<(f64, usize)> = four.collect().await;
            let slowest = times.iter().map(|t| t.0).fold(0.0, f64::max);
            report("VTON page, 4 at once", start.elapsed().as_secs_f64(), &format!(" (slowest {slowest:.3} s)"), pid);
            let shown = until_page_lacks(&browser, &vton_page, "being updated").await;
            report("VTON page, until the new figures are shown", shown, "", pid);
        }
    }
    // The data browser: a page of items, an answer filter over every
    // rating, and a sanity task answered in every questionnaire.
    let known = browser.get(h.url(&format!("/admin/campaigns/{campaign}/data?known=yes"))).send().await;
    let known = known.expect("the sanity tasks").text().await.expect("html");
    let marker = format!("/admin/campaigns/{campaign}/data/");
    // The first link to an item (the bulk form's address comes before it).
    let sanity = known
        .match_indices(&marker)
        .filter_map(|(at, _)| known.get(at + marker.len()..at + marker.len() + 36))
        .find(|id| uuid::Uuid::parse_str(id).is_ok())
        .expect("a sanity task's link")
        .to_owned();
    for (what, path) in [
        ("data browser, first page", format!("/admin/campaigns/{campaign}/data")),
        ("data browser, excluded answers (`excluded=yes`)", format!("/admin/campaigns/{campaign}/data?excluded=yes")),
        ("data browser, a sanity task's page", format!("/admin/campaigns/{campaign}/data/{sanity}")),
    ] {
        for view in ["first", "second"] {
            reset_peak(pid);
            let (s, bytes) = timed_get(&browser, &h.url(&path), None).await;
            report(&format!("{what}, {view} view"), s, &format!(", {:.1} kB", bytes as f64 / 1e3), pid);
        }
    }
    // A release (the snapshot, every derived file, the archive stored) and its
    // download; the service's memory before and two seconds after the cut.
    let before_cut = rss_mb(pid).0;
    reset_peak(pid);
    let start = Instant::now();
    let release =
        admin(&http, &h, &token, &format!("/api/v1/admin/campaigns/{campaign}/releases"), json!({"note": "scale"}))
            .await;
    report(
        "release cut",
        start.elapsed().as_secs_f64(),
        &format!(", archive {:.1} MB", release["size"].as_f64().unwrap_or(0.0) / 1e6),
        pid,
    );
    tokio::time::sleep(Duration::from_secs(2)).await;
    let after_cut = rss_mb(pid).0;
    println!("RESULT service RSS around the cut: {before_cut:.0} MB before, {after_cut:.0} MB 2 s after");
    reset_peak(pid);
    let url = h.url(&format!("/api/v1/admin/campaigns/{campaign}/releases/{}/archive", release["number"]));
    let (s, bytes) = timed_get(&http, &url, Some(&token)).await;
    report("release download", s, &format!(", {:.1} MB", bytes as f64 / 1e6), pid);
    // `atelier release verify` of that archive, its peak memory polled.
    let archive = dir.path().join("release.tar.gz");
    let body = http.get(&url).bearer_auth(&token).send().await.expect("archive").bytes().await.expect("bytes");
    std::fs::write(&archive, &body).expect("archive written");
    let start = Instant::now();
    let mut verify = std::process::Command::new(service::BIN)
        .args(["release", "verify"])
        .arg(&archive)
        .stdout(std::process::Stdio::piped())
        .spawn()
        .expect("release verify");
    let mut peak: f64 = 0.0;
    while verify.try_wait().expect("verify runs").is_none() {
        let (_, hwm) = service::rss_mb(verify.id());
        if hwm.is_finite() {
            peak = peak.max(hwm);
        }
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
    let output = verify.wait_with_output().expect("verify output");
    let said = String::from_utf8_lossy(&output.stdout);
    assert!(output.status.success(), "release verify: {said}");
    let verified = start.elapsed().as_secs_f64();
    println!("RESULT release verify (command line): {verified:.3} s, peak {peak:.0} MB; {}", said.trim());
    let archive_mb = release["size"].as_f64().unwrap_or(0.0) / 1e6;
    // Two more cuts of the same data, one after the other: a cut that left
    // something behind would show as a higher peak or a higher RSS after.
    let mut cuts = vec![(step("release cut").0, step("release cut").1, after_cut)];
    for n in [2, 3] {
        reset_peak(pid);
        let start = Instant::now();
        let path = format!("/api/v1/admin/campaigns/{campaign}/releases");
        admin(&http, &h, &token, &path, json!({"note": format!("scale, cut {n}")})).await;
        report(&format!("release cut {n}"), start.elapsed().as_secs_f64(), "", pid);
        let (seconds, peak) = step(&format!("release cut {n}"));
        tokio::time::sleep(Duration::from_secs(2)).await;
        cuts.push((seconds, peak, rss_mb(pid).0));
    }
    // A restart over the same data: the VTON page's first view (nothing in
    // memory) and how long until its figures are shown.
    service::signal(pid as i32, nix::sys::signal::Signal::SIGTERM);
    let mut process = process;
    process.wait().expect("the service ends");
    let mut restarted = h.serve();
    let pid = restarted.id();
    h.ready(&http).await;
    let browser = service::logged_in_browser(&h).await;
    let start = Instant::now();
    let first = browser.get(&vton_page).send().await.expect("page").text().await.expect("html");
    let computing = first.contains("being computed");
    report(
        "VTON page after a restart, first view",
        start.elapsed().as_secs_f64(),
        if computing { ", figures being computed" } else { ", figures shown" },
        pid,
    );
    let shown = until_page_lacks(&browser, &vton_page, "being computed").await;
    report("VTON page after a restart, until the figures are shown", shown, "", pid);
    let full_run = ["SCALE", "SCALE_ANNOTATORS"].iter().all(|v| std::env::var_os(v).is_none());
    let mut table = rows(stored, CLIENTS, archive_mb, (verified, peak), (before_cut, after_cut));
    table.extend(restart_rows(&cuts));
    figures::record(&table, full_run);
    if std::env::var_os("SCALE_KEEP").is_some() {
        // For looking at the data afterwards: the service keeps running
        // until it is stopped by hand (this waits for it).
        println!("kept: {} (service pid {pid}, port {})", dir.keep().display(), h.port);
    } else {
        service::signal(pid as i32, nix::sys::signal::Signal::SIGTERM);
    }
    restarted.wait().expect("the service ends");
}

/// The rows of the successive cuts (seconds, peak and RSS 2 s after, MB)
/// and of the restart.
fn restart_rows(cuts: &[(f64, f64, f64)]) -> Vec<figures::Row> {
    let row = |what: &str, figure: String, target: String| figures::Row {
        what: what.to_owned(),
        figure,
        baseline: String::new(),
        target,
        command: "`cargo bench --bench scale`".to_owned(),
    };
    let each = |f: &dyn Fn(&(f64, f64, f64)) -> String| cuts.iter().map(f).collect::<Vec<_>>().join(" / ");
    let worst_peak = cuts.iter().map(|c| c.1).fold(0.0, f64::max);
    let slowest = cuts.iter().map(|c| c.0).fold(0.0, f64::max);
    let first_view = step("VTON page after a restart, first view").0;
    vec![
        row(
            "three successive release cuts at VTON-QBench size: time / service peak / RSS 2 s after",
            format!(
                "{} s / {} MB / {} MB",
                each(&|c| format!("{:.2}", c.0)),
                each(&|c| format!("{:.0}", c.1)),
                each(&|c| format!("{:.0}", c.2))
            ),
            format!(
                "< 5 s ({}), every peak < 300 MB ({})",
                figures::met(slowest < 5.0),
                figures::met(worst_peak < 300.0)
            ),
        ),
        row(
            "VTON page at VTON-QBench size after a restart: first view / until its figures are shown",
            format!(
                "{first_view:.3} s ({}) / {:.1} s",
                detail("VTON page after a restart, first view").trim_start_matches(", "),
                step("VTON page after a restart, until the figures are shown").0
            ),
            format!("first view < 300 ms ({})", figures::met(first_view < 0.3)),
        ),
    ]
}
