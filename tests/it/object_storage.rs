//! Images and releases on object storage, against a real S3 server (moto,
//! started here): two hosts sharing one bucket, a lab's private bucket
//! images served under per-assignment names, an unreachable store (503,
//! votes go on, nothing half-written), and `atelier storage check|migrate`.

use crate::fixtures::{admin_token, api, cut_release, join, png, upload_png, vton_item};
use crate::support::s3::{FaultProxy, S3Server};
use crate::support::TestApp;
use atelier::storage::Object;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

const BUCKET: &str = "atelier-test";

/// An open VTON campaign whose tasks show `image` as the try-on (its
/// address: an upload's `/images/...` or an `s3://` reference); its id and
/// invitation link.
async fn campaign_showing(app: &TestApp, admin: &str, image: &str) -> (String, String) {
    let (status, c) = api(
        app,
        admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "store", "config": {"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2, "background": []}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let mut items: Vec<Value> = (0..2).map(|n| vton_item(n, None)).chain([vton_item(1000, Some(1))]).collect();
    items[0]["payload"]["tryon"] = json!(image);
    let (status, body) =
        api(app, admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/items"), Some(json!({"items": items})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for (path, body) in [("batches", json!({"seed": 3})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(app, admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    let (_, inv) = api(app, admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    (id, inv["token"].as_str().expect("token").to_owned())
}

/// Every string of a JSON value.
fn strings(v: &Value, out: &mut Vec<String>) {
    match v {
        Value::String(s) => out.push(s.clone()),
        Value::Array(a) => a.iter().for_each(|x| strings(x, out)),
        Value::Object(o) => o.values().for_each(|x| strings(x, out)),
        _ => {}
    }
}

#[tokio::test]
async fn two_hosts_sharing_one_bucket_serve_the_same_uploads_and_releases() {
    let Some(s3) = S3Server::start().await else { return };
    s3.bucket(BUCKET).await;
    let app = TestApp::spawn_with_storage(s3.storage(BUCKET, "shared", false)).await;
    let other = app.spawn_beside_with(Some(s3.storage(BUCKET, "shared", false))).await;
    let admin = admin_token(&app).await;

    // Uploaded on one host, served at once by the other.
    let image = png(40, 30, 7);
    let url = upload_png(&app, &admin, &image).await;
    let resp = reqwest::get(format!("{other}{url}")).await.expect("get");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "image/png");
    assert_eq!(resp.bytes().await.expect("bytes").as_ref(), image.as_slice());
    let name = url.trim_start_matches("/images/");
    let store = s3.storage(BUCKET, "shared", false);
    assert_eq!(store.size(Object::Upload(name)).await.expect("in the bucket"), image.len() as u64);

    // A release cut on one host is in the bucket (not the database) and downloads the same from the other.
    let (campaign, link) = campaign_showing(&app, &admin, &url).await;
    let w = join(&app, &link, "two-hosts").await;
    let (_, view) = w.next(&app, &campaign).await;
    w.finish(&app, &view, 2).await;
    let (files, archive) = cut_release(&app, &admin, &campaign).await;
    assert!(files.contains_key("manifest.json"));
    let (in_table, key): (bool, Option<String>) =
        sqlx::query_as("SELECT archive IS NOT NULL, archive_key FROM releases")
            .fetch_one(&app.pool)
            .await
            .expect("row");
    assert!(!in_table, "the archive's bytes are not in PostgreSQL");
    let key = key.expect("a key");
    assert_eq!(store.size(Object::Release(&key)).await.expect("the archive"), archive.len() as u64);
    let resp = reqwest::Client::new()
        .get(format!("{other}/api/v1/admin/campaigns/{campaign}/releases/1/archive"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("download");
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.bytes().await.expect("bytes").as_ref(), archive.as_slice(), "the same archive from either host");
    let dir = tempfile::tempdir().expect("dir");
    let path = dir.path().join("r.tar.gz");
    std::fs::write(&path, &archive).expect("write");
    let (ok, out, err) = crate::cli_stats::atelier(&["release", "verify", path.to_str().expect("path")]);
    assert!(ok, "{out}{err}");
}

#[tokio::test]
async fn a_labs_private_bucket_images_are_checked_and_served_under_per_assignment_names() {
    let Some(s3) = S3Server::start().await else { return };
    s3.bucket(BUCKET).await;
    let store = s3.storage(BUCKET, "atelier", false);
    let tryon = png(24, 24, 90);
    store.put(Object::InBucket("lab/qbench/tryon-1.png"), tryon.clone().into()).await.expect("the lab's image");
    store.put(Object::InBucket("lab/qbench/broken.png"), b"not a png".to_vec().into()).await.expect("junk");
    let app = TestApp::spawn_with_storage(store.clone()).await;
    let admin = admin_token(&app).await;

    // Checked as uploads are, naming the item; nothing imported when one fails.
    let (status, c) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "vton", "name": "lab"}))).await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id");
    for (reference, says) in [
        ("s3://atelier-test/lab/qbench/missing.png", "is not in the bucket"),
        ("s3://atelier-test/lab/qbench/broken.png", "PNG"),
        ("s3://someone-else/x.png", "not in this service's bucket"),
    ] {
        let mut item = vton_item(1, None);
        item["payload"]["tryon"] = json!(reference);
        let items = json!({"items": [vton_item(0, None), item]});
        let (status, body) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/items"), Some(items)).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{reference}: {body}");
        let message = body["error"]["message"].as_str().unwrap_or_default();
        assert!(message.contains("item 2 (`img-1`)") && message.contains(says), "{reference}: {message}");
    }
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 0, "all or nothing");

    // Served to the worker under a name of their assignment, never the bucket's address or key.
    let reference = format!("s3://{BUCKET}/lab/qbench/tryon-1.png");
    let (campaign, link) = campaign_showing(&app, &admin, &reference).await;
    let w = join(&app, &link, "lab-worker").await;
    let (status, view) = w.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    let mut seen = Vec::new();
    strings(&view, &mut seen);
    assert!(seen.iter().all(|s| !s.contains("s3://") && !s.contains("lab/") && !s.contains(BUCKET)), "{view}");
    let addresses: Vec<&String> = seen.iter().filter(|s| s.starts_with("/work/a/") && s.contains("/img/")).collect();
    let mut served = false;
    for address in addresses {
        let resp = w.client.get(app.at(address)).send().await.expect("image");
        if resp.status() == StatusCode::OK && resp.bytes().await.expect("bytes").as_ref() == tryon.as_slice() {
            served = true;
        }
    }
    assert!(served, "the lab's image reached the worker: {view}");
    // Admins see it through their own route; anonymous visitors do not.
    let resp = reqwest::Client::new()
        .get(app.at("/admin/bucket/lab/qbench/tryon-1.png"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("admin image");
    assert_eq!(resp.status(), StatusCode::OK);
    let resp = app.client().get(app.at("/admin/bucket/lab/qbench/tryon-1.png")).send().await.expect("anonymous");
    assert_ne!(resp.status(), StatusCode::OK);

    // Presigned redirects, where the operator chose them: the bucket's address, signed.
    let redirecting = app.spawn_beside_with(Some(s3.storage(BUCKET, "atelier", true))).await;
    let url = upload_png(&app, &admin, &png(8, 8, 1)).await;
    let resp = app.client().get(format!("{redirecting}{url}")).send().await.expect("redirect");
    assert_eq!(resp.status(), StatusCode::TEMPORARY_REDIRECT);
    let location = resp.headers()["location"].to_str().expect("location").to_owned();
    assert!(location.starts_with(&s3.endpoint) && location.contains("X-Amz-Signature"), "{location}");
    let resp = reqwest::get(&location).await.expect("follow");
    assert_eq!(resp.status(), StatusCode::OK);
}

/// A PNG of random pixels (it does not compress): about `side`² × 3 bytes.
fn noise_png(side: u32) -> Vec<u8> {
    let mut state = 0x9e37_79b9_7f4a_7c15u64;
    let img = image::RgbImage::from_fn(side, side, |_, _| {
        state ^= state << 13;
        state ^= state >> 7;
        state ^= state << 17;
        image::Rgb([state as u8, (state >> 8) as u8, (state >> 16) as u8])
    });
    let mut out = std::io::Cursor::new(Vec::new());
    img.write_to(&mut out, image::ImageFormat::Png).expect("png");
    out.into_inner()
}

#[tokio::test]
async fn an_unreachable_store_answers_503_while_votes_go_on_and_leaves_nothing_half_written() {
    let Some(s3) = S3Server::start().await else { return };
    s3.bucket(BUCKET).await;
    let proxy = FaultProxy::start(&s3.endpoint).await;
    let location = atelier::storage::Location::S3 { bucket: BUCKET.into(), prefix: "faults".into() };
    let through_proxy =
        atelier::storage::Storage::open(&location, &S3Server::vars(&proxy.endpoint), false).expect("store");
    let direct = s3.storage(BUCKET, "faults", false);
    let app = TestApp::spawn_with_storage(through_proxy).await;
    let admin = admin_token(&app).await;
    let big = noise_png(600);
    assert!(big.len() > 900_000, "{}", big.len());
    let big_url = upload_png(&app, &admin, &big).await;
    let (campaign, link) = campaign_showing(&app, &admin, &big_url).await;
    let w = join(&app, &link, "faulty").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();

    // The store away: uploads, images and releases answer 503 with Retry-After ...
    proxy.refuse();
    let small = png(9, 9, 3);
    let resp = reqwest::Client::new()
        .post(app.at("/api/v1/admin/images"))
        .bearer_auth(&admin)
        .header("content-type", "image/png")
        .body(small.clone())
        .send()
        .await
        .expect("upload");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert!(resp.headers().contains_key("retry-after"));
    let resp = reqwest::get(app.at(&big_url)).await.expect("image");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/releases"),
        Some(json!({"note": ""})),
    )
    .await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let releases: i64 = sqlx::query_scalar("SELECT count(*) FROM releases").fetch_one(&app.pool).await.expect("count");
    assert_eq!(releases, 0, "no release row names a missing archive");
    // ... while the task page and votes, which never touch the store, go on.
    let page = w.client.get(app.at(&format!("/work/a/{assignment}"))).send().await.expect("page");
    assert_eq!(page.status(), StatusCode::OK);
    let path = format!("/api/v1/work/assignments/{assignment}/responses");
    let (status, body) = w.post(&app, &path, json!({"item_id": view["items"][0]["id"], "answer": {"rating": 2}})).await;
    assert_eq!(status, StatusCode::OK, "{body}");

    // Cut mid-upload: nothing is stored, under any name.
    proxy.cut_after(200_000);
    let other = noise_png(601);
    let resp = reqwest::Client::new()
        .post(app.at("/api/v1/admin/images"))
        .bearer_auth(&admin)
        .header("content-type", "image/png")
        .body(other.clone())
        .send()
        .await
        .expect("upload");
    assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    let name = format!("{}.png", hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&other)));
    assert!(matches!(direct.size(Object::Upload(&name)).await, Err(atelier::storage::StorageError::NotFound(_))));

    // Cut mid-download: the client never takes a partial image for a whole one.
    let resp = reqwest::get(app.at(&big_url)).await.expect("image");
    if resp.status() == StatusCode::OK {
        let declared = resp.content_length().expect("a length");
        assert_eq!(declared, big.len() as u64);
        let body = resp.bytes().await;
        assert!(body.is_err() || body.is_ok_and(|b| b.len() < big.len()), "a cut download looked complete");
    } else {
        assert_eq!(resp.status(), StatusCode::SERVICE_UNAVAILABLE);
    }

    // Back again: everything is served whole.
    proxy.heal();
    let resp = reqwest::get(app.at(&big_url)).await.expect("image");
    assert_eq!(resp.bytes().await.expect("whole").as_ref(), big.as_slice());
}

#[tokio::test]
async fn storage_migrate_moves_uploads_and_releases_to_a_bucket_and_check_finds_what_differs() {
    let Some(s3) = S3Server::start().await else { return };
    s3.bucket(BUCKET).await;
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let image = png(30, 20, 44);
    let url = upload_png(&app, &admin, &image).await;
    let (campaign, link) = campaign_showing(&app, &admin, &url).await;
    let w = join(&app, &link, "migrating").await;
    let (_, view) = w.next(&app, &campaign).await;
    w.finish(&app, &view, 3).await;
    let (_, archive) = cut_release(&app, &admin, &campaign).await;
    let uploads = std::env::temp_dir().join(format!("atelier-uploads-{}", app.database));
    let folder = format!("file://{}", uploads.display());
    let cli = |args: &[&str]| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_atelier"))
            .args(args)
            .args(["--database-url", &app.database_url()])
            .envs(S3Server::vars(&s3.endpoint))
            .env_remove("ATELIER_STORAGE")
            .output()
            .expect("atelier");
        (out.status.code(), String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr))
    };
    let (code, out) = cli(&["storage", "check", "--storage", &folder]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("0 problem(s)"), "{out}");

    let target = format!("s3://{BUCKET}/migrated");
    let (code, out) = cli(&["storage", "migrate", "--to", &target, "--storage", &folder]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("images: 1 copied") && out.contains("release archives: 1 moved"), "{out}");
    // Resumable: a second run finds everything in place.
    let (code, out) = cli(&["storage", "migrate", "--to", &target, "--storage", &folder]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains("images: 0 copied, 1 already there"), "{out}");
    let moved: (bool, Option<String>) =
        sqlx::query_as("SELECT archive IS NULL, archive_key FROM releases").fetch_one(&app.pool).await.expect("row");
    assert!(moved.0 && moved.1.is_some(), "{moved:?}");
    // Switched: without --storage the recorded bucket is checked; an instance on it serves both.
    let (code, out) = cli(&["storage", "check"]);
    assert_eq!(code, Some(0), "{out}");
    assert!(out.contains(&target), "{out}");
    let bucket = s3.storage(BUCKET, "migrated", false);
    let beside = app.spawn_beside_with(Some(bucket.clone())).await;
    let resp = reqwest::get(format!("{beside}{url}")).await.expect("image");
    assert_eq!(resp.bytes().await.expect("bytes").as_ref(), image.as_slice());
    let resp = reqwest::Client::new()
        .get(format!("{beside}/api/v1/admin/campaigns/{campaign}/releases/1/archive"))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("download");
    let moved_archive = resp.bytes().await.expect("bytes");
    assert_eq!(moved_archive.as_ref(), archive.as_slice(), "the same bytes, now from the bucket");

    // A changed object is found and named.
    let name = url.trim_start_matches("/images/");
    bucket.put(Object::Upload(name), png(30, 20, 45).into()).await.expect("tamper");
    let (code, out) = cli(&["storage", "check"]);
    assert_eq!(code, Some(1), "{out}");
    assert!(out.contains(&format!("DIFFERS image {name}")), "{out}");
}

#[tokio::test]
async fn backups_go_to_a_bucket_listed_verified_downloaded_and_restored_from_it() {
    let Some(s3) = S3Server::start().await else { return };
    s3.bucket(BUCKET).await;
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let image = png(12, 10, 91);
    upload_png(&app, &admin, &image).await;
    let uploads = std::env::temp_dir().join(format!("atelier-uploads-{}", app.database));
    let data = tempfile::tempdir().expect("dir");

    // A bad address is refused before the service serves, naming the flag.
    let refused = std::process::Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(["serve", "--bind", "127.0.0.1:0", "--database-url", &app.database_url()])
        .args(["--backup-dir", "s3://Not_A_Bucket/x", "--data-dir", data.path().to_str().expect("path")])
        .output()
        .expect("serve");
    let said = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success() && said.contains("--backup-dir"), "{said}");

    // The service takes a backup every second into the bucket, keeping two.
    let port = crate::cli_service::free_port();
    let mut service = std::process::Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(["serve", "--bind", &format!("127.0.0.1:{port}"), "--database-url", &app.database_url()])
        .args(["--upload-dir", uploads.to_str().expect("path"), "--data-dir", data.path().to_str().expect("path")])
        .args(["--backup-dir", &format!("s3://{BUCKET}/backups"), "--backup-every", "1s", "--backup-keep", "2"])
        .envs(S3Server::vars(&s3.endpoint))
        .env_remove("ATELIER_STORAGE")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("serve");
    crate::cli_service::wait_ready(port, &mut service).await;
    let shelf = s3.storage(BUCKET, "backups", false);
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(90);
    let mut oldest_seen: Option<String> = None;
    let objects = loop {
        let mut objects: Vec<String> =
            shelf.root_objects().await.expect("listed").into_iter().map(|(name, _)| name).collect();
        objects.sort();
        let backups: Vec<&String> = objects.iter().filter(|n| n.ends_with(".backup.tar")).collect();
        match (&oldest_seen, backups.first()) {
            // The first one seen was pruned, its mark with it (deleted just
            // after it): more than two were taken, two are kept.
            (Some(oldest), _)
                if backups.len() == 2
                    && !objects.contains(oldest)
                    && !objects.contains(&format!("{oldest}.verified.json")) =>
            {
                break objects
            }
            (None, Some(first)) => oldest_seen = Some((*first).clone()),
            _ => {}
        }
        assert!(std::time::Instant::now() < deadline, "backups in the bucket: {objects:?}");
        tokio::time::sleep(std::time::Duration::from_millis(100)).await;
    };
    for name in objects.iter().filter(|n| n.ends_with(".backup.tar")) {
        assert!(objects.contains(&format!("{name}.verified.json")), "{name} is marked verified: {objects:?}");
    }
    let staged: Vec<String> = std::fs::read_dir(data.path().join("backups-staging"))
        .map(|d| d.filter_map(|e| e.ok()).map(|e| e.file_name().to_string_lossy().into_owned()).collect())
        .unwrap_or_default();
    assert!(staged.iter().all(|n| !n.ends_with(".backup.tar")), "nothing left on this host: {staged:?}");

    // The admin's page lists them verified and downloads one whole, from the bucket.
    let base = format!("http://127.0.0.1:{port}");
    let browser = app.client();
    let login = browser.get(format!("{base}/login")).send().await.expect("login").text().await.expect("html");
    let csrf = crate::fixtures::csrf_in(&login);
    let resp = browser
        .post(format!("{base}/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", crate::fixtures::ADMIN_PASSWORD)])
        .send()
        .await
        .expect("log in");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let html = browser.get(format!("{base}/admin/backups")).send().await.expect("page").text().await.expect("html");
    assert!(html.contains(&format!("s3://{BUCKET}/backups")), "{html}");
    let listed = regex::Regex::new(r#"href="/admin/backups/(atelier-\d{8}T\d{6}Z\.backup\.tar)""#).expect("re");
    let names: Vec<String> = listed.captures_iter(&html).map(|c| c[1].to_owned()).collect();
    assert!(!names.is_empty() && names.len() <= 3, "{names:?}");
    assert!(!html.contains(r#"<td data-label="Verified">no</td>"#), "{html}");
    let name = names.last().expect("a backup").clone();
    let resp = browser.get(format!("{base}/admin/backups/{name}")).send().await.expect("download");
    assert_eq!(resp.status(), StatusCode::OK);
    let bytes = resp.bytes().await.expect("bytes");
    let file = data.path().join("downloaded.tar");
    std::fs::write(&file, &bytes).expect("write");
    let backup = atelier::db::backup::read(&file).expect("the download is a whole backup");
    assert_eq!(backup.manifest.uploads.len(), 1, "the folder store's image is in it");
    for bad in ["notes.txt", "atelier-20990101T000000Z.backup.tar", "..%2Fshared%2Fx.png"] {
        let resp = browser.get(format!("{base}/admin/backups/{bad}")).send().await.expect("get");
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{bad}");
    }
    crate::cli_service::terminate(service);

    // Restored straight from the bucket into a new data directory.
    let restore = |name: &str, target: &std::path::Path| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_atelier"))
            .args(["backup", "restore", &format!("s3://{BUCKET}/backups/{name}")])
            .args(["--data-dir", target.to_str().expect("path")])
            .envs(S3Server::vars(&s3.endpoint))
            .env_remove("DATABASE_URL")
            .env_remove("ATELIER_UPLOAD_DIR")
            .output()
            .expect("restore");
        (
            out.status.success(),
            String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
        )
    };
    let target = data.path().join("restored");
    let (ok, said) = restore(&name, &target);
    assert!(ok, "{said}");
    assert!(said.contains("1 images"), "{said}");
    let restored: Vec<_> = std::fs::read_dir(target.join("uploads")).expect("uploads").collect();
    assert_eq!(restored.len(), 1, "the image restored");
    // A backup the bucket does not hold is refused, naming it; nothing is made.
    let missing = data.path().join("missing");
    let (ok, said) = restore("atelier-20990101T000000Z.backup.tar", &missing);
    assert!(!ok && said.contains("not in the store"), "{said}");
    assert!(!missing.exists(), "nothing written");
}
