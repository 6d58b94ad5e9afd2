//! A100 in the service: import with the outfit rules, shuffled
//! questionnaires, attention checks, ground truth, exports and model scores.

use crate::cli_stats::{atelier, write};
use crate::fixtures::{admin_token, api, join};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// A valid question: top + pants + the blank shoes.
pub fn question(id: &str) -> Value {
    json!({
        "id": id,
        "outfit": [{"image": format!("/img/{id}/top.png"), "category": "Tops"}, {"image": format!("/img/{id}/pants.png"), "category": "Pants"}],
        "blank_category": "Shoes",
        "choices": (1..=5).map(|c| json!({"id": format!("{id}-c{c}"), "image": format!("/img/{id}/c{c}.png"), "category": "Shoes"})).collect::<Vec<_>>(),
    })
}

pub async fn a100_campaign(
    app: &TestApp,
    token: &str,
    kind: &str,
    questions: Vec<Value>,
    config: Value,
) -> (String, String) {
    let (status, c) = api(
        app,
        token,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": kind, "name": "A100 test", "config": config})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let (status, body) = api(
        app,
        token,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/a100/questions"),
        Some(json!({"questions": questions})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(app, token, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    let (_, inv) = api(app, token, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    (id, inv["token"].as_str().expect("token").to_owned())
}

#[tokio::test]
async fn import_reports_each_rule_failure_with_the_question_id_and_accepts_overrides() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (status, c) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "a100-lat", "name": "rules"})))
            .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = c["id"].as_str().expect("id");
    let mut layered = question("layered");
    layered["outfit"].as_array_mut().expect("outfit").push(json!({"image": "/img/coat.png", "category": "Tops"}));
    let mut four = question("four-choices");
    four["choices"].as_array_mut().expect("choices").pop();
    let path = format!("/api/v1/admin/campaigns/{id}/a100/questions");
    let (status, body) =
        api(&app, &admin, Method::POST, &path, Some(json!({"questions": [question("fine"), layered.clone(), four]})))
            .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let message = body["error"]["message"].as_str().expect("message");
    assert!(message.contains("layered") && message.contains("one_per_clothing"), "{message}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 0, "nothing is imported when one question fails");

    layered["overrides"] = json!([{"rule": "one_per_clothing", "reason": "layering is intended here"}]);
    let (status, body) =
        api(&app, &admin, Method::POST, &path, Some(json!({"questions": [question("fine"), layered]}))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let reason: String =
        sqlx::query_scalar("SELECT payload->'overrides'->0->>'reason' FROM items WHERE external_id = 'layered'")
            .fetch_one(&app.pool)
            .await
            .expect("reason");
    assert_eq!(reason, "layering is intended here");
}

#[tokio::test]
async fn lat_ground_truth_undoes_shuffling_excludes_failed_attention_checks_and_scores_models() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let mut check = question("check");
    check["attention_check"] = json!(true);
    check["answer"] = json!("check-c1");
    let (campaign, invitation) = a100_campaign(
        &app,
        &admin,
        "a100-lat",
        vec![question("q1"), question("q2"), question("q3"), check],
        json!({"participants": 4}),
    )
    .await;

    // Participants pick by choice *id*; where it sits on their screen varies.
    let picks = [
        ("p1", ["q1-c1", "q2-c2", "q3-c3"], "check-c1"),
        ("p2", ["q1-c1", "q2-c3", "q3-c3"], "check-c1"),
        ("p3", ["q1-c2", "q2-c2", "q3-c4"], "check-c1"),
        ("p4", ["q1-c5", "q2-c5", "q3-c5"], "check-c4"),
    ];
    let mut orders = std::collections::HashSet::new();
    for (who, answers, check_answer) in picks {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        let id = view["assignment"]["id"].as_str().expect("id").to_owned();
        let text = view.to_string();
        assert!(!text.contains("attention_check") && !text.contains("\"answer\""), "no hint of the check: {text}");
        for item in view["items"].as_array().expect("items") {
            let choices: Vec<&str> = item["payload"]["choices"]
                .as_array()
                .expect("choices")
                .iter()
                .map(|c| c["id"].as_str().expect("id"))
                .collect();
            orders.insert(choices.join(","));
            let qid = choices[0].split('-').next().expect("question");
            let pick = if qid == "check" { check_answer } else { answers[qid[1..].parse::<usize>().expect("n") - 1] };
            let (status, b) = w
                .post(
                    &app,
                    &format!("/api/v1/work/assignments/{id}/responses"),
                    json!({"item_id": item["id"], "answer": {"choice": pick}}),
                )
                .await;
            assert_eq!(status, StatusCode::OK, "{b}");
        }
        let (status, b) = w.post(&app, &format!("/api/v1/work/assignments/{id}/complete"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{b}");
    }
    assert!(orders.len() > 4, "choice order is shuffled per participant");

    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(gt["test"], "lat");
    let qs = gt["questions"].as_array().expect("questions");
    assert_eq!(qs.len(), 3, "attention checks are not part of the ground truth");
    let q1 = qs.iter().find(|q| q["id"] == "q1").expect("q1");
    assert_eq!(
        q1["votes"],
        json!({"q1-c1": 2, "q1-c2": 1, "q1-c3": 0, "q1-c4": 0, "q1-c5": 0}),
        "p4 failed the check and is excluded"
    );
    assert_eq!(q1["participants"], 3);
    assert_eq!(q1["majority"], "q1-c1");
    assert!((q1["consistency"].as_f64().expect("c") - 2.0 / 3.0).abs() < 1e-12);
    let q2 = qs.iter().find(|q| q["id"] == "q2").expect("q2");
    assert_eq!(q2["majority"], "q2-c2");
    let q3 = qs.iter().find(|q| q["id"] == "q3").expect("q3");
    assert_eq!(q3["majority"], "q3-c3");
    // The admin page shows each majority as its image, each question linked to its answers.
    let page = crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/a100")).await;
    assert!(page.contains(r#"<img src="/img/q1/c1.png" alt="majority choice q1-c1""#), "{page}");
    assert!(page.contains(&format!(r#"href="/admin/campaigns/{campaign}/data?q=q2""#)), "{page}");
    let excluded: i64 =
        sqlx::query_scalar("SELECT count(*) FROM responses WHERE excluded_reason = 'attention_check_failed'")
            .fetch_one(&app.pool)
            .await
            .expect("count");
    assert_eq!(excluded, 4, "all of p4's answers are kept, marked");

    // Raw export: choice ids (shuffling undone), exclusions marked.
    let raw =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/responses.csv")).await;
    assert!(raw.contains("q1-c5") && raw.contains("attention_check_failed"));

    // A model scored in the service gets what the offline scorer computes on the exported file.
    let model = json!({"q1": "q1-c1", "q2": "q2-c3", "q3": "q3-c4"});
    let (status, scored) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/a100/models"),
        Some(json!({"model": "m1", "answers": model})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{scored}");
    // LATs: q1 majority (1), q2 no (0), q3 no (0) -> 1/3. mLATs: (2/3 + 1/3 + 1/3) / 3.
    assert!((scored["result"]["lats"].as_f64().expect("lats") - 1.0 / 3.0).abs() < 1e-12);
    assert!((scored["result"]["mlats"].as_f64().expect("mlats") - (4.0 / 3.0) / 3.0).abs() < 1e-12);
    let dir = tempfile::tempdir().expect("tempdir");
    let gt_file = write(&dir, "gt.json", &gt.to_string());
    let answers = write(&dir, "answers.csv", "question_id,choice_id\nq1,q1-c1\nq2,q2-c3\nq3,q3-c4\n");
    let (ok, out, err) = atelier(&["a100", "score", "--ground-truth", &gt_file, "--answers", &answers, "--json"]);
    assert!(ok, "{err}");
    let offline: Value = serde_json::from_str(&out).expect("json");
    assert_eq!(offline["lats"], scored["result"]["lats"]);
    assert_eq!(offline["mlats"], scored["result"]["mlats"]);
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/a100/models"),
        Some(json!({"model": "m2", "answers": {"q1": "q2-c1"}})),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("unknown_choice")));
    let (_, list) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/a100/models"), None).await;
    assert_eq!(list.as_array().expect("models").len(), 1);
    let page = reqwest::Client::new()
        .get(app.at(&format!("/admin/campaigns/{campaign}/a100")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("page");
    assert_eq!(page.status(), StatusCode::OK);
    let html = page.text().await.expect("html");
    assert!(html.contains("m1") && html.contains("Questions by consistency"));

    // The same refusal on the page: its status, the message beside the form, the form as filled.
    let (browser, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let score = |model: &'static str, answers: &'static str| {
        let (browser, csrf, url) =
            (browser.clone(), csrf.clone(), app.at(&format!("/admin/campaigns/{campaign}/a100")));
        async move {
            let r = browser
                .post(url)
                .form(&[("csrf_token", csrf.as_str()), ("model", model), ("answers", answers)])
                .send()
                .await
                .expect("score");
            (r.status(), r.text().await.expect("html"))
        }
    };
    let (status, html) = score("m2", "question_id,choice_id\nq1,q2-c1\n").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{html}");
    assert!(html.contains(r#"id="score-error""#) && html.contains(r#"value="m2""#), "{html}");
    assert!(html.contains("q1,q2-c1\n</textarea>"), "{html}");
    let (status, html) = score("m2", "question_id,choice_id\nq1\n").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{html}");
    assert!(html.contains("line 2: expected `question_id,choice_id`"), "{html}");
    let (_, list) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/a100/models"), None).await;
    assert_eq!(list.as_array().expect("models").len(), 1, "nothing stored");
    // Scored: back to the models, saying so.
    let (status, _) = score("m2", "question_id,choice_id\nq1,q1-c1\nq2,q2-c3\nq3,q3-c4\n").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let html = browser.get(app.at(&format!("/admin/campaigns/{campaign}/a100"))).send().await.expect("page");
    let html = html.text().await.expect("html");
    assert!(html.contains("Model `m2` scored."), "{html}");
}

#[tokio::test]
async fn only_submitted_counted_questionnaires_make_the_ground_truth_and_the_scores() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let mut check = question("check");
    check["attention_check"] = json!(true);
    check["answer"] = json!("check-c1");
    let (campaign, invitation) = a100_campaign(
        &app,
        &admin,
        "a100-lat",
        vec![question("q1"), question("q2"), check],
        json!({"participants": 6, "shuffle_questions": false}),
    )
    .await;
    let answer = |item: &Value, picks: &[(&str, &str)]| {
        let first = item["payload"]["choices"][0]["id"].as_str().expect("id");
        let q = first.split('-').next().expect("question");
        json!({"choice": picks.iter().find(|(k, _)| *k == q).expect("pick").1})
    };
    // Three finished participants: q1 -> c1, c1, c2; q2 -> c3 x3.
    for (who, q1) in [("p1", "q1-c1"), ("p2", "q1-c1"), ("p3", "q1-c2")] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        let picks = [("q1", q1), ("q2", "q2-c3"), ("check", "check-c1")];
        w.finish_with(&app, &view, |item| answer(item, &picks)).await;
    }
    // One half-finished participant and one who failed the check, neither submitted.
    for (who, check_answer) in [("halfway", None), ("inattentive", Some("check-c5"))] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        let id = view["assignment"]["id"].as_str().expect("id");
        for item in view["items"].as_array().expect("items") {
            let picks = [("q1", "q1-c2"), ("q2", "q2-c4"), ("check", check_answer.unwrap_or("skip"))];
            let a = answer(item, &picks);
            if a["choice"] == "skip" {
                continue;
            }
            let path = format!("/api/v1/work/assignments/{id}/responses");
            let (status, b) = w.post(&app, &path, json!({"item_id": item["id"], "answer": a})).await;
            assert_eq!(status, StatusCode::OK, "{b}");
        }
    }
    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(gt["participants"], 3, "x counts submitted, counted participants");
    let q1 = gt["questions"].as_array().expect("questions").iter().find(|q| q["id"] == "q1").expect("q1");
    assert_eq!(q1["votes"], json!({"q1-c1": 2, "q1-c2": 1, "q1-c3": 0, "q1-c4": 0, "q1-c5": 0}));
    assert_eq!(q1["majority"], "q1-c1");
    let (_, scored) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/a100/models"),
        Some(json!({"model": "m", "answers": {"q1": "q1-c1", "q2": "q2-c4"}})),
    )
    .await;
    // LATs: q1 majority (1), q2 not (0). mLATs: (2/3 + 0/3) / 2.
    assert_eq!(scored["result"]["lats"], 0.5);
    assert!((scored["result"]["mlats"].as_f64().expect("mlats") - 1.0 / 3.0).abs() < 1e-12, "{scored}");
    assert_eq!(scored["result"]["participants"], 3);
}

#[tokio::test]
async fn aat_ground_truth_keeps_the_key_for_admins_only() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let mut q = question("a1");
    q["answer"] = json!("a1-c2");
    q["dimension"] = json!("Color");
    q["sub_dimension"] = json!("Warm Tone");
    let (campaign, invitation) = a100_campaign(&app, &admin, "a100-aat", vec![q], json!({"participants": 2})).await;
    let w = join(&app, &invitation, "taker").await;
    let (_, view) = w.next(&app, &campaign).await;
    assert!(!view.to_string().contains("Warm Tone") && !view.to_string().contains("\"answer\""), "{view}");
    w.finish_with(&app, &view, |_| json!({"choice": "a1-c2"})).await;
    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(gt["test"], "aat");
    assert_eq!(gt["questions"][0]["answer"], "a1-c2");
    assert_eq!(gt["questions"][0]["human_accuracy"], 1.0);
    let csv =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth.csv")).await;
    assert!(
        csv.starts_with(
            "question,choice,votes,share,majority,tied,participants,consistency,correct,answer,dimension,sub_dimension\n"
        ),
        "{csv}"
    );
    assert!(csv.contains("a1,a1-c2,1,1.0,true,false,1,1.0,true,a1-c2,Color,Warm Tone"), "{csv}");
    let (_, scored) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/a100/models"),
        Some(json!({"model": "m", "answers": {"a1": "a1-c2"}})),
    )
    .await;
    assert_eq!(scored["result"]["aats"], 1.0);
    assert_eq!(scored["result"]["indexes"]["Color"], 1.0);
    assert_eq!(scored["result"]["sub_indexes"]["Color/Warm Tone"], 1.0);
}

#[tokio::test]
async fn questions_import_from_the_command_line_and_the_campaign_page() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, c) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "a100-lat", "name": "cli"})))
            .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let dir = tempfile::tempdir().expect("tempdir");
    let mut broken = question("bad");
    broken["blank_category"] = json!("Capes");
    let bad = write(&dir, "bad.json", &json!({"questions": [question("ok"), broken]}).to_string());
    let url = app.database_url();
    let (ok, _, err) = atelier(&["a100", "import", "--campaign", &id, "--database-url", &url, &bad]);
    assert!(!ok && err.contains("bad") && err.contains("Capes"), "{err}");
    let good = write(&dir, "good.json", &json!({"questions": [question("ok"), question("ok2")]}).to_string());
    let (ok, out, err) = atelier(&["a100", "import", "--campaign", &id, "--database-url", &url, &good]);
    assert!(ok, "{err}");
    assert!(out.contains("imported 2 questions"));

    // The campaign page's import form takes the same format.
    let resp = app
        .client()
        .post(app.at(&format!("/admin/campaigns/{id}/import")))
        .bearer_auth(&admin)
        .form(&[("content", json!({"questions": [question("ok3")]}).to_string())])
        .send()
        .await
        .expect("import");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let n: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(n, 3);
}

#[tokio::test]
async fn the_pilot_follows_the_same_members_across_rounds_and_exports_the_selection() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let questions = || vec![question("q1"), question("q2"), question("q3")];
    // The same three members answer in both rounds: q1 always c1; q2 splits;
    // q3 always c3 except m3 in round 2.
    let picks = |round: usize, member: &str, q: &str| -> String {
        match (q, member, round) {
            ("q1", _, _) => "q1-c1".into(),
            ("q2", "m1", 1) | ("q2", "m3", _) => "q2-c2".into(),
            ("q2", _, _) => "q2-c1".into(),
            ("q3", "m3", 1) => "q3-c4".into(),
            _ => format!("{q}-c3"),
        }
    };
    let mut rounds = Vec::new();
    for round in 0..2 {
        let (campaign, invitation) =
            a100_campaign(&app, &admin, "a100-lat", questions(), json!({"participants": 3})).await;
        for member in ["m1", "m2", "m3"] {
            let w = join(&app, &invitation, member).await;
            let (_, view) = w.next(&app, &campaign).await;
            w.finish_with(&app, &view, |item| {
                let first = item["payload"]["choices"][0]["id"].as_str().expect("id");
                json!({"choice": picks(round, member, first.split('-').next().expect("q"))})
            })
            .await;
        }
        rounds.push(campaign);
    }
    let query = format!("rounds={},{}", rounds[0], rounds[1]);
    let (status, report) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/a100/pilot/report?{query}&top=2"), None).await;
    assert_eq!(status, StatusCode::OK, "{report}");
    let ids: Vec<&str> =
        report["questions"].as_array().expect("q").iter().map(|q| q["id"].as_str().expect("id")).collect();
    assert_eq!(ids, vec!["q1", "q3", "q2"], "by consistency: 6/6, 5/6, 3/6");
    assert_eq!(report["selected"], json!(["q1"]), "top 2, then only 100 % consistency");
    let m3 = report["members"].as_array().expect("members").iter().find(|m| m["member"] == "m3").expect("m3");
    assert!((m3["consistency"].as_f64().expect("c") - 2.0 / 3.0).abs() < 1e-12, "m3 changed q3: {m3}");
    assert_eq!(report["incomplete_members"], json!([]));
    let (_, ranked) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/a100/pilot?{query}"), None).await;
    assert_eq!(ranked[0]["id"], "q1");
    assert_eq!(ranked[2]["stable"], false);

    // The selection downloads as a question set and imports as the final LAT.
    let (status, set) = api(
        &app,
        &admin,
        Method::GET,
        &format!("/api/v1/admin/a100/pilot/selection?{query}&min_consistency=0.8"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{set}");
    let chosen: Vec<&str> =
        set["questions"].as_array().expect("qs").iter().map(|q| q["id"].as_str().expect("id")).collect();
    assert_eq!(chosen, vec!["q1", "q3"]);
    let (_, final_lat) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "a100-lat", "name": "final"})))
            .await;
    let final_id = final_lat["id"].as_str().expect("id");
    let (status, imported) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{final_id}/a100/questions"), Some(set)).await;
    assert_eq!((status, imported["imported"].as_u64()), (StatusCode::CREATED, Some(2)), "{imported}");

    let html = crate::fixtures::get_text(
        &app,
        &admin,
        &format!("/admin/campaigns/{}/a100/pilot?round={}&top=2", rounds[0], rounds[1]),
    )
    .await;
    assert!(html.contains("Comparing 2 round(s)") && html.contains("Selected: <b>1</b> of 3"), "{html}");
    assert!(html.contains("<td>m3</td>") && html.contains("/api/v1/admin/a100/pilot/selection?"), "{html}");
    let (status, body) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/a100/pilot/report?{query}&min_consistency=2"), None)
            .await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_selection")));
}
