//! Backups as an operator takes them: `atelier backup create` while votes
//! keep arriving, `atelier backup restore` into a new data directory, the
//! restored service serving the same ground truth, releases and images and
//! taking scheduled backups of its own (the newest N kept); a damaged
//! archive and a target holding data refused, nothing changed.

use crate::cli_service::{free_port, terminate, wait_ready};
use crate::cli_stats::atelier;
use crate::fixtures::{admin_token, api, cut_release, download_release, join, open_vton_campaign, png};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::HashMap;
use std::process::{Command, Stdio};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;

/// Runs the CLI without the environment's database; (success, stdout, stderr).
fn cli(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(args)
        .env_remove("DATABASE_URL")
        .env_remove("ATELIER_UPLOAD_DIR")
        .output()
        .expect("cli");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

async fn responses_of(url: &str, admin: &str, campaign: &str) -> HashMap<String, Value> {
    let list: Vec<Value> = reqwest::Client::new()
        .get(format!("{url}/api/v1/admin/campaigns/{campaign}/responses"))
        .bearer_auth(admin)
        .send()
        .await
        .expect("responses")
        .json()
        .await
        .expect("json");
    list.into_iter().map(|r| (r["id"].as_str().expect("id").to_owned(), r)).collect()
}

async fn get(url: &str, admin: &str) -> reqwest::Response {
    reqwest::Client::new().get(url).bearer_auth(admin).send().await.expect("get")
}

#[tokio::test]
async fn a_backup_taken_while_votes_arrive_restores_into_a_service_serving_the_same_data() {
    let app = Arc::new(TestApp::spawn().await);
    let admin = admin_token(&app).await;
    let upload_dir = std::env::temp_dir().join(format!("atelier-uploads-{}", app.database));
    let image = png(6, 6, 77);
    let image_url = crate::fixtures::upload_png(&app, &admin, &image).await;

    // Campaign A is finished: votes, an exclusion, a release.
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    let (a, invitation_a) = open_vton_campaign(&app, &admin, 6, 1, config).await;
    for n in 0..4u8 {
        let w = join(&app, &invitation_a, &format!("a-{n}")).await;
        let (_, view) = w.next(&app, &a).await;
        w.finish(&app, &view, 1 + n % 3).await;
    }
    let first = responses_of(&app.url, &admin, &a).await.into_keys().min().expect("a response");
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/responses/{first}/exclude"),
        Some(json!({"reason": "pressed keys at random"})),
    )
    .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (_, release) = cut_release(&app, &admin, &a).await;
    let (_, ground_truth) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{a}/ground-truth"), None).await;
    assert!(ground_truth.is_object(), "{ground_truth}");

    // Campaign B keeps receiving votes while the backup is taken.
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 40});
    let (b, invitation_b) = open_vton_campaign(&app, &admin, 30, 1, config).await;
    let stop = Arc::new(AtomicBool::new(false));
    let voting = {
        let (stop, app, b, invitation_b) = (stop.clone(), app.clone(), b.clone(), invitation_b.clone());
        tokio::spawn(async move {
            let mut n = 0;
            while !stop.load(Ordering::Relaxed) {
                let w = join(&app, &invitation_b, &format!("b-{n}")).await;
                let (_, view) = w.next(&app, &b).await;
                if view.is_null() {
                    break;
                }
                w.finish(&app, &view, 2).await;
                n += 1;
            }
            n
        })
    };
    while responses_of(&app.url, &admin, &b).await.is_empty() {
        tokio::time::sleep(std::time::Duration::from_millis(20)).await;
    }
    let before = responses_of(&app.url, &admin, &b).await.len();
    let dir = tempfile::tempdir().expect("dir");
    let file = dir.path().join("atelier.backup.tar");
    let args = [
        "backup",
        "create",
        file.to_str().expect("path"),
        "--database-url",
        &app.database_url(),
        "--upload-dir",
        upload_dir.to_str().expect("path"),
    ];
    let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
    let created = tokio::task::spawn_blocking(move || {
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        cli(&refs)
    })
    .await
    .expect("backup");
    stop.store(true, Ordering::Relaxed);
    let workers = voting.await.expect("voting");
    assert!(created.0, "{created:?}");
    assert!(created.1.contains("1 images"), "{}", created.1);
    let original_b = responses_of(&app.url, &admin, &b).await;
    eprintln!("votes in B: {before} before the backup, {} after ({workers} questionnaires)", original_b.len());

    // Restored into a new data directory, served by a new service that also backs itself up.
    let base = std::env::temp_dir().join(format!("atelier-restore-{}", uuid::Uuid::new_v4().simple()));
    let data_dir = base.join("data");
    let data = data_dir.to_str().expect("path").to_owned();
    let (ok, out, err) = cli(&["backup", "restore", file.to_str().expect("path"), "--data-dir", &data]);
    assert!(ok, "{out}{err}");
    assert!(out.contains("1 images"), "{out}");
    let scheduled = base.join("scheduled");
    let port = free_port();
    let mut service = Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--data-dir", &data])
        .args(["--backup-every", "1s", "--backup-keep", "2", "--backup-dir", scheduled.to_str().expect("path")])
        .env_remove("DATABASE_URL")
        .env_remove("ATELIER_UPLOAD_DIR")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .expect("serve");
    wait_ready(port, &mut service).await;
    let restored = format!("http://127.0.0.1:{port}");

    // The same ground truth (the admin's token came along), release and image.
    let gt: Value =
        get(&format!("{restored}/api/v1/admin/campaigns/{a}/ground-truth"), &admin).await.json().await.expect("json");
    assert_eq!(gt, ground_truth);
    let archive = get(&format!("{restored}/api/v1/admin/campaigns/{a}/releases/1/archive"), &admin)
        .await
        .bytes()
        .await
        .expect("bytes");
    assert_eq!(archive.as_ref(), download_release(&app, &admin, &a, 1).await.as_slice());
    assert_eq!(archive.as_ref(), release.as_slice());
    let path = dir.path().join("release-1.tar.gz");
    std::fs::write(&path, &archive).expect("write");
    let (ok, out, err) = atelier(&["release", "verify", path.to_str().expect("path")]);
    assert!(ok, "{out}{err}");
    let served = reqwest::get(format!("{restored}{image_url}")).await.expect("image");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.bytes().await.expect("bytes").as_ref(), image.as_slice());
    let excluded = responses_of(&restored, &admin, &a).await;
    assert_eq!(excluded[&first]["excluded_reason"], "pressed keys at random");

    // B as it was at one moment: every vote from before, none invented or changed.
    let restored_b = responses_of(&restored, &admin, &b).await;
    assert!(
        (before..=original_b.len()).contains(&restored_b.len()),
        "{} of {before}..{}",
        restored_b.len(),
        original_b.len()
    );
    for (id, response) in &restored_b {
        assert_eq!(Some(response), original_b.get(id), "restored as recorded");
    }

    // The service's own backups: taken every second, the newest two kept, each complete.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    let listing = || {
        let mut names: Vec<String> = std::fs::read_dir(&scheduled)
            .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
            .unwrap_or_default();
        names.retain(|n| n.ends_with(".backup.tar"));
        names.sort();
        names
    };
    let mut oldest_seen = None;
    let names = loop {
        let names = listing();
        match (&oldest_seen, names.first()) {
            // The first one seen was pruned: more than two were taken, two are kept.
            (Some(oldest), _) if names.len() == 2 && !names.contains(oldest) => break names,
            (None, Some(first)) => oldest_seen = Some(first.clone()),
            _ => {}
        }
        assert!(std::time::Instant::now() < deadline, "scheduled backups: {names:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    for name in &names {
        let staged = atelier::db::backup::read(&scheduled.join(name)).expect("a complete backup");
        assert_eq!(staged.manifest.uploads.len(), 1);
    }
    terminate(service);

    // A restore into a directory or database that holds data is refused.
    let (ok, _, err) = cli(&["backup", "restore", file.to_str().expect("path"), "--data-dir", &data]);
    assert!(!ok && err.contains("is not empty"), "{err}");
    let (ok, _, err) = cli(&["backup", "restore", file.to_str().expect("path"), "--database-url", &app.database_url()]);
    assert!(!ok && err.contains("is not empty"), "{err}");
    assert_eq!(responses_of(&app.url, &admin, &a).await.len(), excluded.len(), "nothing changed");

    // A damaged archive is refused before anything is written.
    let mut bytes = std::fs::read(&file).expect("read");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0xff;
    let damaged = dir.path().join("damaged.tar");
    std::fs::write(&damaged, &bytes).expect("write");
    let fresh = base.join("fresh");
    let (ok, _, err) =
        cli(&["backup", "restore", damaged.to_str().expect("path"), "--data-dir", fresh.to_str().expect("path")]);
    assert!(!ok && err.contains("damaged"), "{err}");
    assert!(!fresh.exists(), "nothing written");
    let _ = std::fs::remove_dir_all(&base);
}

/// A tar whose manifest names the dump by `dump_path` and whose one entry
/// carries that raw name (as an attacker writes it, past the builder's checks).
fn archive_naming(dump_path: &str, dump: &[u8]) -> Vec<u8> {
    use sha2::Digest;
    let manifest = json!({
        "format": "atelier-backup", "version": 1, "created_at": "2026-12-07T00:00:00Z", "atelier_version": "x",
        "database": {"path": dump_path, "sha256": hex::encode(sha2::Sha256::digest(b"dump")), "bytes": 4},
        "uploads": [],
    });
    let manifest = serde_json::to_vec(&manifest).expect("json");
    let mut tar = tar::Builder::new(Vec::new());
    for (name, data) in [("manifest.json", manifest.as_slice()), (dump_path, dump)] {
        let mut header = tar::Header::new_gnu();
        header.as_gnu_mut().expect("gnu").name[..name.len()].copy_from_slice(name.as_bytes());
        header.set_size(data.len() as u64);
        header.set_mode(0o644);
        header.set_cksum();
        tar.append(&header, data).expect("append");
    }
    tar.into_inner().expect("tar")
}

#[test]
fn a_restore_of_a_crafted_archive_writes_nothing_anywhere() {
    let dir = tempfile::tempdir().expect("dir");
    let canary = dir.path().join("outside").join("pwned");
    std::fs::create_dir_all(canary.parent().expect("parent")).expect("dir");
    let absolute = canary.to_str().expect("utf8").to_owned();
    let dotted = format!("../../../../../../../../..{absolute}");
    let busy = dir.path().join("busy");
    std::fs::create_dir_all(&busy).expect("dir");
    std::fs::write(busy.join("keep"), b"mine").expect("write");
    for name in [absolute.as_str(), dotted.as_str()] {
        // Checksum right, then wrong (the audit's "still writes when damaged").
        for dump in [b"dump".as_slice(), b"dumq"] {
            let file = dir.path().join("crafted.tar");
            std::fs::write(&file, archive_naming(name, dump)).expect("write");
            let fresh = dir.path().join("fresh");
            for target in [&busy, &fresh] {
                let (ok, _, err) = cli(&[
                    "backup",
                    "restore",
                    file.to_str().expect("path"),
                    "--data-dir",
                    target.to_str().expect("path"),
                ]);
                assert!(!ok, "restored a crafted archive into {}", target.display());
                let wanted = if target == &busy { "is not empty" } else { "database dump's name" };
                assert!(err.contains(wanted), "{err}");
                assert!(!canary.exists(), "{name}: wrote {}", canary.display());
            }
            assert!(!fresh.exists(), "a refused archive creates no data directory");
            assert_eq!(std::fs::read(busy.join("keep")).expect("kept"), b"mine");
        }
    }
}

#[tokio::test]
async fn an_admin_backs_up_from_the_page_and_downloads_a_verified_backup() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    open_vton_campaign(&app, &admin, 3, 1, config).await;
    let (browser, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let page =
        || async { browser.get(app.at("/admin/backups")).send().await.expect("page").text().await.expect("html") };
    assert!(page().await.contains("No backup yet"), "an empty folder");
    // A form without its token changes nothing.
    let refused = browser.post(app.at("/admin/backups/now")).send().await.expect("post");
    assert_eq!(refused.status(), StatusCode::FORBIDDEN);
    let asked = browser.post(app.at("/admin/backups/now")).form(&[("csrf_token", csrf.as_str())]).send().await;
    assert_eq!(asked.expect("post").status(), StatusCode::SEE_OTHER);
    // Listed once it is written and read back whole.
    let name = {
        let link = regex::Regex::new(r#"href="/admin/backups/(atelier-\d{8}T\d{6}Z\.backup\.tar)""#).expect("re");
        let mut found = None;
        for _ in 0..240 {
            let html = page().await;
            if let Some(c) = link.captures(&html) {
                assert!(html.contains(r#"<td data-label="Verified">yes</td>"#), "{html}");
                found = Some(c[1].to_owned());
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(250)).await;
        }
        found.expect("the backup is listed within a minute")
    };
    let resp = browser.get(app.at(&format!("/admin/backups/{name}"))).send().await.expect("download");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers()[reqwest::header::CONTENT_DISPOSITION].to_str().expect("header").contains(&name));
    let bytes = resp.bytes().await.expect("bytes");
    let file = tempfile::NamedTempFile::new().expect("file");
    std::fs::write(file.path(), &bytes).expect("write");
    let staged = atelier::db::backup::read(file.path()).expect("the download is a whole backup");
    assert!(staged.manifest.database.bytes > 0);
    // Only a backup's own name reaches a file.
    for bad in ["..%2F..%2Fetc%2Fpasswd", "notes.txt", "atelier-20990101T000000Z.backup.tar"] {
        let resp = browser.get(app.at(&format!("/admin/backups/{bad}"))).send().await.expect("get");
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{bad}");
    }
    // Admins only.
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, "backup-expert", "expert-password-1")
        .await
        .expect("expert");
    let (expert, _) = crate::fixtures::logged_in(&app, "backup-expert", "expert-password-1").await;
    for path in ["/admin/backups".to_owned(), format!("/admin/backups/{name}")] {
        let resp = expert.get(app.at(&path)).send().await.expect("get");
        assert!(matches!(resp.status(), StatusCode::FORBIDDEN | StatusCode::SEE_OTHER), "{path}: {}", resp.status());
    }
}
