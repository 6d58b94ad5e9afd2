//! Ground-truth releases for every kind: cut, download, verify offline,
//! tamper and fail, and compare two releases around a new vote and a
//! changed parameter.

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, api, join, open_vton_campaign};
use crate::support::TestApp;
use atelier::core::releases::packing;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::process::Command;

/// Runs `atelier` and returns (exit code, stdout, stderr).
fn atelier(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atelier")).args(args).output().expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn cut(app: &TestApp, admin: &str, campaign: &str, note: &str) -> Value {
    let (status, release) = api(
        app,
        admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/releases"),
        Some(json!({"note": note})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{release}");
    release
}

async fn download(app: &TestApp, admin: &str, campaign: &str, number: i64) -> Vec<u8> {
    let resp = reqwest::Client::new()
        .get(app.at(&format!("/api/v1/admin/campaigns/{campaign}/releases/{number}/archive")))
        .bearer_auth(admin)
        .send()
        .await
        .expect("download");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "application/gzip");
    resp.bytes().await.expect("bytes").to_vec()
}

/// Verifies the archive, flips one byte of `tamper`, and verifies again.
fn verify_then_tamper(archive_bytes: &[u8], tamper: &str) {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("release.tar.gz");
    std::fs::write(&path, archive_bytes).expect("write");
    let (code, out, err) = atelier(&["release", "verify", path.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(out.starts_with("OK "), "{out}");

    let mut files: BTreeMap<String, Vec<u8>> = packing::unpack(archive_bytes).expect("unpack");
    let bytes = files.get_mut(tamper).unwrap_or_else(|| panic!("{tamper} in the archive"));
    let at = bytes.len() / 2;
    bytes[at] = if bytes[at] == b'0' { b'1' } else { b'0' };
    let list: Vec<(String, Vec<u8>)> = files.into_iter().collect();
    let tampered = packing::pack("release", &list, 0).expect("pack");
    let bad = dir.path().join("tampered.tar.gz");
    std::fs::write(&bad, tampered).expect("write");
    let (code, out, err) = atelier(&["release", "verify", bad.to_str().expect("path")]);
    assert_eq!(code, 1, "{out}{err}");
    assert!(out.contains(&format!("DIFFERS {tamper}: SHA-256 differs")), "{out}");
    assert!(out.contains(&format!("DIFFERS {tamper}: differs from the file recomputed")), "{out}");
}

#[tokio::test]
async fn an_a100_release_is_verifiable_pseudonymous_and_diffable() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1"), question("q2")], json!({"participants": 6})).await;
    let vote = |q1: &'static str| {
        move |item: &Value| {
            let first = item["payload"]["choices"][0]["id"].as_str().expect("id");
            json!({"choice": if first.starts_with("q1") { q1 } else { "q2-c3" }})
        }
    };
    for (who, q1) in [("PROLIFIC_AAA", "q1-c1"), ("PROLIFIC_BBB", "q1-c1"), ("PROLIFIC_CCC", "q1-c2")] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, vote(q1)).await;
    }
    let v1 = cut(&app, &admin, &campaign, "first look").await;
    assert_eq!(v1["number"], 1);
    assert_eq!(v1["campaign_state"], "open");
    let bytes = download(&app, &admin, &campaign, 1).await;
    let files = packing::unpack(&bytes).expect("unpack");
    for name in [
        "manifest.json",
        "DATASHEET.md",
        "ground_truth.json",
        "ground_truth.csv",
        "responses.csv",
        "raw/responses.jsonl",
    ] {
        assert!(files.contains_key(name), "{name} in {:?}", files.keys().collect::<Vec<_>>());
    }
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
    assert_eq!(manifest["campaign_state"], "open", "cut while answers may still come in");
    assert_eq!(manifest["counts"]["annotators"], 3);
    assert_eq!(manifest["parameters"]["config"]["participants"], 6);
    assert!(manifest["parameters"]["kind"]["lats_tie_credit"].is_string());
    assert_eq!(
        manifest["files"].as_array().expect("files").len(),
        files.len() - 2,
        "all but the manifest and its digest"
    );
    let everything: String = files.values().map(|b| String::from_utf8_lossy(b).into_owned()).collect();
    assert!(!everything.contains("PROLIFIC_"), "worker ids never enter a release");
    let datasheet = String::from_utf8_lossy(&files["DATASHEET.md"]);
    assert!(datasheet.contains("## Collection process") && datasheet.contains("partial outfit"), "{datasheet}");
    verify_then_tamper(&bytes, "ground_truth.csv");

    // Two more votes flip q1's majority; a setting changes too.
    for who in ["PROLIFIC_DDD", "PROLIFIC_EEE"] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, vote("q1-c2")).await;
    }
    let (status, body) = api(
        &app,
        &admin,
        Method::PATCH,
        &format!("/api/v1/admin/campaigns/{campaign}/config?confirm=true"),
        Some(json!({"participants": 8})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    cut(&app, &admin, &campaign, "after the late votes").await;
    let (status, diff) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases/1/diff/2"), None).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(diff["parameters_changed"], json!(["config.participants"]));
    let changed = diff["labels_changed"].as_array().expect("labels");
    assert_eq!(changed.len(), 1, "{diff}");
    assert_eq!(
        (changed[0]["item"].as_str(), changed[0]["from"].as_str(), changed[0]["to"].as_str()),
        (Some("q1"), Some("q1-c1"), Some("q1-c2"))
    );
    let reasons = changed[0]["reasons"].to_string();
    assert!(
        reasons.contains("new votes: 3 counted responses, then 5") && reasons.contains("changed parameters"),
        "{reasons}"
    );

    let html = crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}")).await;
    assert!(html.contains("after the late votes") && html.contains("Cut release v3"), "{html}");
    let page =
        crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/releases/diff?from=1&to=2"))
            .await;
    assert!(page.contains("<td>q1</td><td>q1-c1</td><td>q1-c2</td>"), "{page}");
    // Without the two releases, the comparison's address leads to the form that picks them.
    let path = format!("/admin/campaigns/{campaign}/releases/diff?from=1");
    let resp = crate::fixtures::get_unfollowed(&app, &admin, &path).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"].to_str().expect("location"), format!("/admin/campaigns/{campaign}#releases"));

    // Releases are never changed or deleted, whoever asks.
    let update = sqlx::query("UPDATE releases SET note = 'rewritten'").execute(&app.pool).await;
    assert!(update.is_err(), "the database refuses to change a release");
    let delete = sqlx::query("DELETE FROM releases").execute(&app.pool).await;
    assert!(delete.is_err());
    let (status, _) =
        api(&app, &admin, Method::DELETE, &format!("/api/v1/admin/campaigns/{campaign}/releases/1/archive"), None)
            .await;
    assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED);
    let one = format!("/api/v1/admin/campaigns/{campaign}/releases/1");
    let (status, summary) = api(&app, &admin, Method::GET, &one, None).await;
    assert_eq!((status, summary["number"].as_i64()), (StatusCode::OK, Some(1)), "{summary}");
    for method in [Method::PUT, Method::PATCH, Method::DELETE] {
        let (status, body) = api(&app, &admin, method.clone(), &one, Some(json!({"note": "x"}))).await;
        assert_eq!(status, StatusCode::METHOD_NOT_ALLOWED, "{method} {body}");
    }
    let (status, _) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases/9"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn a_release_diff_shows_exclusions_counts_and_the_campaign_state_when_no_label_moves() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1"), question("q2")], json!({"participants": 6})).await;
    for who in ["AAA", "BBB", "CCC"] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, |item: &Value| {
            let first = item["payload"]["choices"][0]["id"].as_str().expect("id");
            json!({"choice": if first.starts_with("q1") { "q1-c1" } else { "q2-c3" }})
        })
        .await;
    }
    cut(&app, &admin, &campaign, "").await;
    // One q2 vote excluded (q2-c3 keeps its majority), and the campaign closed.
    let response: uuid::Uuid = sqlx::query_scalar(
        "SELECT r.id FROM responses r JOIN items i ON i.id = r.item_id WHERE i.external_id = 'q2' ORDER BY r.id LIMIT 1",
    )
    .fetch_one(&app.pool)
    .await
    .expect("a q2 response");
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/responses/{response}/exclude"),
        Some(json!({"reason": "answered too fast"})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/state"),
        Some(json!({"state": "closed"})),
    )
    .await;
    assert!(status.is_success());
    cut(&app, &admin, &campaign, "").await;

    let (status, diff) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases/1/diff/2"), None).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(diff["labels_changed"], json!([]), "no label moved: {diff}");
    assert_eq!(diff["campaign_state"], json!({"from": "open", "to": "closed"}));
    let counts: BTreeMap<String, (Value, Value)> = diff["counts_changed"]
        .as_array()
        .expect("counts")
        .iter()
        .map(|c| (c["path"].as_str().expect("path").to_owned(), (c["from"].clone(), c["to"].clone())))
        .collect();
    assert_eq!(counts.get("responses_counted"), Some(&(json!(6), json!(5))), "{diff}");
    assert_eq!(counts.get("responses_excluded.answered too fast"), Some(&(json!(0), json!(1))), "{diff}");
    assert_eq!(diff["exclusions_by_reason"], json!([{"reason": "answered too fast", "added": 1, "removed": 0}]));
    let added = diff["exclusions_added"].as_array().expect("added");
    assert_eq!((added.len(), added[0]["item"].as_str()), (1, Some("q2")), "{diff}");
    assert_eq!(diff["exclusions_removed"], json!([]));
    // Read the other way, the exclusion is one that counts again.
    let (_, back) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases/2/diff/1"), None).await;
    assert_eq!(back["exclusions_removed"].as_array().map(Vec::len), Some(1), "{back}");

    let page =
        crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/releases/diff?from=1&to=2"))
            .await;
    for shown in [
        "<b>open</b> when v1 was cut, <b>closed</b> at v2",
        "<td><code>responses_counted</code></td><td class=\"num\">6</td><td class=\"num\">5</td>",
        "<td>answered too fast</td><td class=\"num\">1</td><td class=\"num\">0</td>",
        "<td>excluded</td><td>q2</td>",
        "No label changed.",
    ] {
        assert!(page.contains(shown), "{shown} in {page}");
    }

    // Each pair is compared once and kept: the page and the API read the same kept diff.
    let kept: Vec<(i32, i32, String)> =
        sqlx::query_as("SELECT from_number, to_number, atelier_version FROM release_diffs ORDER BY from_number")
            .fetch_all(&app.pool)
            .await
            .expect("kept");
    let version = env!("CARGO_PKG_VERSION").to_owned();
    assert_eq!(kept, vec![(1, 2, version.clone()), (2, 1, version)]);
    let path = format!("/api/v1/admin/campaigns/{campaign}/releases/1/diff/2");
    let (_, again) = api(&app, &admin, Method::GET, &path, None).await;
    assert_eq!(again, diff);
    // What is kept is what is served (marked here by hand) ...
    sqlx::query("UPDATE release_diffs SET diff = jsonb_set(diff, '{items_added}', '[\"kept\"]') WHERE from_number = 1")
        .execute(&app.pool)
        .await
        .expect("mark");
    let (_, kept) = api(&app, &admin, Method::GET, &path, None).await;
    assert_eq!(kept["items_added"], json!(["kept"]));
    // ... while this version made it: one made by another version is made again.
    sqlx::query("UPDATE release_diffs SET atelier_version = '0.0.0-older' WHERE from_number = 1")
        .execute(&app.pool)
        .await
        .expect("age");
    let (_, remade) = api(&app, &admin, Method::GET, &path, None).await;
    assert_eq!(remade, diff);
}

#[tokio::test]
async fn a_vton_release_holds_the_benchmark_layout_and_records_curation_changes() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        6,
        1,
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 4}),
    )
    .await;
    let rate = |offset: usize| {
        move |item: &Value| {
            let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
            let n: usize = tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse().unwrap_or(0);
            json!({"rating": if n >= 1000 { 1 } else { 1 + (n + offset) % 3 }})
        }
    };
    for (n, offset) in [0usize, 0, 0].iter().enumerate() {
        for q in 0..2 {
            let w = join(&app, &invitation, &format!("w{n}-{q}")).await;
            let (_, view) = w.next(&app, &campaign).await;
            w.finish_with(&app, &view, rate(*offset)).await;
        }
    }
    cut(&app, &admin, &campaign, "").await;
    let bytes = download(&app, &admin, &campaign, 1).await;
    let files = packing::unpack(&bytes).expect("unpack");
    assert!(files.contains_key("answers.csv") && files.contains_key("images.csv"), "the VTON-QBench layout");
    let datasheet = String::from_utf8_lossy(&files["DATASHEET.md"]);
    assert!(datasheet.contains("Krippendorff's alpha") && datasheet.contains("Curation preset `paper`"), "{datasheet}");
    verify_then_tamper(&bytes, "answers.csv");

    // One more worker per questionnaire (disagreeing), and a stricter alpha threshold.
    for q in 0..2 {
        let w = join(&app, &invitation, &format!("late-{q}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, rate(1)).await;
    }
    let (_, c) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    let mut config = c["campaign"]["config"].clone();
    config["curation"]["min_alpha"] = json!(0.1);
    let (status, body) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{campaign}/config?confirm=true"),
        Some(config),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let dir = tempfile::tempdir().expect("tempdir");
    let (code, out, err) = atelier(&[
        "release",
        "create",
        "--campaign",
        &campaign,
        "--note",
        "from the CLI",
        "--database-url",
        &app.database_url(),
    ]);
    assert_eq!(code, 0, "{err}");
    assert!(out.contains("release v2"), "{out}");
    let (status, diff) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases/1/diff/2"), None).await;
    assert_eq!(status, StatusCode::OK, "{diff}");
    assert_eq!(diff["parameters_changed"], json!(["config.curation.min_alpha"]));
    let changed = diff["labels_changed"].as_array().expect("labels");
    assert!(!changed.is_empty(), "the late votes move image scores: {diff}");
    assert!(changed.iter().all(|l| l["reasons"].to_string().contains("new votes")), "{diff}");
    let v2 = download(&app, &admin, &campaign, 2).await;
    let manifest: Value =
        serde_json::from_slice(&packing::unpack(&v2).expect("unpack")["manifest.json"]).expect("json");
    assert!(manifest["release"]["created_by"].as_str().expect("by").starts_with("cli:"));
    let path = dir.path().join("v2.tar.gz");
    std::fs::write(&path, &v2).expect("write");
    let (code, out, _) = atelier(&["release", "verify", path.to_str().expect("path")]);
    assert_eq!(code, 0, "{out}");
    let (status, list) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/releases"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(
        list.as_array().expect("list").iter().map(|r| r["number"].as_i64().expect("n")).collect::<Vec<_>>(),
        vec![2, 1]
    );
}

#[tokio::test]
async fn a_questionnaire_still_being_answered_moves_no_export_of_a_release() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 4}),
    )
    .await;
    let rating = |item: &Value| {
        let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
        let n: usize = tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse().unwrap_or(0);
        json!({"rating": if n >= 1000 { 1 } else { 1 + n % 3 }})
    };
    for n in 0..3 {
        let w = join(&app, &invitation, &format!("done-{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, rating).await;
    }
    // A fourth worker is 2 of 5 answers in, all of them 3 (far from the others).
    let late = join(&app, &invitation, "in-progress").await;
    let (_, view) = late.next(&app, &campaign).await;
    let id = view["assignment"]["id"].as_str().expect("id").to_owned();
    for item in view["items"].as_array().expect("items").iter().take(2) {
        let body = json!({"item_id": item["id"], "answer": {"rating": 3}});
        let (status, body) = late.post(&app, &format!("/api/v1/work/assignments/{id}/responses"), body).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }
    let counts = |gt: &Value| -> Vec<u64> {
        gt["images"].as_array().expect("images").iter().map(|i| i["n_annotation"].as_u64().unwrap_or(0)).collect()
    };
    let (_, live) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(counts(&live), vec![3; 4], "only the three submitted questionnaires count: {live}");
    assert!(
        live["images"].as_array().expect("images").iter().all(|i| !i.to_string().contains("in-progress")),
        "the worker still answering is nobody's annotator yet"
    );
    cut(&app, &admin, &campaign, "mid-questionnaire").await;
    let files = packing::unpack(&download(&app, &admin, &campaign, 1).await).expect("unpack");
    let released: Value = serde_json::from_slice(&files["ground_truth.json"]).expect("json");
    assert_eq!(counts(&released), vec![3; 4], "the release agrees with its answers.csv");
    let answers = String::from_utf8_lossy(&files["answers.csv"]).to_string();
    assert_eq!(answers.lines().count(), 4, "three submitted rows: {answers}");
    let kept = released["curation"]["annotators"].as_array().expect("annotators").len();
    assert_eq!(kept, 3, "curation saw three annotators");
}

#[tokio::test]
async fn verify_checks_what_the_manifest_itself_says_and_names_the_file_that_differs() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    for n in 0..3 {
        let w = join(&app, &invitation, &format!("w{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, |_| json!({"rating": 1 + n % 3})).await;
    }
    cut(&app, &admin, &campaign, "the first cut").await;
    let bytes = download(&app, &admin, &campaign, 1).await;
    let files = packing::unpack(&bytes).expect("unpack");
    assert!(files.contains_key("manifest.sha256"), "{:?}", files.keys());
    let dir = tempfile::tempdir().expect("tempdir");
    let verify = |files: &BTreeMap<String, Vec<u8>>, name: &str| {
        let list: Vec<(String, Vec<u8>)> = files.clone().into_iter().collect();
        let path = dir.path().join(format!("{name}.tar.gz"));
        std::fs::write(&path, packing::pack("release", &list, 0).expect("pack")).expect("write");
        atelier(&["release", "verify", path.to_str().expect("path")])
    };
    let (code, out, err) = verify(&files, "intact");
    assert_eq!(code, 0, "{out}{err}");
    let digest = atelier::core::releases::archive::manifest_digest;

    // State and counts changed, the digest written anew: the cross-checks catch it.
    let mut manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("json");
    manifest["campaign_state"] = json!("closed");
    manifest["counts"]["responses"] = json!(999);
    let mut forged = files.clone();
    let text = serde_json::to_vec_pretty(&manifest).expect("json");
    forged.insert("manifest.sha256".into(), digest(&text).into_bytes());
    forged.insert("manifest.json".into(), text);
    let (code, out, _) = verify(&forged, "forged");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("manifest.json: `campaign_state` says \"closed\""), "{out}");
    assert!(out.contains("manifest.json: `counts`"), "{out}");

    // One flipped byte in the note: the manifest is named, not the intact datasheet.
    let mut flipped = files.clone();
    let text =
        String::from_utf8(files["manifest.json"].clone()).expect("utf-8").replace("the first cut", "the firsT cut");
    flipped.insert("manifest.json".into(), text.clone().into_bytes());
    let (code, out, _) = verify(&flipped, "flipped");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("manifest.json: differs from its digest"), "{out}");
    assert!(!out.contains("DIFFERS DATASHEET.md"), "the datasheet is intact: {out}");
    // Even with the digest written anew, the datasheet is not blamed.
    flipped.insert("manifest.sha256".into(), digest(text.as_bytes()).into_bytes());
    let (code, out, _) = verify(&flipped, "flipped-digest");
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("manifest.json: `release`") && !out.contains("DIFFERS DATASHEET.md"), "{out}");
    // Any field of the release information alone: the manifest is named, once, and no file that is as cut.
    let original: Value = serde_json::from_slice(&files["manifest.json"]).expect("json");
    for (field, value) in [
        ("note", json!("another note")),
        ("created_at", json!("2030-01-01T00:00:00Z")),
        ("created_by", json!("someone-else")),
        ("release", json!(7)),
    ] {
        let mut manifest = original.clone();
        manifest["release"][field] = value;
        let text = serde_json::to_vec_pretty(&manifest).expect("json");
        let mut edited = files.clone();
        edited.insert("manifest.sha256".into(), digest(&text).into_bytes());
        edited.insert("manifest.json".into(), text);
        let (code, out, _) = verify(&edited, &format!("edited-{field}"));
        assert_eq!(code, 1, "{field}: {out}");
        let differs: Vec<&str> = out.lines().filter(|l| l.starts_with("DIFFERS")).collect();
        assert_eq!(differs.len(), 1, "{field}: {out}");
        assert!(differs[0].starts_with("DIFFERS manifest.json: `release`"), "{field}: {out}");
    }
}

#[tokio::test]
async fn a_configuration_change_after_answers_is_confirmed_merged_and_recorded() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let background = json!([{"id": "age", "question": "Age?", "options": ["18-24", "25-34"]}]);
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3,
               "background": background}),
    )
    .await;
    let w = join(&app, &invitation, "w-config").await;
    let (status, view) = w
        .post(&app, &format!("/api/v1/work/campaigns/{campaign}/assignment"), json!({"background": {"age": "18-24"}}))
        .await;
    assert_eq!(status, StatusCode::OK, "{view}");
    w.finish(&app, &view, 2).await;
    let config = format!("/api/v1/admin/campaigns/{campaign}/config");
    // `PUT {}` would drop the background questions: refused, naming what would change, nothing changed.
    let (status, body) = api(&app, &admin, Method::PUT, &config, Some(json!({}))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("confirm_change")), "{body}");
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("background"), "{body}");
    let (_, c) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(c["campaign"]["config"]["background"], background, "unchanged");
    // A merge, confirmed, changes only what it names, and is recorded.
    let patch = json!({"curation": {"min_alpha": 0.1}});
    let (status, body) = api(&app, &admin, Method::PATCH, &format!("{config}?confirm=true"), Some(patch)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["config"]["background"], background, "the rest stays");
    assert_eq!(body["config"]["curation"]["min_alpha"], 0.1);
    let (_, history) = api(&app, &admin, Method::GET, &format!("{config}/history"), None).await;
    let history = history.as_array().expect("history");
    assert_eq!(history.len(), 1, "{history:?}");
    assert_eq!(history[0]["responses"], 5);
    assert_eq!(history[0]["after"]["curation"]["min_alpha"], 0.1);
    assert!(history[0]["changed_by"].is_string());
}

/// A gzip bomb as a release: a manifest listing a 10-byte raw file whose tar
/// header claims 2 GiB (a megabyte of zeros follows, then nothing: a reader
/// that trusts headers would try to inflate it all).
fn release_bomb() -> Vec<u8> {
    use std::io::Write;
    let header = |name: &str, size: u64| {
        let mut h = tar::Header::new_gnu();
        h.set_path(name).expect("path");
        h.set_size(size);
        h.set_mode(0o644);
        h.set_cksum();
        h.as_bytes().to_vec()
    };
    let manifest = br#"{"format": "atelier-release/3", "files": [{"name": "raw/responses.jsonl", "size": 10}]}"#;
    let mut plain = header("release-v1/manifest.json", manifest.len() as u64);
    plain.extend_from_slice(manifest);
    plain.resize(plain.len().div_ceil(512) * 512, 0);
    plain.extend(header("release-v1/raw/responses.jsonl", 2 << 30));
    plain.extend(std::iter::repeat_n(0u8, 1 << 20));
    let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::best());
    gz.write_all(&plain).expect("write");
    gz.finish().expect("gzip")
}

#[test]
fn release_verify_and_export_refuse_a_gzip_bomb_in_bounded_memory() {
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("bomb.tar.gz");
    std::fs::write(&path, release_bomb()).expect("write");
    let (ok, out, err) = crate::cli_stats::atelier(&["release", "verify", path.to_str().expect("path")]);
    assert!(!ok, "{out}");
    assert!(err.contains("raw/responses.jsonl: 2147483648 bytes, more than the 10"), "{out}{err}");
    let folder = dir.path().join("hf");
    let (ok, _, err) = crate::cli_stats::atelier(&[
        "release",
        "export",
        "--format",
        "hf",
        path.to_str().expect("path"),
        folder.to_str().expect("path"),
    ]);
    assert!(!ok && err.contains("damaged"), "{err}");
    assert!(!folder.exists(), "nothing written");
}

/// A release's files rewritten as an archive of an earlier format: format
/// 2 without the `hf/` folder, format 1 also without the manifest's digest
/// and with each raw table as one JSON array.
fn as_earlier_format(files: &BTreeMap<String, Vec<u8>>, format: u8) -> BTreeMap<String, Vec<u8>> {
    let mut out: BTreeMap<String, Vec<u8>> =
        files.iter().filter(|(name, _)| !name.starts_with("hf/")).map(|(n, b)| (n.clone(), b.clone())).collect();
    let mut manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
    manifest["format"] = json!(format!("atelier-release/{format}"));
    let listed = manifest["files"].as_array_mut().expect("files");
    listed.retain(|f| !f["name"].as_str().expect("name").starts_with("hf/"));
    if format == 1 {
        out.remove("manifest.sha256");
        for f in listed.iter_mut() {
            let name = f["name"].as_str().expect("name").to_owned();
            let Some(table) = name.strip_prefix("raw/").and_then(|t| t.strip_suffix(".jsonl")) else { continue };
            let rows: Vec<Value> = String::from_utf8(out.remove(&name).expect("raw"))
                .expect("utf-8")
                .lines()
                .map(|l| serde_json::from_str(l).expect("row"))
                .collect();
            let bytes = serde_json::to_vec_pretty(&rows).expect("json");
            let renamed = format!("raw/{table}.json");
            f["name"] = json!(renamed);
            f["size"] = json!(bytes.len());
            f["sha256"] = json!(hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&bytes)));
            out.insert(renamed, bytes);
        }
    }
    let text = serde_json::to_vec_pretty(&manifest).expect("json");
    if format == 2 {
        out.insert("manifest.sha256".into(), atelier::core::releases::archive::manifest_digest(&text).into_bytes());
    }
    out.insert("manifest.json".into(), text);
    out
}

#[tokio::test]
async fn archives_of_every_earlier_format_still_verify_and_export() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    for n in 0..3 {
        let w = join(&app, &invitation, &format!("old-format-{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, |_| json!({"rating": 1 + n % 3})).await;
    }
    cut(&app, &admin, &campaign, "kept as format 1 and 2").await;
    let files = packing::unpack(&download(&app, &admin, &campaign, 1).await).expect("unpack");
    let dir = tempfile::tempdir().expect("tempdir");
    for format in [1u8, 2] {
        let earlier = as_earlier_format(&files, format);
        assert_eq!(earlier.contains_key("manifest.sha256"), format == 2);
        let path = dir.path().join(format!("format-{format}.tar.gz"));
        let list: Vec<(String, Vec<u8>)> = earlier.into_iter().collect();
        std::fs::write(&path, packing::pack("release-v1", &list, 0).expect("pack")).expect("write");
        let (code, out, err) = atelier(&["release", "verify", path.to_str().expect("path")]);
        assert_eq!(code, 0, "format {format}: {out}{err}");
        assert!(out.starts_with("OK "), "{out}");
        let folder = dir.path().join(format!("hf-{format}"));
        let (code, out, err) = atelier(&[
            "release",
            "export",
            "--format",
            "hf",
            path.to_str().expect("path"),
            folder.to_str().expect("path"),
        ]);
        assert_eq!(code, 0, "format {format}: {out}{err}");
        assert!(folder.join("README.md").is_file() && folder.join("croissant.json").is_file());
    }
}
