//! The Fashionpedia kind in the service: ontology and COCO import with
//! validation, tasks per mask and super-category, multi-select answers
//! through the page form, review (self-review refused, the correction
//! wins), majority mode with alpha, statistics, and the COCO export read
//! back by pycocotools.

use crate::fixtures::{admin_token, api, csrf_in, expert_token, get_text, login_page};
use crate::support::TestApp;
use atelier::auth::{tokens, users, Role};
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// A small ontology written for the tests (the release's layout).
const ONTOLOGY: &str = r#"{"categories": [
    {"id": 0, "name": "shirt, blouse", "supercategory": "upperbody", "level": 2, "taxonomy_id": "c0"},
    {"id": 31, "name": "sleeve", "supercategory": "garment parts", "level": 2, "taxonomy_id": "c31"},
    {"id": 23, "name": "shoe", "supercategory": "legs and feet", "level": 2, "taxonomy_id": "c23"}],
  "attributes": [
    {"id": 115, "name": "symmetrical", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a115"},
    {"id": 116, "name": "peplum", "supercategory": "silhouette", "level": 1, "taxonomy_id": "a116"},
    {"id": 160, "name": "wrist-length", "supercategory": "length", "level": 1, "taxonomy_id": "a160"},
    {"id": 161, "name": "elbow-length", "supercategory": "length", "level": 1, "taxonomy_id": "a161"}]}"#;

/// Two images: a shirt (polygon), its sleeve (compressed RLE: a 3x3 square in
/// a 10x10 image, as pycocotools encodes it), a shoe (no attributes apply),
/// and a zero-area mask.
fn coco() -> Value {
    json!({
        "images": [{"id": 1, "width": 10, "height": 10, "file_name": "a.jpg"}, {"id": 2, "width": 20, "height": 20, "file_name": "b.jpg"}],
        "annotations": [
            {"id": 11, "image_id": 1, "category_id": 0, "segmentation": [[1, 1, 8, 1, 8, 8, 1, 8]], "bbox": [1, 1, 7, 7], "area": 49, "iscrowd": 0},
            {"id": 12, "image_id": 1, "category_id": 31, "segmentation": {"size": [10, 10], "counts": "f037000`1"}, "bbox": [2, 2, 3, 3], "area": 9, "iscrowd": 0},
            {"id": 13, "image_id": 2, "category_id": 23, "segmentation": [[1, 1, 5, 1, 5, 5]], "area": 8},
            {"id": 14, "image_id": 2, "category_id": 0, "segmentation": [[1, 1, 2, 2, 3, 3]], "area": 0}
        ]
    })
}

async fn post(app: &TestApp, token: &str, path: &str, body: String) -> (StatusCode, Value) {
    let resp = reqwest::Client::new().post(app.at(path)).bearer_auth(token).body(body).send().await.expect("post");
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

pub(crate) async fn campaign(app: &TestApp, admin: &str, settings: Value) -> String {
    let (status, c) = api(
        app,
        admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "fashionpedia", "name": "FP", "config": {"masks_per_batch": 10}, "settings": settings})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let base = format!("/api/v1/admin/campaigns/{id}/fashionpedia");
    let (status, body) = post(app, admin, &format!("{base}/coco"), coco().to_string()).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("no_ontology")));
    let (status, body) = post(app, admin, &format!("{base}/ontology"), ONTOLOGY.to_owned()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = post(app, admin, &format!("{base}/coco"), coco().to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    // The shirt gets length and silhouette, the sleeve length, the shoe nothing; one zero-area mask.
    assert_eq!(body, json!({"masks": 4, "zero_area": 1, "tasks": 3}));
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(app, admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    id
}

/// Answers every task of the expert's next batch with `answer(supercategory, category)`; returns the batch view.
pub(crate) async fn work(app: &TestApp, token: &str, id: &str, answer: impl Fn(&str, &str) -> Value) -> Value {
    let (status, view) =
        api(app, token, Method::POST, &format!("/api/v1/expert/campaigns/{id}/assignment"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    if view.is_null() {
        return view;
    }
    let a = view["assignment"]["id"].as_str().expect("id").to_owned();
    for item in view["items"].as_array().expect("items") {
        let p = &item["payload"];
        let body = json!({"item_id": item["id"], "answer": answer(p["supercategory"].as_str().expect("sc"), p["category"].as_str().expect("c"))});
        let (status, r) =
            api(app, token, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body)).await;
        assert_eq!(status, StatusCode::OK, "{r}");
    }
    let (status, r) = api(app, token, Method::POST, &format!("/api/v1/expert/assignments/{a}/complete"), None).await;
    assert_eq!(status, StatusCode::OK, "{r}");
    view
}

/// Works through every batch left for the expert; returns how many there were.
pub(crate) async fn work_all(app: &TestApp, token: &str, id: &str, answer: impl Fn(&str, &str) -> Value) -> usize {
    let mut batches = 0;
    while !work(app, token, id, &answer).await.is_null() {
        batches += 1;
    }
    batches
}

/// The named hidden fields of the form with `class`, in order.
fn form_fields(html: &str, class: &str) -> Vec<(String, String)> {
    let start = html.find(&format!("class=\"{class}\"")).unwrap_or_else(|| panic!("a {class} form in {html}"));
    let form = &html[start..start + html[start..].find("</form>").expect("form end")];
    form.split("<input type=\"hidden\" name=\"")
        .skip(1)
        .filter_map(|rest| {
            let (name, rest) = rest.split_once('"')?;
            let value = rest.split_once("value=\"")?.1.split_once('"')?.0;
            Some((name.to_owned(), value.to_owned()))
        })
        .collect()
}

#[tokio::test]
async fn a_reviewer_on_the_page_starts_from_the_answer_and_accepts_it_in_one_step() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({})).await;
    let author = expert_token(&app, "fp-author").await;
    let answer = |sc: &str, _: &str| match sc {
        "length" => json!({"attributes": [160, 161]}),
        _ => json!({"attributes": [115]}),
    };
    assert_eq!(work_all(&app, &author, &id, answer).await, 2);

    users::create(&app.pool, Role::Expert, "fp-reviewer", "expert-password-1").await.expect("expert");
    let (browser, csrf) = crate::fixtures::logged_in(&app, "fp-reviewer", "expert-password-1").await;
    let home = browser.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    assert!(
        home.contains(r#"<td class="num reviews" data-label="Reviews waiting for you">2</td>"#),
        "two batches to review: {home}"
    );
    let resp = browser
        .post(app.at(&format!("/work/{id}/start")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("start");
    let task = resp.headers()["location"].to_str().expect("location").to_owned();
    let mut accepted = 0;
    let mut corrected = 0;
    let mut rle_outlined = false;
    loop {
        let html = browser.get(app.at(&task)).send().await.expect("task").text().await.expect("html");
        if !html.contains("class=\"fp-accept\"") {
            break;
        }
        // The mask is a thin outline over the image: an RLE mask by its pixel edges, never its filled runs.
        let stroke = html.split("<path d=\"").find(|p| p.contains("non-scaling-stroke")).expect("an outline");
        let d = &stroke[..stroke.find('"').expect("end")];
        assert!(!d.contains("h1v"), "not the runs: {d}");
        rle_outlined |= d.contains("h1M") && d.contains('V');
        // The form starts from the answer under review, and Accept posts it as it is.
        let accept = form_fields(&html, "fp-accept");
        assert!(html.contains("data-key=\"a\">Accept the answer as it is (A)"), "{html}");
        let fields: Vec<(String, String)> = if accepted == 0 {
            assert!(html.contains(r#"value="160" checked"#) && html.contains(r#"value="161" checked"#), "{html}");
            let attrs: Vec<&str> = accept.iter().filter(|(k, _)| k == "attr").map(|(_, v)| v.as_str()).collect();
            assert_eq!(attrs, ["160", "161"]);
            accepted += 1;
            accept
        } else {
            // A correction: the main form with one tick taken off.
            corrected += 1;
            accept.into_iter().filter(|(k, v)| k != "attr" || v != "161").collect()
        };
        let resp = browser.post(app.at(&format!("{task}/answer"))).form(&fields).send().await.expect("answer");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{fields:?}");
    }
    assert_eq!((accepted, corrected), (1, 1), "one length batch of two masks");
    assert!(rle_outlined, "the RLE mask of the batch was outlined by its edges");
    let resp = browser
        .post(app.at(&format!("{task}/complete")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("complete");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let home = browser.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    assert!(
        home.contains(r#"<td class="num reviews" data-label="Reviews waiting for you">1</td>"#),
        "one review left: {home}"
    );
    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    assert_eq!(
        gt["stats"]["review_acceptance"]["fp-author"],
        json!({"reviewed": 2, "accepted": 1, "rate": 0.5}),
        "one accepted as it was, one corrected: {gt}"
    );
}

#[tokio::test]
async fn imports_are_checked_naming_the_annotation_and_change_nothing() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, c) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "fashionpedia", "name": "x"})))
            .await;
    let id = c["id"].as_str().expect("id");
    let base = format!("/api/v1/admin/campaigns/{id}/fashionpedia");
    let (status, err) =
        post(&app, &admin, &format!("{base}/ontology"), ONTOLOGY.replace("\"id\": 116", "\"id\": 115")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(err["error"]["message"].as_str().expect("m").contains("attribute id 115 appears twice"), "{err}");
    post(&app, &admin, &format!("{base}/ontology"), ONTOLOGY.to_owned()).await;
    let broken = |f: &dyn Fn(&mut Value)| {
        let mut c = coco();
        f(&mut c);
        c.to_string()
    };
    for (body, expected) in [
        (
            broken(&|c| c["annotations"][0]["segmentation"] = json!([[1, 1, 8, 1, 8]])),
            "annotation 11: polygon 1: an odd number of coordinates",
        ),
        (
            broken(&|c| c["annotations"][0]["segmentation"] = json!([[1, 1, 80, 1, 8, 8]])),
            "annotation 11: polygon 1: point (80, 1) outside the 10x10 image",
        ),
        (
            broken(&|c| c["annotations"][1]["segmentation"]["size"] = json!([20, 10])),
            "annotation 12: RLE: size [20, 10] does not match",
        ),
        (broken(&|c| c["annotations"][1]["image_id"] = json!(9)), "annotation 12: image 9 does not exist"),
        (
            broken(&|c| c["annotations"][2]["category_id"] = json!(99)),
            "annotation 13: category 99 is not in the ontology",
        ),
    ] {
        let (status, err) = post(&app, &admin, &format!("{base}/coco"), body).await;
        assert_eq!(
            (status, err["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_coco")),
            "{err}"
        );
        assert!(err["error"]["message"].as_str().expect("m").contains(expected), "{err}");
    }
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 0, "nothing was imported");
    // The admin decides which super-categories apply: the sleeve gets none here.
    let (status, _) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{id}/config"),
        Some(json!({"applies": {"shirt, blouse": ["silhouette"]}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, body) = post(&app, &admin, &format!("{base}/coco"), coco().to_string()).await;
    assert_eq!(body["tasks"], 1, "{body}");
}

#[tokio::test]
async fn experts_tick_several_attributes_on_the_page_and_a_reviewer_corrects_or_accepts() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({})).await;

    // The annotator works on the page: tick two attributes, submit.
    users::create(&app.pool, Role::Expert, "fp-author", "expert-password-1").await.expect("expert");
    let (browser, csrf) = login_page(&app).await;
    browser
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "fp-author"), ("password", "expert-password-1")])
        .send()
        .await
        .expect("login");
    let home = browser.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    let csrf = csrf_in(&home);
    let resp = browser
        .post(app.at(&format!("/work/{id}/start")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("start");
    let task = resp.headers()["location"].to_str().expect("location").to_owned();
    // The first batch is one super-category (length): the shirt's and the sleeve's.
    let mut answered = 0;
    loop {
        let html = browser.get(app.at(&task)).send().await.expect("task").text().await.expect("html");
        if !html.contains("name=\"item_id\"") {
            break;
        }
        assert!(html.contains("value=\"160\""), "one super-category per batch");
        assert!(
            html.contains("<svg viewBox=") && html.contains("mask=\"url(#fp-cut)\""),
            "the mask is drawn over its image"
        );
        let item_id = crate::fixtures::item_on_page(&html);
        // Two boxes ticked (an odd answer, corrected by the reviewer below).
        let mut form = vec![("csrf_token", csrf.clone()), ("item_id", item_id), ("shown_at", "0".into())];
        form.extend([("attr", "160".to_owned()), ("attr", "161".to_owned())]);
        let resp = browser.post(app.at(&format!("{task}/answer"))).form(&form).send().await.expect("answer");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        answered += 1;
    }
    assert_eq!(answered, 2);
    let resp = browser
        .post(app.at(&format!("{task}/complete")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("complete");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    // The silhouette batch through the API: "not on the list" with a suggestion.
    let author = {
        let user = users::by_name(&app.pool, "fp-author").await.expect("q").expect("user");
        tokens::create(&app.pool, user.id).await.expect("token")
    };
    let silhouette = |_: &str, _: &str| json!({"attributes": [115], "not_on_list": true, "missing": "  Boxy "});
    assert_eq!(work_all(&app, &author, &id, silhouette).await, 1);
    let stored: Vec<Value> = sqlx::query_scalar("SELECT answer FROM responses ORDER BY answer::text")
        .fetch_all(&app.pool)
        .await
        .expect("answers");
    assert!(stored.contains(&json!({"attributes": [160, 161], "not_sure": false, "not_on_list": false})), "{stored:?}");
    assert!(
        stored.contains(&json!({"attributes": [115], "not_sure": false, "not_on_list": true, "missing": "Boxy"})),
        "{stored:?}"
    );

    // Awaiting review, nothing is final: the COCO export has no attributes
    // unless partial results are asked for, and says so per mask.
    let coco = |query: &'static str| {
        let (app, admin, id) = (&app, &admin, id.clone());
        async move {
            let text =
                get_text(app, admin, &format!("/api/v1/admin/campaigns/{id}/fashionpedia/coco.json{query}")).await;
            let parsed: Value = serde_json::from_str(&text).expect("json");
            parsed["annotations"]
                .as_array()
                .expect("annotations")
                .iter()
                .find(|a| a["id"] == 11)
                .cloned()
                .expect("shirt")
        }
    };
    let shirt = coco("").await;
    assert_eq!((shirt["attribute_ids"].clone(), shirt["done_supercategories"].clone()), (json!([]), json!([])));
    let shirt = coco("?partial=true").await;
    assert_eq!(shirt["attribute_ids"], json!([115, 160, 161]), "{shirt}");
    assert_eq!(shirt["pending_attribute_ids"], json!([115, 160, 161]));

    // The author is not given their own work to review.
    assert!(work(&app, &author, &id, |_, _| json!({})).await.is_null());
    // The reviewer sees the answers as the kind renders them, corrects the
    // shirt's length and the sleeve's, and accepts the silhouette.
    let reviewer = expert_token(&app, "fp-reviewer").await;
    let verdict = |sc: &str, _: &str| match sc {
        "length" => json!({"attributes": [160]}),
        _ => json!({"attributes": [115], "not_on_list": true, "missing": "Boxy"}),
    };
    let review = work(&app, &reviewer, &id, verdict).await;
    assert_eq!(review["reviewing"].as_object().expect("under review").len(), 2);
    assert_eq!(work_all(&app, &reviewer, &id, verdict).await, 1);

    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let shirt =
        gt["annotations"].as_array().expect("masks").iter().find(|m| m["annotation_id"] == 11).expect("shirt").clone();
    assert_eq!(shirt["attribute_ids"], json!([115, 160]), "the corrections win");
    let exported = coco("").await;
    assert_eq!(exported["attribute_ids"], json!([115, 160]), "reviewed: final");
    assert_eq!(exported["done_supercategories"], json!(["length", "silhouette"]));
    // A release holds the same COCO file, and verifies.
    let (files, archive) = crate::fixtures::cut_release(&app, &admin, &id).await;
    let released: Value = serde_json::from_slice(&files["fashionpedia_attributes.json"]).expect("coco");
    let released_shirt = released["annotations"].as_array().expect("a").iter().find(|a| a["id"] == 11).expect("shirt");
    assert_eq!(released_shirt["attribute_ids"], json!([115, 160]));
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("r.tar.gz");
    std::fs::write(&path, &archive).expect("write");
    let (ok, out, err) = crate::cli_stats::atelier(&["release", "verify", path.to_str().expect("path")]);
    assert!(ok, "{out}{err}");
    assert_eq!(shirt["tasks"]["length"]["status"], "reviewed");
    assert_eq!(shirt["tasks"]["length"]["reviewer"], "fp-reviewer");
    let stats = &gt["stats"];
    assert_eq!(stats["review_acceptance"]["fp-author"], json!({"reviewed": 3, "accepted": 1, "rate": 1.0 / 3.0}));
    assert_eq!(stats["per_supercategory"]["silhouette"]["not_on_list_share"], 1.0);
    assert_eq!(stats["per_supercategory"]["length"]["masks"], 2);
    assert_eq!(stats["suggestions"], json!({"boxy": 1}));
    assert_eq!(stats["attributes_per_mask_max"], 2);
    let csv = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/ground-truth.csv")).await;
    assert!(
        csv.contains("11,a.jpg,\"shirt, blouse\",length,wrist-length,false,false,,reviewed,fp-author,fp-reviewer"),
        "{csv}"
    );
}

#[tokio::test]
async fn independent_annotations_take_the_per_attribute_majority_with_alpha() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({"review": false, "annotators_per_batch": 3})).await;
    let picks: [&[u64]; 3] = [&[160, 161], &[160], &[161, 160]];
    for (n, pick) in picks.iter().enumerate() {
        let token = expert_token(&app, &format!("fp-{n}")).await;
        let pick: Vec<u64> = pick.to_vec();
        let batches = work_all(&app, &token, &id, |sc, _| match sc {
            "length" => json!({"attributes": pick}),
            _ => json!({"not_sure": true}),
        })
        .await;
        assert_eq!(batches, 2);
    }
    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let sleeve =
        gt["annotations"].as_array().expect("masks").iter().find(|m| m["annotation_id"] == 12).expect("sleeve").clone();
    assert_eq!(sleeve["attribute_ids"], json!([160, 161]), "each ticked by 2 of 3");
    assert_eq!(gt["stats"]["per_supercategory"]["silhouette"]["not_sure_share"], 1.0);
    assert!(gt["stats"]["alpha"]["length"].is_number(), "{}", gt["stats"]);
}

#[tokio::test]
async fn the_coco_export_loads_in_pycocotools_with_the_masks_and_attributes() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({"review": false})).await;
    let token = expert_token(&app, "fp-coco").await;
    work_all(&app, &token, &id, |sc, _| match sc {
        "length" => json!({"attributes": [161]}),
        _ => json!({"attributes": [116]}),
    })
    .await;
    let export = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/fashionpedia/coco.json")).await;
    let parsed: Value = serde_json::from_str(&export).expect("the export is JSON");
    // The masks with tasks (the shoe has no attribute to ask).
    assert_eq!(parsed["annotations"].as_array().expect("annotations").len(), 2);
    assert_eq!(parsed["images"].as_array().expect("images").len(), 1);
    let Some(python) = crate::support::python_with(&["pycocotools", "numpy"]) else {
        crate::support::say_skipped("pycocotools round trip: python3 with venv not found");
        return;
    };
    let dir = tempfile::tempdir().expect("tempdir");
    let file = dir.path().join("export.json");
    std::fs::write(&file, &export).expect("write");
    let script = r#"
import json, sys
from pycocotools.coco import COCO
coco = COCO(sys.argv[1])
sleeve = coco.loadAnns([12])[0]
shirt = coco.loadAnns([11])[0]
print(json.dumps({"annotations": len(coco.getAnnIds()), "images": len(coco.getImgIds()),
                  "categories": len(coco.getCatIds()), "shirt_attributes": shirt["attribute_ids"],
                  "sleeve_mask_area": int(coco.annToMask(sleeve).sum())}))
"#;
    let report = |file: &std::path::Path| {
        let out = std::process::Command::new(&python).arg("-c").arg(script).arg(file).output().expect("python runs");
        assert!(out.status.success(), "{}", String::from_utf8_lossy(&out.stderr));
        serde_json::from_slice::<Value>(out.stdout.rsplit(|b| *b == b'\n').find(|l| !l.is_empty()).expect("output"))
            .expect("JSON")
    };
    let expected =
        json!({"annotations": 2, "images": 1, "categories": 3, "shirt_attributes": [116, 161], "sleeve_mask_area": 9});
    assert_eq!(report(&file), expected);
    // A release's COCO file loads the same.
    let (files, _) = crate::fixtures::cut_release(&app, &admin, &id).await;
    let released = dir.path().join("released.json");
    std::fs::write(&released, &files["fashionpedia_attributes.json"]).expect("write");
    let mut from_tasks = expected.clone();
    from_tasks["categories"] = json!(2);
    assert_eq!(report(&released), from_tasks, "the categories its tasks use (the ontology is no part of a release)");
}

#[tokio::test]
async fn deepfashion2_files_import_through_the_category_mapping() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let ontology = ONTOLOGY.replace(
        r#"{"id": 23, "name": "shoe""#,
        r#"{"id": 6, "name": "pants", "supercategory": "lowerbody", "level": 2, "taxonomy_id": "c6"}, {"id": 23, "name": "shoe""#,
    );
    let (_, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "fashionpedia", "name": "df2", "config": {"applies": {"pants": ["length"], "shirt, blouse": ["silhouette", "length"]},
                     "df2_categories": {"long sleeve top": "shirt, blouse"}}})),
    )
    .await;
    let id = c["id"].as_str().expect("id");
    let base = format!("/api/v1/admin/campaigns/{id}/fashionpedia");
    post(&app, &admin, &format!("{base}/ontology"), ontology).await;
    let item = |name: &str, poly: Value| {
        json!({"category_name": name, "category_id": 1, "segmentation": [poly],
        "bounding_box": [1, 1, 6, 9], "landmarks": [2, 3, 2, 4, 5, 0, 6, 7, 1], "occlusion": 1, "style": 1,
        "zoom_in": 2, "viewpoint": 3, "scale": 2})
    };
    let bundle = json!({"000042.jpg": {"width": 10, "height": 10, "source": "shop", "pair_id": 7,
        "item1": item("trousers", json!([1, 1, 6, 1, 6, 9, 1, 9])),
        "item2": item("long sleeve top", json!([2, 2, 5, 2, 5, 5]))}});
    let (status, body) = post(&app, &admin, &format!("{base}/deepfashion2"), bundle.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!({"masks": 2, "zero_area": 0, "tasks": 3}));
    let payloads: Vec<Value> =
        sqlx::query_scalar("SELECT payload FROM items ORDER BY external_id").fetch_all(&app.pool).await.expect("items");
    assert_eq!(payloads[0]["annotation_id"], 4201, "image 42, item 1");
    assert_eq!(payloads[0]["category"], "pants", "trousers -> pants by default");
    assert_eq!(payloads[0]["bbox"], json!([1.0, 1.0, 5.0, 8.0]), "[x1, y1, x2, y2] -> [x, y, w, h]");
    assert_eq!(payloads[1]["category"], "shirt, blouse", "the campaign's own mapping");
    assert_eq!(payloads[1]["suggested"], json!([160]), "a long sleeve top suggests wrist-length sleeves");
    assert_eq!(payloads[0]["suggested"], json!([]), "trousers suggest nothing");
    // DeepFashion2's own fields stay with the mask and come out in its COCO-style conversion.
    let coco: Value = serde_json::from_str(&get_text(&app, &admin, &format!("{base}/coco.json")).await).expect("json");
    let trousers = coco["annotations"].as_array().expect("a").iter().find(|a| a["id"] == 4201).expect("4201").clone();
    assert_eq!(trousers["keypoints"], json!([2, 3, 2, 4, 5, 0, 6, 7, 1]));
    assert_eq!(trousers["num_keypoints"], 2, "visible landmarks");
    assert_eq!(
        [&trousers["style"], &trousers["pair_id"], &trousers["source"], &trousers["occlusion"], &trousers["viewpoint"]],
        [&json!(1), &json!(7), &json!("shop"), &json!(1), &json!(3)]
    );
    // Problems name the image and item, and nothing is imported.
    let bad = json!({"000043.jpg": {"width": 10, "height": 10, "item1": item("cape", json!([1, 1, 2, 1, 2, 2]))}});
    let (status, err) = post(&app, &admin, &format!("{base}/deepfashion2"), bad.to_string()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(err["error"]["message"].as_str().expect("m").contains("image 000043.jpg, item1: category `cape`"), "{err}");
    let no_size = json!({"000044.jpg": {"item1": item("trousers", json!([1, 1, 2, 1, 2, 2]))}});
    let (_, err) = post(&app, &admin, &format!("{base}/deepfashion2"), no_size.to_string()).await;
    assert!(err["error"]["message"].as_str().expect("m").contains("needs `width` and `height`"), "{err}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 3);
    // A COCO file whose image 42 is another file: refused, naming both, nothing imported.
    let other = json!({"images": [{"id": 42, "width": 20, "height": 20, "file_name": "street/42.jpg"}],
        "annotations": [{"id": 9, "image_id": 42, "category_id": 6, "segmentation": [[1, 1, 9, 1, 9, 9]]}]});
    let (status, err) = post(&app, &admin, &format!("{base}/coco"), other.to_string()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    let message = err["error"]["message"].as_str().expect("m");
    assert!(message.contains("000042.jpg") && message.contains("street/42.jpg"), "{message}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 3, "all or nothing");
}

#[tokio::test]
async fn super_categories_assigned_to_experts_go_to_them_and_the_page_shows_table_5() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({"review": false})).await;
    let (status, _) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{id}/config"),
        Some(json!({"masks_per_batch": 10, "experts": {"length": ["fp-len"]}})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let other = expert_token(&app, "fp-other").await;
    let len = expert_token(&app, "fp-len").await;
    // Each expert's home counts the batches they could start: fp-other the
    // silhouette batch (length is fp-len's alone), fp-len both; none once
    // each batch has its one expert.
    let open_batches = async |name: &str| {
        let (client, _) = crate::fixtures::logged_in(&app, name, crate::fixtures::EXPERT_PASSWORD).await;
        let home = client.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
        let cell = home.find("<td class=\"num open\"").unwrap_or_else(|| panic!("{home}"));
        let at = cell + home[cell..].find('>').expect("the cell's tag ends") + 1;
        home[at..].split('<').next().expect("count").parse::<i64>().expect("number")
    };
    assert_eq!((open_batches("fp-other").await, open_batches("fp-len").await), (1, 2));
    // fp-other gets only the silhouette batch; length belongs to fp-len.
    let batches = work_all(&app, &other, &id, |sc, _| {
        assert_eq!(sc, "silhouette", "length is assigned to another expert");
        json!({"not_sure": true})
    })
    .await;
    assert_eq!(batches, 1);
    let batches = work_all(&app, &len, &id, |sc, category| {
        assert_eq!(sc, "length");
        if category == "sleeve" {
            json!({"not_on_list": true, "missing": "three-quarter"})
        } else {
            json!({"attributes": [160]})
        }
    })
    .await;
    assert_eq!(batches, 1);
    assert_eq!((open_batches("fp-other").await, open_batches("fp-len").await), (0, 0));
    // Table 5: counts divided by the masks answered for the super-category.
    let (client, _) = crate::fixtures::logged_in_admin(&app).await;
    let page = client
        .get(app.at(&format!("/admin/campaigns/{id}/fashionpedia")))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(
        page.contains(r#"<td>length</td><td class="num">2</td><td class="num">0.0 %</td><td class="num">50.0 %</td>"#),
        "{page}"
    );
    assert!(
        page.contains(
            r#"<td>silhouette</td><td class="num">1</td><td class="num">100.0 %</td><td class="num">0.0 %</td>"#
        ),
        "{page}"
    );
    assert!(page.contains("three-quarter (1)"), "suggestions grouped by text");
}

/// The ontology as released (46 categories, 294 attributes, two level-2
/// groups), from `../shared/reference` where it exists: accepted as it is,
/// and the paper's default of which super-categories apply gives a dress
/// eight tasks (all but neckline type), a sleeve two, a neckline one and a
/// shoe none; the leather group is offered under non-textile material type.
#[tokio::test]
async fn the_released_ontology_is_accepted_and_gives_the_papers_tasks_when_present() {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/fashionpedia/ontology.json");
    let Ok(ontology) = std::fs::read_to_string(&path) else {
        crate::support::say_skipped("released Fashionpedia ontology: ../shared/reference/fashionpedia not found");
        return;
    };
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let body = json!({"kind": "fashionpedia", "name": "release", "config": {"masks_per_batch": 20}});
    let id = crate::fixtures::create_campaign(&app, &admin, body).await;
    let base = format!("/api/v1/admin/campaigns/{id}/fashionpedia");
    let (status, body) = post(&app, &admin, &format!("{base}/ontology"), ontology).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let square = |x: u32| json!([[x, 1, x + 4, 1, x + 4, 5, x, 5]]);
    let coco = json!({
        "images": [{"id": 7, "width": 40, "height": 10, "file_name": "street.jpg"}],
        "annotations": [
            {"id": 1, "image_id": 7, "category_id": 10, "segmentation": square(1), "area": 16},
            {"id": 2, "image_id": 7, "category_id": 31, "segmentation": square(10), "area": 16},
            {"id": 3, "image_id": 7, "category_id": 33, "segmentation": square(20), "area": 16},
            {"id": 4, "image_id": 7, "category_id": 23, "segmentation": square(30), "area": 16}
        ]
    });
    let (status, body) = post(&app, &admin, &format!("{base}/coco"), coco.to_string()).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body, json!({"masks": 4, "zero_area": 0, "tasks": 11}));
    let tasks: Vec<(String, String)> = sqlx::query_as(
        "SELECT payload->>'category', payload->>'supercategory' FROM items WHERE campaign_id = $1::uuid ORDER BY 1, 2",
    )
    .bind(&id)
    .fetch_all(&app.pool)
    .await
    .expect("tasks");
    let of = |category: &str| -> Vec<&str> {
        tasks.iter().filter(|(c, _)| c == category).map(|(_, s)| s.as_str()).collect()
    };
    assert_eq!(
        of("dress"),
        [
            "length",
            "nickname",
            "non-textile material type",
            "opening type",
            "silhouette",
            "textile finishing, manufacturing techniques",
            "textile pattern",
            "waistline"
        ]
    );
    assert_eq!(of("sleeve"), ["length", "nickname"]);
    assert_eq!(of("neckline"), ["neckline type"]);
    assert!(of("shoe").is_empty());
    let options: Value = sqlx::query_scalar(
        "SELECT payload->'options' FROM items
         WHERE campaign_id = $1::uuid AND payload->>'supercategory' = 'non-textile material type'",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .expect("options");
    let options = options.as_array().expect("options");
    assert_eq!(options.len(), 14, "ten materials and the four leathers: {options:?}");
    assert!(options.contains(&json!({"id": 290, "name": "suede", "group": "leather"})), "{options:?}");
    assert!(options[..10].iter().all(|o| o.get("group").is_none()), "level-2 groups after the rest: {options:?}");
}

#[tokio::test]
async fn deepfashion2_splits_number_their_images_apart() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let ontology = ONTOLOGY.replace(
        r#"{"id": 23, "name": "shoe""#,
        r#"{"id": 6, "name": "pants", "supercategory": "lowerbody", "level": 2, "taxonomy_id": "c6"}, {"id": 23, "name": "shoe""#,
    );
    let id = crate::fixtures::create_campaign(
        &app,
        &admin,
        json!({"kind": "fashionpedia", "name": "splits", "config": {"applies": {"pants": ["length"]}}}),
    )
    .await;
    let base = format!("/api/v1/admin/campaigns/{id}/fashionpedia");
    post(&app, &admin, &format!("{base}/ontology"), ontology).await;
    // The same file name in two splits: two images.
    let bundle = |w: u64| {
        json!({"000002.jpg": {"width": w, "height": 10, "item1": {"category_name": "trousers", "category_id": 8,
            "segmentation": [[1, 1, 6, 1, 6, 9, 1, 9]], "bounding_box": [1, 1, 6, 9]}}})
        .to_string()
    };
    for (split, w) in [("train", 10), ("validation", 12)] {
        let (status, body) = post(&app, &admin, &format!("{base}/deepfashion2?split={split}"), bundle(w)).await;
        assert_eq!(status, StatusCode::CREATED, "{split}: {body}");
    }
    let images: Vec<(Value, Value)> =
        sqlx::query_as("SELECT payload->'image_id', payload->'file_name' FROM items ORDER BY payload->>'image_id'")
            .fetch_all(&app.pool)
            .await
            .expect("items");
    assert_eq!(
        images,
        vec![(json!(1_000_002), json!("train/000002.jpg")), (json!(2_000_002), json!("validation/000002.jpg"))]
    );
    // An unknown split is refused.
    let (status, body) = post(&app, &admin, &format!("{base}/deepfashion2?split=dev"), bundle(10)).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
}

#[tokio::test]
async fn the_expert_home_counts_what_the_expert_could_start_by_the_rules_that_hand_it_out() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // Several experts per batch: batches are shared, not "every expert's".
    let id = campaign(&app, &admin, json!({"review": false, "annotators_per_batch": 2})).await;
    expert_token(&app, "fp-home").await;
    let (client, _) = crate::fixtures::logged_in(&app, "fp-home", crate::fixtures::EXPERT_PASSWORD).await;
    let cell = |html: &str, class: &str| -> i64 {
        let cell = html.find(&format!("<td class=\"num {class}\"")).unwrap_or_else(|| panic!("{class} in {html}"));
        let at = cell + html[cell..].find('>').expect("the cell's tag ends") + 1;
        html[at..].split('<').next().and_then(|n| n.trim().parse().ok()).expect("a number")
    };
    let home = client.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    let (remaining, open) = (cell(&home, "remaining"), cell(&home, "open"));
    let items: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM batch_items bi JOIN batches b ON b.id = bi.batch_id WHERE b.campaign_id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .expect("items");
    assert!(open > 0, "{home}");
    assert_eq!(remaining, items, "every batch is open to them, so every item remains: {home}");
    // Two colleagues take every batch: nothing is left to start, and nothing remains.
    for n in 0..2 {
        let token = expert_token(&app, &format!("fp-other-{n}")).await;
        work_all(&app, &token, &id, |_, _| json!({"not_sure": true})).await;
    }
    let home = client.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    assert_eq!((cell(&home, "remaining"), cell(&home, "open")), (0, 0), "{home}");
}

#[tokio::test]
async fn an_experts_task_page_has_a_header_to_their_campaigns_and_log_out_a_workers_none() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = campaign(&app, &admin, json!({"review": false})).await;
    expert_token(&app, "fp-header").await;
    let (client, _) = crate::fixtures::logged_in(&app, "fp-header", crate::fixtures::EXPERT_PASSWORD).await;
    let landing = client.get(app.at(&format!("/work/{id}"))).send().await.expect("landing").text().await.expect("html");
    let csrf = crate::fixtures::csrf_in(&landing);
    let started = client.post(app.at(&format!("/work/{id}/start"))).form(&[("csrf_token", csrf.as_str())]).send().await;
    let task = started.expect("start").headers()["location"].to_str().expect("location").to_owned();
    let page = client.get(app.at(&task)).send().await.expect("task").text().await.expect("html");
    let header = &page[page.find("<header").expect("header")..page.find("</header>").expect("end")];
    assert!(header.contains("href=\"/expert\"") && header.contains("action=\"/logout\""), "{header}");
    // The expert's introduction speaks of keys as shown and of their campaigns page, not of a link.
    assert!(landing.contains("press the key shown on it") && !landing.contains("number key"), "{landing}");
    assert!(landing.contains("from <a href=\"/expert\">your campaigns</a>") && !landing.contains("link again"));

    // A crowd worker's task page sends them nowhere but their study.
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    let (crowd, invitation) = crate::fixtures::open_vton_campaign(&app, &admin, 3, 1, config).await;
    let worker = crate::fixtures::join(&app, &invitation, "crowd-header").await;
    let (_, view) = worker.next(&app, &crowd).await;
    let assignment = view["assignment"]["id"].as_str().expect("id");
    let page = worker.client.get(app.at(&format!("/work/a/{assignment}"))).send().await.expect("task");
    let page = page.text().await.expect("html");
    let header = &page[page.find("<header").expect("header")..page.find("</header>").expect("end")];
    assert!(!header.contains("/expert") && !header.contains("/logout"), "{header}");
}

#[tokio::test]
async fn refused_imports_on_the_fashionpedia_page_stay_beside_the_form() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &admin, "fashionpedia", "FP forms").await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let post = |path: &'static str, content: String| {
        let (client, csrf) = (client.clone(), csrf.clone());
        let url = app.at(&format!("/admin/campaigns/{id}/fashionpedia/{path}"));
        async move {
            let resp =
                client.post(url).form(&[("csrf_token", csrf.as_str()), ("content", content.as_str())]).send().await;
            let resp = resp.expect("post");
            (resp.status(), resp.text().await.expect("html"))
        }
    };
    let (status, html) = post("ontology", r#"{"categories": "not a list"}"#.to_owned()).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(r#"id="ontology-error">Nothing was imported: "#), "{html}");
    assert!(
        html.contains("{&#34;categories&#34;: &#34;not a list&#34;}</textarea>"),
        "the pasted text is kept: {html}"
    );
    // Masks before the ontology: the conflict is said beside the masks' form.
    let (status, html) = post("coco", coco().to_string()).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert!(html.contains(r#"id="masks-error">Nothing was imported: "#), "{html}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 0);
}
