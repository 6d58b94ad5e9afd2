//! VTON in the service: CSV import, curation recorded on the responses,
//! model rankings, human ceiling, predictor scoring and re-queueing.

use crate::fixtures::{admin_token, api, join};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

fn triplets_csv() -> String {
    let mut csv = String::from("id,garment,person,tryon,reference,model,category,dataset,expected\n");
    for n in 0..10usize {
        csv.push_str(&format!(
            "img-{n},/g/{}.png,/p/{}.png,/t/{n}.png,/r/{n}.png,{},tops,vitonhd,\n",
            n / 2,
            n / 2,
            if n.is_multiple_of(2) { "good-model" } else { "bad-model" }
        ));
    }
    csv.push_str("sanity-1,/g/s.png,/p/s.png,/t/s.png,/r/s.png,good-model,tops,vitonhd,1\n");
    csv
}

/// Honest rating of image n: good-model images look natural.
fn honest(n: usize) -> u8 {
    if n.is_multiple_of(2) {
        3
    } else if n % 4 == 1 {
        1
    } else {
        2
    }
}

#[tokio::test]
async fn vton_campaign_is_curated_ranked_and_scored_through_the_service() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"tasks_per_questionnaire": 6, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 4, "background": []});
    let (_, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "service", "config": config})),
    )
    .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let resp = reqwest::Client::new()
        .post(app.at(&format!("/api/v1/admin/campaigns/{id}/vton/triplets")))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body(triplets_csv())
        .send()
        .await
        .expect("import");
    assert_eq!(resp.status(), StatusCode::CREATED);
    let bad = reqwest::Client::new()
        .post(app.at(&format!("/api/v1/admin/campaigns/{id}/vton/triplets")))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body("id,garment,person,tryon,reference,model,category,dataset,expected\nx,/g,/p,/t,/r,m,tops,d,7\n")
        .send()
        .await
        .expect("import");
    assert_eq!(bad.status(), StatusCode::UNPROCESSABLE_ENTITY);
    for (path, body) in [("batches", json!({"seed": 5})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    let (_, inv) = api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    let invitation = inv["token"].as_str().expect("token").to_owned();

    // Per questionnaire: three honest workers and one who answers 3 to everything.
    let mut i = 0;
    loop {
        let straight = i % 4 == 3;
        let w = join(&app, &invitation, &format!("w{i}")).await;
        i += 1;
        let (_, view) = w.next(&app, &id).await;
        if view.is_null() {
            break;
        }
        w.finish_with(&app, &view, |item| {
            let tryon = item["payload"]["tryon"].as_str().expect("tryon");
            let rating = match (straight, tryon.trim_start_matches("/t/").trim_end_matches(".png").parse::<usize>()) {
                (true, _) => 3,
                (false, Ok(n)) => honest(n),
                (false, Err(_)) => 1, // the sanity task
            };
            json!({"rating": rating})
        })
        .await;
    }
    assert_eq!(i, 9, "2 questionnaires x 4 workers, then nothing left");

    let (status, summary) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/vton/curation"), None).await;
    assert_eq!(status, StatusCode::OK, "{summary}");
    assert_eq!(summary["annotators_excluded"], 2);
    assert_eq!(summary["questionnaires_dropped"], 0);
    assert_eq!(summary["responses_excluded"], 12);
    assert_eq!(summary["responses_changed"], 12);
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT excluded_reason FROM responses WHERE excluded_reason IS NOT NULL")
            .fetch_all(&app.pool)
            .await
            .expect("reasons");
    assert_eq!(reasons, vec!["curation:sanity".to_owned()]);
    // The campaign's figures (from the kept answer counts) agree with counting the responses.
    let (_, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}"), None).await;
    let (stored, excluded, annotators): (i64, i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE excluded_reason IS NOT NULL), count(DISTINCT annotator_id)
         FROM responses WHERE campaign_id = $1::uuid",
    )
    .bind(&id)
    .fetch_one(&app.pool)
    .await
    .expect("counts");
    assert_eq!((excluded, annotators), (12, 8), "{detail}");
    assert_eq!(detail["progress"]["responses"], stored);
    assert_eq!(detail["progress"]["responses_excluded"], excluded);
    assert_eq!(detail["progress"]["annotators"], annotators);
    // Re-running gives the same result and, nothing having changed, writes nothing.
    let marks = "SELECT array_agg(id::text || excluded_reason || excluded_at::text ORDER BY id)
                 FROM responses WHERE excluded_reason IS NOT NULL";
    let before: Vec<String> = sqlx::query_scalar(marks).fetch_one(&app.pool).await.expect("marks");
    let (_, mut again) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/vton/curation"), None).await;
    assert_eq!(again["responses_changed"], 0, "{again}");
    again["responses_changed"] = summary["responses_changed"].clone();
    assert_eq!(again, summary);
    let after: Vec<String> = sqlx::query_scalar(marks).fetch_one(&app.pool).await.expect("marks");
    assert_eq!(after, before, "the marks and their times are kept");
    // A mark removed by hand (e.g. a manual change) is put back, and only it.
    sqlx::query(
        "UPDATE responses SET excluded_reason = NULL, excluded_at = NULL
         WHERE id = (SELECT min(id::text)::uuid FROM responses WHERE excluded_reason IS NOT NULL)",
    )
    .execute(&app.pool)
    .await
    .expect("unmark");
    let (_, third) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/vton/curation"), None).await;
    assert_eq!((third["responses_excluded"].clone(), third["responses_changed"].clone()), (json!(12), json!(1)));

    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let ranking = gt["models"]["all"]["all"].as_array().expect("ranking");
    assert_eq!(ranking[0]["model"], "good-model");
    assert_eq!(ranking[0]["rank"], 1);
    assert_eq!(ranking[0]["mean"], 3.0);
    let ci = ranking[1]["ci95"].as_array().expect("ci");
    assert!(ci[0].as_f64().expect("lo") <= ranking[1]["mean"].as_f64().expect("mean"));
    assert!(gt["models"]["dataset"]["vitonhd"].is_array());
    assert_eq!(gt["human_ceiling"]["repetitions"], 10);
    assert!(
        (gt["human_ceiling"]["plcc"]["mean"].as_f64().expect("plcc") - 1.0).abs() < 1e-9,
        "honest raters agree perfectly"
    );
    assert_eq!(gt["images"][0]["annotators"].as_array().expect("ids").len(), 3);
    // The CSV export, written row by row in chunks, is the table of the same
    // ground truth (one row per image).
    let csv = crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/ground-truth.csv")).await;
    let table = atelier::kinds::vton::ground_truth::table(gt.to_string().as_bytes());
    assert_eq!(table.rows.len(), gt["images"].as_array().map_or(0, Vec::len));
    assert_eq!(csv, table.to_csv().expect("csv"));
    assert!(csv.starts_with("image,vton_model_id,"), "{csv}");

    // A predictor that knows the truth reaches the ceiling.
    let scores: String = (0..10).map(|n| format!("img-{n},{}\n", honest(n))).collect();
    let resp = reqwest::Client::new()
        .post(app.at(&format!("/api/v1/admin/campaigns/{id}/vton/predictor")))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body(format!("image_id,score\n{scores}"))
        .send()
        .await
        .expect("predictor");
    assert_eq!(resp.status(), StatusCode::OK);
    let metrics: Value = resp.json().await.expect("json");
    assert!((metrics["plcc"].as_f64().expect("plcc") - 1.0).abs() < 1e-9);
    assert_eq!(metrics["pairwise_micro"], 1.0);
    assert_eq!(metrics["images"], 10);
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/vton/predictor"),
        Some(json!({"scores": {"nope": 1.0}})),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("unknown_image")));
    // The paper's fair comparison (labels from half of the annotators), the
    // released code's tie rule, the model-pair matrix and calibration.
    let truth: serde_json::Map<String, Value> =
        (0..10).map(|n| (format!("img-{n}"), json!(f64::from(honest(n)) - 2.0))).collect();
    let (status, half) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/vton/predictor?labels=half&ties=half&known=good-model"),
        Some(json!({"scores": truth})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{half}");
    assert_eq!(half["labels"], "half");
    assert_eq!(half["pairwise_micro"]["mean"], 1.0, "honest halves agree with the truth: {half}");
    assert_eq!(half["r2"]["mean"], 1.0, "on the reward scale a predictor of the reward is perfect");
    assert_eq!(half["model_pairs"][0]["a"], "bad-model");
    assert_eq!(half["model_pairs_macro"], 1.0);
    assert_eq!(half["blocks"]["KU"], 1.0);
    assert!(!half["calibration"]["bins"].as_array().expect("bins").is_empty());
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/vton/predictor?labels=quarter"),
        Some(json!({"scores": truth})),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_query")));

    // Each questionnaire has 3 reliable annotators of the 4 wanted: re-queue opens one more slot each.
    let (_, requeued) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/vton/requeue"), None).await;
    assert_eq!(requeued["requeued"], 2);
    let fresh = join(&app, &invitation, "late-worker").await;
    let (_, view) = fresh.next(&app, &id).await;
    assert!(view["assignment"].is_object(), "a re-queued questionnaire goes to a new worker");

    let html = crate::fixtures::page_when_computed(&app, &admin, &format!("/admin/campaigns/{id}/vton")).await;
    assert!(html.contains("<svg") && html.contains("annotators: sanity") && html.contains("good-model"), "{html}");
    let csv =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/vton/questionnaires.csv")).await;
    assert!(
        csv.starts_with("questionnaire,alpha_before,alpha_after,annotators_kept,kept,workers_kept,workers_removed\n"),
        "{csv}"
    );
    assert_eq!(csv.lines().count(), 3);
    // Admins see who was kept and who was removed, by the crowd platform's worker id.
    assert!(csv.contains("w3:sanity") && csv.contains("w0"), "{csv}");
    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let ids = gt["images"][0]["worker_ids"].as_array().expect("worker ids").clone();
    assert_eq!(ids.len(), 3);
    assert!(ids.iter().all(|w| w.as_str().is_some_and(|w| w.starts_with('w'))), "{ids:?}");
}

#[tokio::test]
async fn in_live_mode_a_worker_who_fails_the_sanity_tasks_gets_no_further_questionnaires() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = crate::fixtures::open_vton_campaign(
        &app,
        &admin,
        8,
        2,
        json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2,
               "stop_sanity_failures": true, "max_questionnaires_per_worker": 2}),
    )
    .await;
    // The fixture's sanity tasks expect 1 (/1000.) and 3 (/1001.); questionnaires alternate between them.
    let answer = |wrong: bool| {
        move |item: &Value| {
            let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
            let expected = if tryon.contains("/1000.") {
                Some(1)
            } else if tryon.contains("/1001.") {
                Some(3)
            } else {
                None
            };
            json!({"rating": match expected { Some(e) if wrong => 4 - e, Some(e) => e, None => 2 }})
        }
    };
    let careless = join(&app, &invitation, "careless").await;
    let (_, view) = careless.next(&app, &campaign).await;
    careless.finish_with(&app, &view, answer(true)).await;
    let (status, body) = careless.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    assert!(body["error"]["message"].as_str().expect("message").contains("thank you"));
    let page = careless
        .client
        .post(app.at(&format!("/work/{campaign}/start")))
        .form(&[("csrf_token", careless.csrf.as_str())])
        .send()
        .await
        .expect("start");
    assert_eq!(page.status(), StatusCode::FORBIDDEN);
    let reason: String =
        sqlx::query_scalar("SELECT reason FROM annotator_blocks").fetch_one(&app.pool).await.expect("block");
    assert!(reason.contains("sanity"));

    let careful = join(&app, &invitation, "careful").await;
    let landing = careful
        .client
        .get(app.at(&format!("/work/{campaign}")))
        .send()
        .await
        .expect("landing")
        .text()
        .await
        .expect("html");
    assert!(landing.contains("Completely natural") && landing.contains("reference"), "instructions come first");
    let (_, view) = careful.next(&app, &campaign).await;
    careful.finish_with(&app, &view, answer(false)).await;
    let (status, view) = careful.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    assert!(view["assignment"].is_object(), "careful workers continue");
}

#[tokio::test]
async fn questionnaires_follow_the_protocol_full_length_fixed_sanity_positions_one_per_worker() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // The protocol's defaults: 50 tasks, 5 sanity tasks at 5, 15, 25, 35, 45.
    let (campaign, invitation) = crate::fixtures::open_vton_campaign(&app, &admin, 100, 5, json!({})).await;
    let (_, c) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(
        c["campaign"]["config"]["annotators_per_questionnaire"], 7,
        "the release's density: about 7 ratings per image"
    );
    let sizes: Vec<i64> = sqlx::query_scalar(
        "SELECT count(*) FROM batch_items bi JOIN batches b ON b.id = bi.batch_id GROUP BY b.id ORDER BY b.position",
    )
    .fetch_all(&app.pool)
    .await
    .expect("sizes");
    assert_eq!(sizes, vec![50, 50, 50], "the last questionnaire is filled up");
    let sanity_at: Vec<(i32, String)> = sqlx::query_as(
        "SELECT DISTINCT bi.position + 1, i.external_id FROM batch_items bi JOIN items i ON i.id = bi.item_id
         WHERE i.gold IS NOT NULL ORDER BY 1",
    )
    .fetch_all(&app.pool)
    .await
    .expect("positions");
    let positions: Vec<i32> = sanity_at.iter().map(|(p, _)| *p).collect();
    assert_eq!(positions, vec![5, 15, 25, 35, 45], "the same sanity task at the same place everywhere: {sanity_at:?}");

    let w = join(&app, &invitation, "once").await;
    let (_, view) = w.next(&app, &campaign).await;
    let items = view["items"].as_array().expect("items");
    assert_eq!(items.len(), 50);
    let sanity_seen: Vec<usize> = items
        .iter()
        .enumerate()
        // The fixture numbers sanity images from 1000 (`/img/t/1000.png`).
        .filter(|(_, i)| {
            let tryon = i["payload"]["tryon"].as_str().unwrap_or_default();
            tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse::<usize>().is_ok_and(|n| n >= 1000)
        })
        .map(|(n, _)| n + 1)
        .collect();
    assert_eq!(sanity_seen, vec![5, 15, 25, 35, 45]);
    w.finish(&app, &view, 2).await;
    let (status, next) = w.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    assert!(next["assignment"].is_null(), "one questionnaire per worker by default: {next}");
}

#[tokio::test]
async fn the_curation_preset_is_chosen_through_the_api_and_the_page() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = crate::fixtures::open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    for who in ["w1", "w2", "w3"] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        w.finish(&app, &view, 1).await;
    }
    let path = format!("/api/v1/admin/campaigns/{campaign}/vton/curation");
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(json!({"preset": "vton-qbench-code"}))).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["preset"], "vton-qbench-code");
    // Everyone answered 1 everywhere: a run over all positions, caught by the released code's rule.
    let reasons: Vec<String> =
        sqlx::query_scalar("SELECT DISTINCT excluded_reason FROM responses").fetch_all(&app.pool).await.expect("r");
    assert_eq!(reasons, vec!["curation:run".to_owned()]);
    let html = crate::fixtures::page_when_computed(&app, &admin, &format!("/admin/campaigns/{campaign}/vton")).await;
    assert!(html.contains("Rules in use: <b>vton-qbench-code</b>") && html.contains("annotators: troll"), "{html}");
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(json!({"preset": "paper"}))).await;
    assert_eq!((status, body["preset"].as_str()), (StatusCode::OK, Some("paper")));
    // Right after the switch the page names the rules now in use, and says
    // whose the figures still shown are until they are recomputed.
    for view in 0.. {
        let html = crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/vton")).await;
        assert!(html.contains("Rules in use: <b>paper</b>"), "{html}");
        if !html.contains("being updated") {
            assert!(html.contains("Rules in use: <b>paper</b>.</p>"), "{html}");
            break;
        }
        assert!(html.contains("still those of <b>vton-qbench-code</b>"), "{html}");
        assert!(view < 200, "the new figures come");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(json!({"preset": "lenient"}))).await;
    assert_eq!(status.as_u16() / 100, 4, "{body}");
}

#[tokio::test]
async fn the_vton_qbench_layout_round_trips_out_of_one_campaign_and_into_another() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let background = json!([
        {"id": "gender", "question": "Gender?", "options": ["female", "male"]},
        {"id": "age", "question": "Age?", "options": ["18-24", "25-34"]},
        {"id": "experience", "question": "Experience?", "options": ["none", "some"]},
    ]);
    let config = json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3,
                        "background": background});
    let (source, invitation) = crate::fixtures::open_vton_campaign(&app, &admin, 8, 1, config).await;
    for n in 0..6usize {
        let w = join(&app, &invitation, &format!("w{n}")).await;
        let (gender, experience) = [("female", "none"), ("male", "some")][n % 2];
        let bg = json!({"gender": gender, "age": "25-34", "experience": experience});
        let (status, view) =
            w.post(&app, &format!("/api/v1/work/campaigns/{source}/assignment"), json!({"background": bg})).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        w.finish_with(&app, &view, |item| {
            let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
            let k: usize = tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse().unwrap_or(0);
            // Broad agreement (so curation keeps the questionnaires), one worker a little off.
            let rating = if k >= 1000 {
                1
            } else if n == 0 && k.is_multiple_of(3) {
                2
            } else {
                1 + k % 3
            };
            json!({"rating": rating})
        })
        .await;
    }
    let export = |campaign: String| {
        let (app, admin) = (&app, &admin);
        async move {
            let answers = crate::fixtures::get_text(
                app,
                admin,
                &format!("/api/v1/admin/campaigns/{campaign}/vton/qbench/answers.csv"),
            )
            .await;
            let images = crate::fixtures::get_text(
                app,
                admin,
                &format!("/api/v1/admin/campaigns/{campaign}/vton/qbench/images.csv"),
            )
            .await;
            (answers, images)
        }
    };
    let (answers, images) = export(source.clone()).await;
    let lines: Vec<&str> = answers.lines().collect();
    assert_eq!(lines[0], "form_id,answer_timestamp,gender,age,experience,response_id,1,2,3,4,5");
    assert_eq!(lines.len(), 7, "one row per submitted questionnaire");
    assert!(lines[1..].iter().all(|l| l.split(',').skip(6).all(|c| ["0", "1", "2"].contains(&c))), "{answers}");
    assert!(answers.contains(",female,25-34,none,") && answers.contains(",male,25-34,some,"));
    assert!(images.starts_with(
        "form_id,answer_count,garment_type,dataset_type,vton_model_id,person_path,garment_path,ref_person_path,vton_path\n"
    ));
    assert_eq!(images.lines().count(), 1 + 2 * 5);
    assert!(
        images.lines().filter(|l| l.contains("/img/t/1000.png")).all(|l| l.split(',').nth(1) == Some("2")),
        "{images}"
    );

    // Into an empty campaign: the same files come out again, and the same scores.
    let (status, target) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "imported", "config": {"background": []}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{target}");
    let target = target["id"].as_str().expect("id").to_owned();
    let body = json!({"answers": answers, "images": images, "attention": [{"position": 2, "expected": 1}]});
    let (status, summary) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{target}/vton/qbench"), Some(body.clone()))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{summary}");
    assert_eq!(summary, json!({"images": 8, "attention_tasks": 1, "questionnaires": 2, "responses": 6}));
    assert_eq!(export(target.clone()).await, (answers.clone(), images.clone()), "byte for byte");
    let (status, again) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{target}/vton/qbench"), Some(body)).await;
    assert_eq!(status, StatusCode::CONFLICT, "{again}");
    let scores = |campaign: String| {
        let (app, admin) = (&app, &admin);
        async move {
            let (_, gt) =
                api(app, admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
            let mut by_tryon: Vec<(String, String)> = gt["images"]
                .as_array()
                .expect("images")
                .iter()
                .map(|i| (i["tryon"].as_str().unwrap_or_default().to_owned(), i["mean"].to_string()))
                .collect();
            by_tryon.sort();
            (by_tryon, gt["curation"]["alpha_mean_before"].clone())
        }
    };
    let (source_scores, target_scores) = (scores(source).await, scores(target).await);
    assert_eq!(source_scores.0.len(), 8);
    assert_eq!(source_scores, target_scores);

    // The command line imports the same files.
    let (_, cli_target) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "cli", "config": {"background": []}})),
    )
    .await;
    let cli_target = cli_target["id"].as_str().expect("id").to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let a = crate::cli_stats::write(&dir, "answers.csv", &answers);
    let i = crate::cli_stats::write(&dir, "images.csv", &images);
    let url = app.database_url();
    let (ok, out, err) = crate::cli_stats::atelier(&[
        "vton",
        "import-qbench",
        "--campaign",
        &cli_target,
        "--answers",
        &a,
        "--images",
        &i,
        "--attention",
        "2=1",
        "--database-url",
        &url,
    ]);
    assert!(ok, "{err}");
    assert!(out.contains("\"responses\":6"), "{out}");
    assert_eq!(export(cli_target).await, (answers, images));
    let (ok, _, err) = crate::cli_stats::atelier(&[
        "vton",
        "import-qbench",
        "--campaign",
        &uuid::Uuid::nil().to_string(),
        "--answers",
        &a,
        "--images",
        &i,
        "--attention",
        "2=7",
        "--database-url",
        &url,
    ]);
    assert!(!ok && err.contains("2=7"), "{err}");
}
