//! `atelier demo`'s data: a campaign of every kind that offers one, seeded
//! once, workable at once by the demo accounts.

use crate::fixtures::api;
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn the_demo_seeds_a_workable_campaign_of_every_kind_once() {
    let app = TestApp::spawn().await;
    let kinds = atelier::kinds::registry();
    let guide = atelier::demo::seed(&app.pool, &kinds, &app.url).await.expect("seed");
    atelier::demo::seed(&app.pool, &kinds, &app.url).await.expect("seeding again is harmless");
    let rows: Vec<(String, String, i64)> = sqlx::query_as(
        "SELECT c.kind, c.state::text, (SELECT count(*) FROM batches b WHERE b.campaign_id = c.id)
         FROM campaigns c ORDER BY c.kind",
    )
    .fetch_all(&app.pool)
    .await
    .expect("campaigns");
    let kinds_seeded: Vec<&str> = rows.iter().map(|r| r.0.as_str()).collect();
    assert_eq!(
        kinds_seeded,
        vec!["a100-aat", "a100-lat", "a100-lat", "fashionpedia", "vsd", "vton", "vton"],
        "one campaign per kind, and an answered copy of the crowd's LAT and VTON, once"
    );
    assert!(rows.iter().all(|(_, state, batches)| state == "open" && *batches > 0), "{rows:?}");
    assert!(guide.contains("/join/") && guide.contains("/expert"), "{guide}");

    // Both demo experts can label the VSD pairs right away.
    for (name, _) in [atelier::demo::EXPERT, atelier::demo::EXPERT_2] {
        let user = atelier::auth::users::by_name(&app.pool, name).await.expect("query").expect("expert");
        let token = atelier::auth::tokens::create(&app.pool, user.id).await.expect("token");
        let (status, campaigns) = api(&app, &token, Method::GET, "/api/v1/expert/campaigns", None).await;
        assert_eq!(status, StatusCode::OK);
        let vsd =
            campaigns.as_array().expect("list").iter().find(|c| c["kind"] == "vsd").expect("the VSD demo").clone();
        let path = format!("/api/v1/expert/campaigns/{}/assignment", vsd["id"].as_str().expect("id"));
        let (status, view) = api(&app, &token, Method::POST, &path, Some(json!({}))).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        assert!(!view["items"].as_array().expect("items").is_empty());
    }
}

#[tokio::test]
async fn the_vton_demos_sanity_tasks_look_like_any_other_to_a_worker() {
    let app = TestApp::spawn().await;
    atelier::demo::seed(&app.pool, &atelier::kinds::registry(), &app.url).await.expect("seed");
    // The try-on image of each item, sanity or not, as a worker is shown it.
    let rows: Vec<(bool, String)> = sqlx::query_as(
        "SELECT i.gold IS NOT NULL, i.payload->>'tryon' FROM items i JOIN campaigns c ON c.id = i.campaign_id
         WHERE c.kind = 'vton' AND c.name NOT LIKE '%simulated%' ORDER BY i.payload->>'tryon'",
    )
    .fetch_all(&app.pool)
    .await
    .expect("items");
    let number = |path: &str| -> usize {
        path.rsplit('/').next().and_then(|f| f.strip_suffix(".svg")).and_then(|n| n.parse().ok()).expect("numbered")
    };
    let mut numbers: Vec<usize> = rows.iter().map(|(_, path)| number(path)).collect();
    numbers.sort_unstable();
    assert_eq!(numbers, (0..rows.len()).collect::<Vec<_>>(), "one run of image numbers, sanity tasks among them");
    assert!(rows.iter().any(|(sanity, _)| *sanity), "the demo has sanity tasks");
}

/// Every picture a demo item links to is drawn, the VTON demo's own by the
/// VTON kind: its sanity try-ons expected Unnatural are visibly broken (the
/// garment tilted off the person), every other try-on is not.
#[tokio::test]
async fn every_picture_the_demo_items_link_to_is_drawn() {
    let app = TestApp::spawn().await;
    atelier::demo::seed(&app.pool, &atelier::kinds::registry(), &app.url).await.expect("seed");
    let links: Vec<String> = sqlx::query_scalar(
        r"SELECT DISTINCT m[1] FROM items, regexp_matches(payload::text, '(/demo/images/[a-z]+/[0-9]+\.svg)', 'g') AS m
          ORDER BY 1",
    )
    .fetch_all(&app.pool)
    .await
    .expect("links");
    for role in ["garment", "person", "tryon", "reference", "tops", "pants"] {
        assert!(links.iter().any(|l| l.contains(&format!("/{role}/"))), "no {role} among {links:?}");
    }
    let client = reqwest::Client::new();
    let draw = |path: String| {
        let client = client.clone();
        let url = format!("{}{path}", app.url);
        async move {
            let response = client.get(&url).send().await.expect("get");
            assert_eq!(response.status(), StatusCode::OK, "{url}");
            assert_eq!(response.headers()["content-type"], "image/svg+xml", "{url}");
            let svg = response.text().await.expect("body");
            assert!(svg.starts_with("<svg"), "{url}: {svg}");
            svg
        }
    };
    for link in &links {
        draw(link.clone()).await;
    }
    let tryons: Vec<(String, Option<serde_json::Value>)> = sqlx::query_as(
        "SELECT i.payload->>'tryon', i.gold FROM items i JOIN campaigns c ON c.id = i.campaign_id
         WHERE c.kind = 'vton' AND c.name NOT LIKE '%simulated%'",
    )
    .fetch_all(&app.pool)
    .await
    .expect("try-ons");
    assert!(tryons.len() > 3, "{tryons:?}");
    for (path, gold) in tryons {
        let broken = gold.is_some_and(|g| g["rating"] == 1);
        let svg = draw(path.clone()).await;
        assert_eq!(svg.contains("rotate("), broken, "{path} (gold Unnatural: {broken})");
    }
    let missing = client.get(format!("{}/demo/images/unknown/1.svg", app.url)).send().await.expect("get");
    assert_eq!(missing.status(), StatusCode::NOT_FOUND);
}

/// The answered copies give an admin trying the demo something to read:
/// the VTON one has a worker curated out for failing the sanity tasks and
/// is reported for payment so, ranks model A above model B, and says it
/// has nothing left to batch (its spare sanity task waits in reserve); in
/// the LAT one the first choices lead, with agreement differing by question. The campaigns people try stay
/// unanswered.
#[tokio::test]
async fn the_demos_answered_copies_have_quality_figures_and_ground_truth() {
    let app = TestApp::spawn().await;
    let guide = atelier::demo::seed(&app.pool, &atelier::kinds::registry(), &app.url).await.expect("seed");
    let token = crate::fixtures::admin_token(&app).await;
    let copy = |kind: &'static str| {
        let pool = app.pool.clone();
        async move {
            sqlx::query_scalar::<_, uuid::Uuid>("SELECT id FROM campaigns WHERE kind = $1 AND name LIKE '%simulated%'")
                .bind(kind)
                .fetch_one(&pool)
                .await
                .expect("the answered copy")
        }
    };
    let (vton, lat) = (copy("vton").await, copy("a100-lat").await);
    assert!(guide.contains(&format!("/admin/campaigns/{vton}")), "{guide}");
    let answered_elsewhere: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM responses r JOIN campaigns c ON c.id = r.campaign_id WHERE c.name NOT LIKE '%simulated%'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("count");
    assert_eq!(answered_elsewhere, 0, "the campaigns people try are fresh");

    let (_, detail) = api(&app, &token, Method::GET, &format!("/api/v1/admin/campaigns/{vton}"), None).await;
    let progress = &detail["progress"];
    assert_eq!(
        (progress["assignments_completed"].as_i64(), progress["assignments_wanted"].as_i64()),
        (Some(12), Some(12))
    );
    assert_eq!(progress["items_unbatched"], 0, "the spare sanity task is in reserve, not waiting for a batch");
    let (_, gt) = api(&app, &token, Method::GET, &format!("/api/v1/admin/campaigns/{vton}/ground-truth"), None).await;
    let careless = gt["workers"].as_object().expect("workers").iter().find(|(_, w)| *w == "demo-sim-04").expect("w4").0;
    let curated = gt["curation"]["annotators"].as_array().expect("annotators");
    assert!(curated.iter().any(|a| a["annotator"] == careless.as_str() && a["excluded_by"] == "sanity"), "{curated:?}");
    let ranked = &gt["models"]["all"]["all"];
    assert_eq!((ranked[0]["model"].as_str(), ranked[1]["model"].as_str()), (Some("model-a"), Some("model-b")));
    let (_, payouts) = api(&app, &token, Method::GET, &format!("/api/v1/admin/campaigns/{vton}/payouts"), None).await;
    let rejected: Vec<&str> = payouts
        .as_array()
        .expect("rows")
        .iter()
        .filter(|p| p["recommendation"] == "reject")
        .filter_map(|p| p["worker_id"].as_str())
        .collect();
    assert_eq!(rejected, ["demo-sim-04"]);

    let (_, gt) = api(&app, &token, Method::GET, &format!("/api/v1/admin/campaigns/{lat}/ground-truth"), None).await;
    let consistency: Vec<(String, String, f64)> = gt["questions"]
        .as_array()
        .expect("questions")
        .iter()
        .map(|q| {
            let id = q["id"].as_str().expect("id").to_owned();
            (id, q["majority"].as_str().expect("majority").to_owned(), q["consistency"].as_f64().expect("share"))
        })
        .collect();
    let expected =
        [("demo-q0", "q0c0", 8.0), ("demo-q1", "q1c0", 9.0), ("demo-q2", "q2c0", 5.0), ("demo-q3", "q3c0", 6.0)];
    for ((id, majority, share), (want_id, want_majority, agreeing)) in consistency.iter().zip(expected) {
        assert_eq!((id.as_str(), majority.as_str()), (want_id, want_majority));
        assert!((share - agreeing / 12.0).abs() < 1e-12, "{id}: {share}");
    }
}

#[tokio::test]
async fn forming_batches_again_with_every_task_batched_says_so_even_with_sanity_tasks_unused() {
    let app = TestApp::spawn().await;
    atelier::demo::seed(&app.pool, &atelier::kinds::registry(), &app.url).await.expect("seed");
    let token = crate::fixtures::admin_token(&app).await;
    let (id, unused_sanity): (uuid::Uuid, i64) = sqlx::query_as(
        "SELECT c.id, (SELECT count(*) FROM items i WHERE i.campaign_id = c.id AND i.gold IS NOT NULL
                         AND NOT EXISTS (SELECT 1 FROM batch_items bi WHERE bi.item_id = i.id))
         FROM campaigns c WHERE c.kind = 'vton' AND c.name NOT LIKE '%simulated%'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("the VTON demo");
    assert!(unused_sanity > 0, "the demo keeps sanity tasks in reserve");
    let path = format!("/api/v1/admin/campaigns/{id}/batches");
    let (status, body) = api(&app, &token, Method::POST, &path, Some(json!({"seed": 2}))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("nothing_to_batch")), "{body}");
}
