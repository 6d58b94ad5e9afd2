//! Adaptive overlap end to end: a small VTON campaign with planted workers
//! through the API. Items every rater puts at 3 are decided at the minimum
//! and never rated again; split items go on, in questionnaires of their
//! own, to the maximum and no further; the ground truth is what the export's
//! counted ratings give; fixed overlap is refused for kinds without a rule.

use crate::fixtures::{admin_token, api, get_text, join, vton_item};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The image number a task shows (`/img/t/<n>.png` in the fixtures' items).
fn shown_number(payload: &Value) -> usize {
    let tryon = payload.to_string();
    let at = tryon.find("/img/t/").expect("a try-on") + "/img/t/".len();
    tryon[at..].split('.').next().and_then(|n| n.parse().ok()).expect("a number")
}

#[tokio::test]
async fn decided_items_stop_at_the_minimum_and_undecided_ones_go_on_to_the_maximum() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({
        "tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 5,
        "background": [],
        "curation": {"max_identical": 1.0, "max_disagreement": 1.0, "min_alpha": -1.0},
    });
    let body = json!({"kind": "vton", "name": "adaptive", "config": config,
                      "settings": {"overlap": {"mode": "adaptive", "min": 2, "max": 4}}});
    let (status, c) = api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    assert_eq!(
        c["settings"]["overlap"],
        json!({"mode": "adaptive", "min": 2, "max": 4, "threshold": 0.95, "prior": 1.0})
    );
    let items: Vec<Value> = (0..6).map(|n| vton_item(n, None)).chain([vton_item(1000, Some(1))]).collect();
    let (status, b) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/items"), Some(json!({"items": items})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
    for (path, body) in [("batches", json!({"seed": 3})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    let (_, inv) = api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    let link = inv["token"].as_str().expect("token").to_owned();

    // Planted: images 0-2 are rated 3 by everyone; images 3-5 split, 1 and 3 in turn; the sanity task passed.
    let mut idle = 0;
    for w in 0..40 {
        let worker = join(&app, &link, &format!("planted-{w}")).await;
        let (status, view) = worker.next(&app, &id).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        if view.is_null() {
            idle += 1;
            if idle >= 2 {
                break;
            }
            continue;
        }
        worker
            .finish_with(&app, &view, |item| {
                let n = shown_number(&item["payload"]);
                let rating = match n {
                    1000 => 1,
                    0..=2 => 3,
                    _ if w % 2 == 0 => 1,
                    _ => 3,
                };
                json!({"rating": rating})
            })
            .await;
    }

    // Raters per image, from the database: decided ones at the minimum, split ones at the maximum.
    let rows: Vec<(String, i64)> = sqlx::query_as(
        "SELECT i.external_id, count(r.*) FROM items i
         LEFT JOIN responses r ON r.item_id = i.id AND r.assignment_id IN (SELECT id FROM assignments WHERE state = 'completed')
         WHERE i.gold IS NULL GROUP BY i.external_id ORDER BY i.external_id",
    )
    .fetch_all(&app.pool)
    .await
    .expect("raters");
    let raters: BTreeMap<String, i64> = rows.into_iter().collect();
    for n in 0..3 {
        assert_eq!(raters[&format!("img-{n}")], 2, "a decided image is never rated again: {raters:?}");
    }
    for n in 3..6 {
        assert_eq!(raters[&format!("img-{n}")], 4, "an undecided image reaches the maximum and stops: {raters:?}");
    }
    let (_, progress) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/overlap"), None).await;
    assert_eq!(
        (
            &progress["decided"],
            &progress["at_max"],
            &progress["undecided"],
            &progress["ratings"],
            &progress["fixed_ratings"]
        ),
        (&json!(3), &json!(3), &json!(0), &json!(18), &json!(30)),
        "{progress}"
    );
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{id}")).await;
    assert!(page.contains("<b>3</b> items decided") && page.contains("<b>12</b> saved so far"), "{page}");

    // The ground truth is the export's counted ratings, image by image.
    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let export = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/responses.csv")).await;
    let mut reader = csv::Reader::from_reader(export.as_bytes());
    let header = reader.headers().expect("header").clone();
    let col = |name: &str| header.iter().position(|h| h == name).unwrap_or_else(|| panic!("{name} in {header:?}"));
    let (item, answer, excluded) = (col("item"), col("answer"), col("excluded_reason"));
    let mut counted: BTreeMap<String, Vec<f64>> = BTreeMap::new();
    for row in reader.records() {
        let row = row.expect("row");
        if !row[excluded].is_empty() {
            continue;
        }
        let a: Value = serde_json::from_str(&row[answer]).expect("answer");
        counted.entry(row[item].to_owned()).or_default().push(a["rating"].as_f64().expect("rating"));
    }
    for image in gt["images"].as_array().expect("images") {
        let name = image["image"].as_str().expect("image");
        let ratings = &counted[name];
        assert_eq!(image["n_annotation"].as_u64(), Some(ratings.len() as u64), "{name}");
        let mean = ratings.iter().sum::<f64>() / ratings.len() as f64;
        assert!((image["mean"].as_f64().expect("mean") - mean).abs() < 1e-9, "{name}: {image}");
    }

    // The release says which rule it followed and how many raters the items got.
    let (files, _) = crate::fixtures::cut_release(&app, &admin, &id).await;
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
    assert_eq!(
        manifest["parameters"]["overlap"]["raters_per_item"],
        json!([{"raters": 2, "items": 3}, {"raters": 4, "items": 3}])
    );
    let datasheet = String::from_utf8_lossy(&files["DATASHEET.md"]).to_string();
    assert!(datasheet.contains("at least 2 and at most 4"), "{datasheet}");

    // Only kinds with a decision rule take it.
    let body = json!({"kind": "vsd", "name": "x", "settings": {"participants": "crowd", "overlap": "adaptive"}});
    let (status, b) = api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(body)).await;
    assert_eq!((status, b["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_settings")));
}
