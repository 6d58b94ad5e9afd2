//! Ground truth and exports through the service.

use crate::fixtures::{admin_token, api, join, open_vton_campaign};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn vton_ground_truth_curates_and_exports_json_and_csv() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // One questionnaire of 5 images + 1 sanity task (expected rating 1), 3 workers.
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        5,
        1,
        json!({"tasks_per_questionnaire": 6, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3,
               "curation": {"min_annotators": 2, "min_alpha": 0.0}}),
    )
    .await;
    let ratings_of =
        |img: usize, who: usize| -> u8 { [[1, 1, 1], [2, 2, 3], [3, 3, 3], [1, 2, 1], [3, 3, 2]][img][who] };
    for who in 0..3 {
        let w = join(&app, &invitation, &format!("gt-{who}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        let id = view["assignment"]["id"].as_str().expect("id").to_owned();
        for item in view["items"].as_array().expect("items") {
            let payload_img = item["payload"]["tryon"].as_str().expect("tryon");
            let n: usize = payload_img.trim_start_matches("/img/t/").trim_end_matches(".png").parse().expect("n");
            // The sanity task (n >= 1000) gets the expected 1 from everyone.
            let rating = if n >= 1000 { 1 } else { ratings_of(n, who) };
            let (status, body) = w
                .post(
                    &app,
                    &format!("/api/v1/work/assignments/{id}/responses"),
                    json!({"item_id": item["id"], "answer": {"rating": rating}}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        w.post(&app, &format!("/api/v1/work/assignments/{id}/complete"), json!({})).await;
    }

    let (status, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(status, StatusCode::OK, "{gt}");
    let images = gt["images"].as_array().expect("images");
    assert_eq!(images.len(), 5, "sanity tasks are not images to score");
    let img1 = images.iter().find(|i| i["image"] == "img-1").expect("img-1");
    assert_eq!(img1["votes"], json!([0, 2, 1]));
    assert_eq!(img1["n_annotation"], 3);
    assert!((img1["mean"].as_f64().expect("mean") - 7.0 / 3.0).abs() < 1e-12);
    assert!((img1["reward"].as_f64().expect("reward") - (7.0 / 3.0 - 2.0)).abs() < 1e-12);
    assert_eq!(img1["vton_model_id"], "m1");
    assert_eq!(gt["curation"]["questionnaires"][0]["kept"], true);

    let csv = reqwest::Client::new()
        .get(app.at(&format!("/api/v1/admin/campaigns/{campaign}/ground-truth.csv")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("csv");
    assert!(csv.headers()["content-type"].to_str().expect("type").starts_with("text/csv"));
    let text = csv.text().await.expect("text");
    assert!(text.starts_with("image,vton_model_id,category,dataset,tryon,garment,person,reference,mean,reward,n_annotation,votes_1,votes_2,votes_3,annotators\n"), "{text}");
    assert_eq!(text.lines().count(), 6);

    // Raw responses: everyone's answers, including the sanity task.
    sqlx::query("UPDATE responses SET excluded_reason = 'manual: test', excluded_at = now() WHERE id = (SELECT id FROM responses LIMIT 1)")
        .execute(&app.pool)
        .await
        .expect("exclude");
    let raw =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/responses.csv")).await;
    assert_eq!(raw.lines().count(), 1 + 3 * 6);
    assert!(raw.contains("manual: test"));
    // Exports join up: the questionnaire is the same id everywhere, and admins see worker ids.
    assert!(raw.starts_with("questionnaire,questionnaire_position,item,annotator,worker_id,answer,"), "{raw}");
    assert!(raw.contains(",gt-0,") && raw.contains(",gt-2,"), "{raw}");
    let table =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/vton/questionnaires.csv"))
            .await;
    let questionnaire = table.lines().nth(1).and_then(|l| l.split(',').next()).expect("a questionnaire");
    assert!(raw.lines().skip(1).all(|l| l.starts_with(questionnaire)), "{raw}\n{table}");
    // Workers cannot download any of it.
    let w = join(&app, &invitation, "curious").await;
    let (status, _) = w.get(&app, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn experts_land_on_their_campaign_list() {
    let app = TestApp::spawn().await;
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, "erin", "expert-password")
        .await
        .expect("expert");
    let (client, csrf) = crate::fixtures::login_page(&app).await;
    let csrf = csrf.as_str();
    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf), ("name", "erin"), ("password", "expert-password")])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.headers()["location"], "/expert");
    let page = client.get(app.at("/expert")).send().await.expect("expert page");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.expect("html").contains("Your campaigns"));
    assert_eq!(client.get(app.at("/admin")).send().await.expect("admin").status(), StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn admins_upload_images_that_are_checked_and_served_with_caching_headers() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let client = reqwest::Client::new();
    let png = crate::fixtures::png(5, 4, 20);
    let upload = |body: Vec<u8>, content_type: &'static str| {
        client
            .post(app.at("/api/v1/admin/images"))
            .bearer_auth(&admin)
            .header("content-type", content_type)
            .body(body)
            .send()
    };
    let resp = upload(png.clone(), "image/png").await.expect("upload");
    assert_eq!(resp.status(), StatusCode::CREATED);
    let stored: serde_json::Value = resp.json().await.expect("json");
    let url = stored["url"].as_str().expect("url");
    assert!(url.starts_with("/images/") && url.ends_with(".png"));
    let served = client.get(app.at(url)).send().await.expect("get");
    assert_eq!(served.status(), StatusCode::OK);
    assert_eq!(served.headers()["content-type"], "image/png");
    assert!(served.headers()["cache-control"].to_str().expect("header").contains("immutable"));
    assert_eq!(served.bytes().await.expect("bytes").to_vec(), png);

    // A script posing as an image, SVG, and oversized files are refused.
    let resp = upload(b"<script>alert(1)</script>".to_vec(), "image/png").await.expect("upload");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let resp = upload(b"<svg xmlns='http://www.w3.org/2000/svg'/>".to_vec(), "image/svg+xml").await.expect("upload");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    // A tiny PNG whose header declares 65535 x 65535 pixels: refused, never served.
    let mut bomb = crate::fixtures::png(1, 1, 0);
    bomb[16..24].copy_from_slice(&[0, 0, 0xff, 0xff, 0, 0, 0xff, 0xff]);
    let crc = crc32fast::hash(&bomb[12..29]);
    bomb[29..33].copy_from_slice(&crc.to_be_bytes());
    let resp = upload(bomb, "image/png").await.expect("upload");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: serde_json::Value = resp.json().await.expect("json");
    assert!(body["error"]["message"].as_str().unwrap_or("").contains("65535x65535"), "{body}");
    let mut big = png.clone();
    big.resize(5 * 1024 * 1024 + 1, 0);
    let resp = upload(big, "image/png").await.expect("upload");
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: serde_json::Value = resp.json().await.expect("json");
    assert_eq!(body["error"]["code"], "image_too_large");
    // Only admins upload.
    let resp = client
        .post(app.at("/api/v1/admin/images"))
        .header("content-type", "image/png")
        .body(png)
        .send()
        .await
        .expect("upload");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
}

/// `responses.csv` is written out as the rows come (several chunks here) and
/// is byte for byte the table the release path builds in memory.
#[tokio::test]
async fn the_streamed_responses_export_equals_the_in_memory_table() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        300,
        2,
        json!({"tasks_per_questionnaire": 31, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    for n in 0..30 {
        // A worker id a spreadsheet would run as a formula.
        let w = join(&app, &invitation, &format!("=cmd-{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish(&app, &view, (n % 3 + 1) as u8).await;
    }
    let resp = reqwest::Client::new()
        .get(app.at(&format!("/api/v1/admin/campaigns/{campaign}/responses.csv")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("csv");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get("content-length").is_none(), "streamed, not built whole");
    let streamed = resp.text().await.expect("text");
    assert!(streamed.len() > 2 * 64 * 1024, "several chunks: {} bytes", streamed.len());
    assert_eq!(streamed.lines().count(), 1 + 30 * 31);
    assert!(streamed.contains(",'=cmd-3,") && !streamed.contains(",=cmd-3,"), "formulas neutralised");
    let id = campaign.parse().expect("uuid");
    let table = atelier::core::releases::responses_rows::raw_responses(&app.pool, id).await.expect("table");
    assert_eq!(streamed, table.to_csv().expect("csv"));
}

#[tokio::test]
async fn export_file_names_say_which_campaign_kind_and_what() {
    let app = TestApp::spawn().await;
    let admin = crate::fixtures::admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &admin, "vton", "Spring study: phones").await;
    let day = chrono::Utc::now().format("%Y-%m-%d").to_string();
    for (path, name) in [
        ("ground-truth.csv", format!("spring-study-phones-vton-ground-truth-{day}.csv")),
        ("responses.csv", format!("spring-study-phones-vton-responses-{day}.csv")),
        ("vton/qbench/answers.csv", format!("spring-study-phones-vton-answers-{day}.csv")),
        ("payouts.csv", format!("spring-study-phones-vton-payouts-{day}.csv")),
    ] {
        let resp = reqwest::Client::new()
            .get(app.at(&format!("/api/v1/admin/campaigns/{id}/{path}")))
            .bearer_auth(&admin)
            .send()
            .await
            .expect("get");
        let disposition = resp.headers()["content-disposition"].to_str().expect("header").to_owned();
        assert!(disposition.contains(&name), "{path}: {disposition}");
    }
}
