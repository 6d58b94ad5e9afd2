//! Releases the community loads in one line: every kind's release exported
//! as a Hugging Face folder (`atelier release export --format hf`) and read
//! by `datasets`, `mlcroissant` and pandas in a virtual environment the test
//! makes; every table equals the release's own CSV/JSON files.

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, api, expert_token, join, open_vton_campaign};
use crate::support::TestApp;
use atelier::core::releases::packing;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;
use std::path::Path;
use std::process::Command;

/// The Python packages the check runs with (pinned: the check is about
/// these libraries reading our files, not about their newest release).
const PYTHON: [&str; 5] = ["datasets==5.2.0", "mlcroissant==1.1.1", "pandas==2.3.3", "pyarrow==26.0.1", "PyYAML"];

/// Runs `atelier` and returns (exit code, stdout, stderr).
fn atelier(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atelier")).args(args).output().expect("binary runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Cuts a release under a licence and downloads it.
async fn release(app: &TestApp, admin: &str, campaign: &str) -> Vec<u8> {
    let base = format!("/api/v1/admin/campaigns/{campaign}/releases");
    let body = json!({"note": "for the Hub", "license": "CC-BY-4.0"});
    let (status, r) = api(app, admin, Method::POST, &base, Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{r}");
    crate::fixtures::download_release(app, admin, campaign, r["number"].as_i64().expect("number")).await
}

/// Exports the release, checks the folder is the archive's `hf/` byte for
/// byte with every file in the manifest, then runs the Python check; returns
/// rows per table (`None` when Python is not available).
fn export_and_load(archive: &[u8], spec: Value) -> Option<BTreeMap<String, usize>> {
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("release.tar.gz");
    std::fs::write(&path, archive).expect("write");
    let out = dir.path().join("hf");
    let (code, stdout, stderr) =
        atelier(&["release", "export", "--format", "hf", path.to_str().expect("path"), out.to_str().expect("path")]);
    assert_eq!(code, 0, "{stdout}{stderr}");
    assert!(stdout.contains("wrote"), "{stdout}");
    let (code, stdout, stderr) = atelier(&["release", "verify", path.to_str().expect("path")]);
    assert_eq!(code, 0, "the hf files verify with the rest: {stdout}{stderr}");

    let files = packing::unpack(archive).expect("unpack");
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
    assert_eq!(manifest["format"], "atelier-release/3");
    let listed: BTreeMap<&str, &str> = manifest["files"]
        .as_array()
        .expect("files")
        .iter()
        .map(|f| (f["name"].as_str().expect("name"), f["sha256"].as_str().expect("sha")))
        .collect();
    let held: Vec<&String> = files.keys().filter(|n| n.starts_with("hf/")).collect();
    assert!(held.len() >= 5, "{held:?}");
    for name in &held {
        let exported = std::fs::read(out.join(name.trim_start_matches("hf/"))).expect("exported file");
        assert_eq!(&exported, &files[*name], "{name} is exported as the archive holds it");
        assert!(listed.contains_key(name.as_str()), "{name} is in the manifest");
    }
    // Croissant lists every table with the manifest's hash, and the RAI fields.
    let croissant: Value = serde_json::from_slice(&files["hf/croissant.json"]).expect("croissant");
    for d in croissant["distribution"].as_array().expect("distribution") {
        let url = d["contentUrl"].as_str().expect("url");
        assert_eq!(Some(&d["sha256"].as_str().expect("sha")), listed.get(format!("hf/{url}").as_str()), "{url}");
    }
    for key in [
        "rai:dataCollection",
        "rai:dataAnnotationProtocol",
        "rai:dataPreprocessingProtocol",
        "rai:personalSensitiveInformation",
    ] {
        assert!(croissant[key].as_str().is_some_and(|t| t.len() > 20), "{key}: {}", croissant[key]);
    }
    assert_eq!(croissant["license"], "cc-by-4.0");
    let card = String::from_utf8_lossy(&files["hf/README.md"]);
    assert!(card.starts_with("---\n") && card.contains("license: \"cc-by-4.0\""), "{card}");
    assert!(card.contains("## Collection process"), "the datasheet's sections follow the header");
    let everything: String = held.iter().map(|n| String::from_utf8_lossy(&files[*n]).into_owned()).collect();
    assert!(!everything.contains("PROLIFIC_") && !everything.contains("fp-"), "pseudonyms only");

    let Some(python) = crate::support::python_with(&PYTHON) else {
        crate::support::say_skipped("Hugging Face release check: no Python with datasets and mlcroissant");
        return None;
    };
    // The archive as a streaming reader meets it (Python's `tarfile` in
    // "r|gz" mode, as a download piped through it): every file, not the first alone.
    const LIST: &str = "import sys, tarfile\nwith tarfile.open(sys.argv[1], 'r|gz') as t:\n    \
                        print('\\n'.join(m.name.split('/', 1)[1] for m in t if m.isfile()))";
    let streamed = Command::new(&python).arg("-c").arg(LIST).arg(&path).output().expect("python runs");
    assert!(streamed.status.success(), "{}", String::from_utf8_lossy(&streamed.stderr));
    let mut streamed: Vec<String> = String::from_utf8_lossy(&streamed.stdout).lines().map(str::to_owned).collect();
    streamed.sort();
    assert_eq!(streamed, files.keys().cloned().collect::<Vec<_>>(), "tarfile streams every file");
    let unpacked = dir.path().join("unpacked");
    for (name, bytes) in &files {
        let path = unpacked.join(name);
        std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
        std::fs::write(path, bytes).expect("write");
    }
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/it/hf_release_check.py");
    let run = Command::new(python)
        .arg(script)
        .arg(&out)
        .arg(&unpacked)
        .arg(spec.to_string())
        .env("HF_DATASETS_CACHE", dir.path().join("cache"))
        .env("HF_HUB_OFFLINE", "1")
        .output()
        .expect("python runs");
    let stdout = String::from_utf8_lossy(&run.stdout);
    assert!(run.status.success(), "{}: {stdout}{}", run.status, String::from_utf8_lossy(&run.stderr));
    Some(serde_json::from_str(stdout.lines().last().expect("report")).expect("report"))
}

/// The tables every release has beside the kind's, and the exports they equal.
fn core_spec() -> Value {
    json!({"responses": {"csv": "responses.csv"}, "items": {"jsonl": "raw/items.jsonl"}})
}

fn merged(mut a: Value, b: Value) -> Value {
    a.as_object_mut().expect("object").extend(b.as_object().expect("object").clone());
    a
}

#[tokio::test]
async fn an_a100_release_loads_in_datasets_and_croissant_as_its_csv() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let aat = |id: &str| {
        let mut q = question(id);
        q["answer"] = json!(format!("{id}-c2"));
        q["dimension"] = json!("Color");
        q["sub_dimension"] = json!("Warm Tone");
        q
    };
    let (campaign, invitation) =
        a100_campaign(&app, &admin, "a100-aat", vec![aat("q1"), aat("q2")], json!({"participants": 6})).await;
    for (who, choice) in [("PROLIFIC_A", 0), ("PROLIFIC_B", 0), ("PROLIFIC_C", 1)] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish_with(&app, &view, |item: &Value| json!({"choice": item["payload"]["choices"][choice]["id"]})).await;
    }
    let archive = release(&app, &admin, &campaign).await;
    let spec = merged(core_spec(), json!({"ground_truth": {"csv": "ground_truth.csv"}}));
    if let Some(rows) = export_and_load(&archive, spec) {
        assert_eq!(rows["ground_truth"], 10, "2 questions x 5 choices");
        assert_eq!(rows["responses"], 6);
        assert_eq!(rows["items"], 2);
    }
}

#[tokio::test]
async fn a_vton_release_loads_with_per_image_scores_and_per_questionnaire_alpha() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3});
    let (campaign, invitation) = open_vton_campaign(&app, &admin, 6, 1, config).await;
    for n in 0..6 {
        let w = join(&app, &invitation, &format!("PROLIFIC_{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        // Everyone agrees, image by image, except one worker on one image.
        w.finish_with(&app, &view, |item: &Value| {
            let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
            let image: usize = tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse().unwrap_or(0);
            let rating = if image >= 1000 { 1 } else { 1 + (image + usize::from(n == 5 && image == 2)) % 3 };
            json!({"rating": rating})
        })
        .await;
    }
    let archive = release(&app, &admin, &campaign).await;
    let spec = merged(
        core_spec(),
        json!({"ground_truth": {"csv": "ground_truth.csv"}, "questionnaires": {
            "json": "ground_truth.json", "path": ["curation", "questionnaires"],
            "columns": {"questionnaire": "questionnaire", "alpha_before": "alpha_before", "alpha_after": "alpha_after",
                        "annotators_kept": "annotators_kept", "kept": "kept"}}}),
    );
    if let Some(rows) = export_and_load(&archive, spec) {
        assert_eq!(rows["ground_truth"], 6, "6 images; the sanity image is not scored");
        assert_eq!((rows["responses"], rows["questionnaires"]), (24, 2));
    }
}

#[tokio::test]
async fn a_vsd_release_loads_with_pairs_labels_and_provenance() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "hub", "config": {"k": 2, "image_base_url": "https://img.example/"}}),
        "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\nm2,q1,a,0\n",
    )
    .await;
    let (e1, e2) = (expert_token(&app, "e1").await, expert_token(&app, "e2").await);
    assert_eq!(crate::vsd_service::label_all(&app, &e1, &id, |_| "1").await, 2);
    assert_eq!(crate::vsd_service::label_all(&app, &e2, &id, |c| if c.ends_with('a') { "1" } else { "0" }).await, 2);
    let archive = release(&app, &admin, &id).await;
    let spec = merged(core_spec(), json!({"ground_truth": {"csv": "ground_truth.csv"}}));
    if let Some(rows) = export_and_load(&archive, spec) {
        assert_eq!(rows["ground_truth"], 2);
        assert_eq!(rows["responses"], 4);
    }
}

#[tokio::test]
async fn a_fashionpedia_release_loads_with_masks_and_attribute_ids() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id =
        crate::fashionpedia_service::campaign(&app, &admin, json!({"review": false, "annotators_per_batch": 1})).await;
    let expert = expert_token(&app, "fp-0").await;
    let batches = crate::fashionpedia_service::work_all(&app, &expert, &id, |sc, _| match sc {
        "length" => json!({"attributes": [160, 161]}),
        _ => json!({"not_sure": true}),
    })
    .await;
    assert!(batches >= 1);
    let archive = release(&app, &admin, &id).await;
    let files = packing::unpack(&archive).expect("unpack");
    let gt: Value = serde_json::from_slice(&files["ground_truth.json"]).expect("gt");
    let masks = gt["annotations"].as_array().expect("masks").len();
    let spec = merged(
        core_spec(),
        json!({"ground_truth": {"csv": "ground_truth.csv", "lists": {"attributes": "; "}}, "masks": {
            "json": "ground_truth.json", "path": ["annotations"],
            "columns": {"annotation_id": "annotation_id", "image_id": "image_id", "image": "file_name",
                        "category": "category", "attribute_ids": "attribute_ids", "done": "done"}}}),
    );
    if let Some(rows) = export_and_load(&archive, spec) {
        assert_eq!(rows["ground_truth"], 3, "3 tasks");
        assert_eq!(rows["masks"], masks);
    }
}

#[tokio::test]
async fn export_copies_uploaded_images_on_request_and_refuses_what_it_cannot_do() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let mut urls = Vec::new();
    for shade in [10, 200] {
        let resp = reqwest::Client::new()
            .post(app.at("/api/v1/admin/images"))
            .bearer_auth(&admin)
            .header("content-type", "image/png")
            .body(crate::fixtures::png(4, 4, shade))
            .send()
            .await
            .expect("upload");
        assert_eq!(resp.status(), StatusCode::CREATED);
        let stored: Value = resp.json().await.expect("json");
        urls.push(stored["url"].as_str().expect("url").to_owned());
    }
    let (status, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "uploaded", "config": {"background": []}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let items: Vec<Value> = urls
        .iter()
        .enumerate()
        .map(|(n, url)| {
            json!({"external_id": format!("img-{n}"), "payload": {"tryon": url, "garment": "https://cdn.example/g.png", "person": "https://cdn.example/p.png", "reference": "https://cdn.example/r.png"}})
        })
        .collect();
    let (status, body) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/items"), Some(json!({"items": items})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let archive = release(&app, &admin, &id).await;

    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("release.tar.gz");
    std::fs::write(&path, &archive).expect("write");
    let path = path.to_str().expect("path");
    let uploads = std::env::temp_dir().join(format!("atelier-uploads-{}", app.database));
    let out = |name: &str| dir.path().join(name).to_str().expect("path").to_owned();

    // Without the upload directory, and into a folder that holds something: refused, nothing written.
    let (code, _, err) = atelier(&["release", "export", "--format", "hf", "--with-images", path, &out("a")]);
    assert_ne!(code, 0);
    assert!(err.contains("--with-images needs --upload-dir"), "{err}");
    std::fs::create_dir(dir.path().join("full")).expect("mkdir");
    std::fs::write(dir.path().join("full/keep.txt"), "mine").expect("write");
    let (code, _, err) = atelier(&["release", "export", "--format", "hf", path, &out("full")]);
    assert!(code != 0 && err.contains("is not empty"), "{err}");
    // An archive that does not verify is not exported.
    let mut files = packing::unpack(&archive).expect("unpack");
    files.insert("hf/README.md".into(), b"---\nlicense: mit\n---\n".to_vec());
    let list: Vec<(String, Vec<u8>)> = files.into_iter().collect();
    let bad = dir.path().join("bad.tar.gz");
    std::fs::write(&bad, packing::pack("release", &list, 0).expect("pack")).expect("write");
    let (code, _, err) = atelier(&["release", "export", "--format", "hf", bad.to_str().expect("path"), &out("b")]);
    assert!(code != 0 && err.contains("does not verify") && err.contains("hf/README.md"), "{err}");
    assert!(!dir.path().join("b").exists());
    // An image missing from the upload directory: refused, nothing written.
    let empty_uploads = dir.path().join("no-uploads");
    let args = ["release", "export", "--format", "hf", "--with-images", "--upload-dir"];
    let (code, _, err) = atelier(&[&args[..], &[empty_uploads.to_str().expect("path"), path, &out("c")]].concat());
    assert!(code != 0 && err.contains("not found in the upload directory"), "{err}");
    assert!(!dir.path().join("c").exists());

    // With the images: copied beside the tables, the tables point at the copies.
    let (code, stdout, err) = atelier(&[&args[..], &[uploads.to_str().expect("path"), path, &out("d")]].concat());
    assert_eq!(code, 0, "{stdout}{err}");
    assert!(stdout.contains("2 images"), "{stdout}");
    for url in &urls {
        let name = url.trim_start_matches("/images/");
        let copied = std::fs::read(dir.path().join("d/images").join(name)).expect("copied");
        assert_eq!(copied, std::fs::read(uploads.join(name)).expect("upload"));
    }
    let items = std::fs::read(dir.path().join("d/data/items.parquet")).expect("items");
    let reader = parquet::file::reader::SerializedFileReader::new(bytes::Bytes::from(items.clone())).expect("parquet");
    let rows: Vec<String> = parquet::file::reader::FileReader::get_row_iter(&reader, None)
        .expect("rows")
        .map(|r| r.expect("row").to_string())
        .collect();
    for (row, url) in rows.iter().zip(&urls) {
        let relative = url.trim_start_matches('/');
        assert!(
            row.contains(&format!("\"{relative}\"")) && !row.contains(url.as_str()),
            "paths point into the folder: {row}"
        );
    }
    let croissant: Value =
        serde_json::from_slice(&std::fs::read(dir.path().join("d/croissant.json")).expect("croissant")).expect("json");
    let items_sha = croissant["distribution"]
        .as_array()
        .expect("files")
        .iter()
        .find(|d| d["contentUrl"] == "data/items.parquet")
        .expect("items")["sha256"]
        .clone();
    assert_eq!(
        items_sha,
        json!(hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&items))),
        "hashes of the rewritten files"
    );
}
