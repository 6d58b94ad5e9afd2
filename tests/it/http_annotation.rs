//! The annotation core through HTTP: joining and resuming, answering,
//! idempotency, validation, leases, and many workers at once.

use crate::fixtures::{admin_token, api, join, open_vton_campaign, vton_item};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

async fn count(app: &TestApp, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(&app.pool).await.expect("count")
}

/// A small campaign and one worker holding its first questionnaire: the
/// worker, the responses path, the first item's id and the campaign id.
async fn one_open_assignment(app: &TestApp, admin: &str) -> (crate::fixtures::WorkerSession, String, Value, String) {
    let (campaign, invitation) =
        open_vton_campaign(app, admin, 4, 1, json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}))
            .await;
    let w = join(app, &invitation, "w").await;
    let (_, view) = w.next(app, &campaign).await;
    let path = format!("/api/v1/work/assignments/{}/responses", view["assignment"]["id"].as_str().expect("id"));
    let item = view["items"][0]["id"].clone();
    (w, path, item, campaign)
}

#[tokio::test]
async fn a_worker_joins_resumes_and_gets_a_completion_code() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 6, 2, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;

    let first = join(&app, &invitation, "PROLIFIC_123").await;
    let (_, view) = first.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    assert_eq!(view["items"].as_array().expect("items").len(), 4);
    let item = view["items"][0]["id"].clone();
    first
        .post(
            &app,
            &format!("/api/v1/work/assignments/{assignment}/responses"),
            json!({"item_id": item, "answer": {"rating": 2}}),
        )
        .await;

    // Closing the tab and opening the link again (a new browser) resumes.
    let again = join(&app, &invitation, "PROLIFIC_123").await;
    assert_eq!(again.user_id, first.user_id, "the same external id maps to the same worker");
    let (_, resumed) = again.next(&app, &campaign).await;
    assert_eq!(resumed["assignment"]["id"], assignment.as_str());
    assert_eq!(resumed["progress"], json!({"answered": 1, "total": 4}));
    let landing = again
        .client
        .get(app.at(&format!("/work/{campaign}")))
        .send()
        .await
        .expect("landing")
        .text()
        .await
        .expect("html");
    assert!(landing.contains("You have answered 1 of 4 tasks") && landing.contains("Continue"), "{landing}");

    // Submitting early is refused; after the last answer the code appears.
    let (status, body) = again.post(&app, &format!("/api/v1/work/assignments/{assignment}/complete"), json!({})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "incomplete");
    let done = again.finish(&app, &resumed, 2).await;
    let code: String =
        sqlx::query_scalar("SELECT completion_code FROM campaigns").fetch_one(&app.pool).await.expect("code");
    assert_eq!(done["completion_code"], code.as_str());
    let page = again
        .client
        .get(app.at(&format!("/work/a/{assignment}/done")))
        .send()
        .await
        .expect("done")
        .text()
        .await
        .expect("html");
    assert!(page.contains(&code));
    assert_eq!(count(&app, "SELECT count(*) FROM users WHERE role = 'worker'").await, 1);

    // What the service kept of the assignment is forgotten on submission;
    // an answer sent afterwards is still refused, and changes nothing.
    let late = again
        .post(
            &app,
            &format!("/api/v1/work/assignments/{assignment}/responses"),
            json!({"item_id": item, "answer": {"rating": 3}, "change": true}),
        )
        .await;
    assert_eq!(late.0, StatusCode::CONFLICT, "{}", late.1);
    assert_eq!(late.1["error"]["code"], "already_submitted");
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 4);
    assert_eq!(
        count(&app, "SELECT count(*) FROM responses WHERE answer->>'rating' = '3' AND updated_at > created_at").await,
        0
    );
}

#[tokio::test]
async fn resubmitting_is_idempotent_and_changes_are_explicit_and_audited() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (w, path, item, _) = one_open_assignment(&app, &admin).await;

    let (status, first) =
        w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 1}, "time_on_task_ms": 1500})).await;
    assert_eq!((status, first["outcome"].as_str()), (StatusCode::OK, Some("created")));
    let (status, retry) =
        w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 1}, "time_on_task_ms": 1500})).await;
    assert_eq!((status, retry["outcome"].as_str()), (StatusCode::OK, Some("unchanged")));
    assert_eq!(retry["response"]["id"], first["response"]["id"]);
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 1);

    let (status, body) = w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 3}})).await;
    assert_eq!(status, StatusCode::CONFLICT);
    assert_eq!(body["error"]["code"], "already_answered");
    let (status, changed) =
        w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 3}, "change": true})).await;
    assert_eq!((status, changed["outcome"].as_str()), (StatusCode::OK, Some("changed")));
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 1);
    let (old, new): (Value, Value) = sqlx::query_as("SELECT old_answer, new_answer FROM response_changes")
        .fetch_one(&app.pool)
        .await
        .expect("audit row");
    assert_eq!((old, new), (json!({"rating": 1}), json!({"rating": 3})));
    let answered: i32 =
        sqlx::query_scalar("SELECT answered FROM assignments").fetch_one(&app.pool).await.expect("count");
    assert_eq!(answered, 1, "retries and changes are not counted again");
}

#[tokio::test]
async fn invalid_input_gets_a_clear_4xx_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (w, path, item, _) = one_open_assignment(&app, &admin).await;

    for (body, status, code) in [
        (json!({"item_id": item, "answer": {"rating": 4}}), StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        (json!({"item_id": item, "answer": "3"}), StatusCode::UNPROCESSABLE_ENTITY, "invalid"),
        (
            json!({"item_id": uuid::Uuid::new_v4(), "answer": {"rating": 2}}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "item_not_in_batch",
        ),
        (
            json!({"item_id": item, "answer": {"rating": 2}, "time_on_task_ms": -5}),
            StatusCode::UNPROCESSABLE_ENTITY,
            "invalid_time",
        ),
        (json!({"answer": {"rating": 2}}), StatusCode::UNPROCESSABLE_ENTITY, "invalid_body"),
    ] {
        let (got, resp) = w.post(&app, &path, body.clone()).await;
        assert_eq!(got, status, "{body} -> {resp}");
        assert_eq!(resp["error"]["code"], code, "{body} -> {resp}");
        assert!(resp["error"]["message"].as_str().is_some_and(|m| !m.is_empty()));
    }
    let resp = w
        .client
        .post(app.at(&path))
        .header("x-csrf-token", &w.csrf)
        .header("content-type", "application/json")
        .body("{not json")
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 0);
    // Bodies over the limit (8 MB outside the import routes) are refused before anything is parsed.
    let huge = format!("{{\"kind\": \"vton\", \"name\": \"{}\"}}", "x".repeat(9 * 1024 * 1024));
    let resp = reqwest::Client::new()
        .post(app.at("/api/v1/admin/campaigns"))
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body(huge)
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let body: Value = resp.json().await.expect("json error");
    assert_eq!(body["error"]["code"], "body_too_large");

    // An import with one bad item imports nothing and names the item.
    let (status, body) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "vton", "name": "second"})))
            .await;
    assert_eq!(status, StatusCode::CREATED);
    let id = body["id"].as_str().expect("id");
    let mut bad = vton_item(7, None);
    bad["payload"]["tryon"] = json!("");
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/items"),
        Some(json!({"items": [vton_item(1, None), bad]})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(body["error"]["message"].as_str().expect("message").contains("img-7"), "{body}");
    assert_eq!(count(&app, &format!("SELECT count(*) FROM items WHERE campaign_id = '{id}'")).await, 0);
    // Unknown kinds and bad configuration are refused too.
    let (status, body) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "nope", "name": "x"}))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("unknown_kind")));
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "x", "config": {"sanity_per_questionnaire": 60}})),
    )
    .await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
}

/// A VTON campaign of `n` questionnaires (three images and a sanity task
/// each), one annotator wanted per questionnaire, five-minute leases.
async fn questionnaires_of_four_for_one_annotator(app: &TestApp, admin: &str, n: usize) -> (String, String) {
    let config = json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1, "lease_minutes": 5});
    open_vton_campaign(app, admin, 3 * n, n, config).await
}

/// Time passes for the assignment of this view: its lease runs out.
async fn lapse_lease(app: &TestApp, view: &Value) {
    sqlx::query("UPDATE assignments SET leased_until = now() - interval '1 second' WHERE id = $1::uuid")
        .bind(view["assignment"]["id"].as_str().expect("assignment id"))
        .execute(&app.pool)
        .await
        .expect("lease runs out");
}

#[tokio::test]
async fn an_expired_lease_returns_the_batch_to_the_pool() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // One questionnaire, one annotator wanted.
    let (campaign, invitation) = questionnaires_of_four_for_one_annotator(&app, &admin, 1).await;
    let slow = join(&app, &invitation, "slow").await;
    let fast = join(&app, &invitation, "fast").await;
    let (_, slow_view) = slow.next(&app, &campaign).await;
    let slow_assignment = slow_view["assignment"]["id"].as_str().expect("id").to_owned();
    let path = format!("/api/v1/work/assignments/{slow_assignment}/responses");
    slow.post(&app, &path, json!({"item_id": slow_view["items"][0]["id"], "answer": {"rating": 2}})).await;

    // While the lease runs, nobody else gets the batch.
    let (status, none) = fast.next(&app, &campaign).await;
    assert_eq!((status, none), (StatusCode::OK, Value::Null));
    // Time passes: the lease runs out.
    lapse_lease(&app, &slow_view).await;
    let (_, fast_view) = fast.next(&app, &campaign).await;
    assert_eq!(fast_view["assignment"]["batch_id"], slow_view["assignment"]["batch_id"]);

    // The slow worker's late answers are refused; their earlier one is kept but excluded.
    let (status, body) =
        slow.post(&app, &path, json!({"item_id": slow_view["items"][1]["id"], "answer": {"rating": 2}})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("lease_expired")));
    let reason: Option<String> =
        sqlx::query_scalar("SELECT excluded_reason FROM responses").fetch_one(&app.pool).await.expect("kept");
    assert_eq!(reason.as_deref(), Some("lease_expired"));
    let state: String = sqlx::query_scalar("SELECT state::text FROM assignments WHERE id = $1::uuid")
        .bind(&slow_assignment)
        .fetch_one(&app.pool)
        .await
        .expect("state");
    assert_eq!(state, "expired");
    assert_eq!(count(&app, SLOTS_KEPT_WRONG).await, 0);
}

#[tokio::test]
async fn a_slot_whose_lease_ran_out_goes_to_someone_else_only_when_no_batch_has_room() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = questionnaires_of_four_for_one_annotator(&app, &admin, 2).await;
    let (late, second, third) = (
        join(&app, &invitation, "late").await,
        join(&app, &invitation, "second").await,
        join(&app, &invitation, "third").await,
    );
    let (_, late_view) = late.next(&app, &campaign).await;
    lapse_lease(&app, &late_view).await;
    // The other questionnaire still has room: it goes there, and the late
    // worker's lapsed questionnaire stays theirs.
    let (_, second_view) = second.next(&app, &campaign).await;
    assert_ne!(second_view["assignment"]["batch_id"], late_view["assignment"]["batch_id"]);
    let (status, resumed) = late.next(&app, &campaign).await;
    assert_eq!((status, &resumed["assignment"]["id"]), (StatusCode::OK, &late_view["assignment"]["id"]));
    // No room anywhere once more time passes: the lapsed slot is handed out again.
    lapse_lease(&app, &late_view).await;
    let (_, third_view) = third.next(&app, &campaign).await;
    assert_eq!(third_view["assignment"]["batch_id"], late_view["assignment"]["batch_id"]);
    assert_eq!(count(&app, SLOTS_KEPT_WRONG).await, 0);
}

#[tokio::test]
async fn fifty_simultaneous_workers_never_exceed_overlap_or_answer_twice() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // 10 questionnaires x 3 workers = 30 slots for 50 workers.
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        40,
        2,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "appearances": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    let mut workers = Vec::new();
    for i in 0..50 {
        workers.push(join(&app, &invitation, &format!("worker-{i}")).await);
    }
    let tasks = workers.into_iter().map(|w| {
        let campaign = campaign.clone();
        let url = app.url.clone();
        tokio::spawn(async move {
            let app_url = url;
            let mut done = 0;
            loop {
                let resp = w
                    .client
                    .post(format!("{app_url}/api/v1/work/campaigns/{campaign}/assignment"))
                    .header("x-csrf-token", &w.csrf)
                    .json(&json!({}))
                    .send()
                    .await
                    .expect("next");
                assert_eq!(resp.status(), StatusCode::OK);
                let view: Value = resp.json().await.expect("json");
                if view.is_null() {
                    return done;
                }
                let id = view["assignment"]["id"].as_str().expect("id").to_owned();
                for item in view["items"].as_array().expect("items") {
                    // Submit twice: a retry must not count twice.
                    for _ in 0..2 {
                        let r = w
                            .client
                            .post(format!("{app_url}/api/v1/work/assignments/{id}/responses"))
                            .header("x-csrf-token", &w.csrf)
                            .json(&json!({"item_id": item["id"], "answer": {"rating": 2}}))
                            .send()
                            .await
                            .expect("respond");
                        assert_eq!(r.status(), StatusCode::OK);
                    }
                }
                let r = w
                    .client
                    .post(format!("{app_url}/api/v1/work/assignments/{id}/complete"))
                    .header("x-csrf-token", &w.csrf)
                    .json(&json!({}))
                    .send()
                    .await
                    .expect("complete");
                assert_eq!(r.status(), StatusCode::OK);
                done += 1;
            }
        })
    });
    let mut finished = 0;
    for t in tasks.collect::<Vec<_>>() {
        finished += t.await.expect("worker task");
    }
    assert_eq!(finished, 30, "every slot filled exactly once");
    let over: i64 = count(
        &app,
        "SELECT count(*) FROM (SELECT b.id FROM batches b JOIN assignments a ON a.batch_id = b.id AND a.state = 'completed'
         GROUP BY b.id, b.overlap HAVING count(*) <> b.overlap) x",
    )
    .await;
    assert_eq!(over, 0, "each questionnaire completed by exactly its overlap");
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 30 * 5);
    let twice = count(
        &app,
        "SELECT count(*) FROM (SELECT r.annotator_id, r.item_id FROM responses r JOIN items i ON i.id = r.item_id
         WHERE i.gold IS NULL GROUP BY 1, 2 HAVING count(*) > 1) x",
    )
    .await;
    assert_eq!(twice, 0, "no worker rated the same image twice");
    assert_eq!(count(&app, SLOTS_KEPT_WRONG).await, 0, "each batch's kept slot count matches its assignments");
}

/// Batches whose kept count of held slots (active or completed assignments)
/// differs from their assignments.
const SLOTS_KEPT_WRONG: &str = "SELECT count(*) FROM batches b
     WHERE b.taken <> (SELECT count(*) FROM assignments a WHERE a.batch_id = b.id AND a.state IN ('active', 'completed'))";

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn sixteen_workers_asking_at_once_all_get_the_batch_that_wants_sixteen() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        2,
        1,
        json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 16}),
    )
    .await;
    let mut workers = Vec::new();
    for n in 0..17 {
        workers.push(join(&app, &invitation, &format!("launch-{n}")).await);
    }
    let late = workers.pop().expect("17th");
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(16));
    let app = std::sync::Arc::new(app);
    let mut set = tokio::task::JoinSet::new();
    for w in workers {
        let (app, campaign, barrier) = (app.clone(), campaign.clone(), barrier.clone());
        set.spawn(async move {
            barrier.wait().await;
            w.next(&app, &campaign).await
        });
    }
    let mut batches = std::collections::HashSet::new();
    while let Some(r) = set.join_next().await {
        let (status, view) = r.expect("task");
        assert_eq!(status, StatusCode::OK, "{view}");
        assert!(view["assignment"].is_object(), "every one of the 16 gets the batch: {view}");
        batches.insert(view["assignment"]["batch_id"].as_str().expect("batch").to_owned());
    }
    assert_eq!(batches.len(), 1);
    let (_, none) = late.next(&app, &campaign).await;
    assert!(none["assignment"].is_null(), "the 17th finds the batch full: {none}");
}

#[tokio::test]
async fn a_worker_who_reopens_their_link_after_finishing_sees_the_completion_code_again() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}))
            .await;
    let code: String =
        sqlx::query_scalar("SELECT completion_code FROM campaigns").fetch_one(&app.pool).await.expect("code");
    let w = join(&app, &invitation, "returning").await;
    let landing =
        w.client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("landing").text().await.expect("html");
    assert!(!landing.contains(&code), "no code before finishing");
    let (_, view) = w.next(&app, &campaign).await;
    w.finish(&app, &view, 1).await;
    // Days later, in another browser.
    let again = join(&app, &invitation, "returning").await;
    let landing = again
        .client
        .get(app.at(&format!("/work/{campaign}")))
        .send()
        .await
        .expect("landing")
        .text()
        .await
        .expect("html");
    assert!(landing.contains(&code), "{landing}");
    let none = again
        .client
        .post(app.at(&format!("/work/{campaign}/start")))
        .form(&[("csrf_token", again.csrf.as_str())])
        .send()
        .await
        .expect("start")
        .text()
        .await
        .expect("html");
    assert!(none.contains("no task left") && none.contains(&code), "{none}");
}

#[tokio::test]
async fn items_imported_after_batching_are_batched_and_asked() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        2,
        1,
        json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1}),
    )
    .await;
    let path = format!("/api/v1/admin/campaigns/{campaign}/batches");
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(json!({"seed": 1}))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("nothing_to_batch")));
    // Two more images arrive after the campaign opened.
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/items"),
        Some(json!({"items": [vton_item(50, None), vton_item(51, None)]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(detail["progress"]["items_unbatched"], 2, "{detail}");
    let page = crate::fixtures::get_text(&app, &admin, &format!("/admin/campaigns/{campaign}")).await;
    assert!(
        page.contains("2</b> item(s) in no batch yet") && page.contains("Form batches for the 2 new item(s)"),
        "{page}"
    );
    let (status, formed) = api(&app, &admin, Method::POST, &path, Some(json!({"seed": 2}))).await;
    assert_eq!(status, StatusCode::CREATED, "{formed}");
    let (_, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(detail["progress"]["items_unbatched"], 0);
    // Two workers: the first takes the old questionnaire, the second gets the new images (with the sanity task).
    let mut seen = Vec::new();
    for who in ["first", "second"] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        let tryons: Vec<String> = view["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["payload"]["tryon"].as_str().expect("tryon").to_owned())
            .collect();
        assert_eq!(tryons.len(), 3, "{tryons:?}");
        seen.extend(tryons);
    }
    assert!(seen.contains(&"/img/t/50.png".to_owned()) && seen.contains(&"/img/t/51.png".to_owned()), "{seen:?}");
    assert_eq!(seen.iter().filter(|t| t.contains("/1000.")).count(), 2, "the sanity task is in both questionnaires");
}

/// Concurrent answers share statements (group commit): each is acknowledged
/// with its own response, a vote sent twice at once is stored once, a wrong
/// answer in the same burst is refused alone, and the counts add up.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_burst_of_answers_sharing_statements_stores_each_exactly_once() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        120,
        1,
        json!({"tasks_per_questionnaire": 6, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1}),
    )
    .await;
    let mut sends = Vec::new();
    for n in 0..20 {
        let w = join(&app, &invitation, &format!("burst-{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
        let items: Vec<Value> = view["items"].as_array().expect("items").iter().map(|i| i["id"].clone()).collect();
        let w = std::sync::Arc::new(w);
        // Every item at once, the first one twice, and a rating out of range.
        let mut votes: Vec<(Value, i64)> = items.iter().map(|i| (i.clone(), 2)).collect();
        votes.push((items[0].clone(), 2));
        votes.push((items[1].clone(), 7));
        for (item, rating) in votes {
            let (w, url, assignment) = (w.clone(), app.url.clone(), assignment.clone());
            sends.push(tokio::spawn(async move {
                let r = w
                    .client
                    .post(format!("{url}/api/v1/work/assignments/{assignment}/responses"))
                    .header("x-csrf-token", &w.csrf)
                    .json(&json!({"item_id": item, "answer": {"rating": rating}}))
                    .send()
                    .await
                    .expect("respond");
                let status = r.status();
                (rating, status, r.json::<Value>().await.expect("json"))
            }));
        }
    }
    let (mut created, mut unchanged, mut refused) = (0, 0, 0);
    let mut ids = std::collections::HashSet::new();
    for send in sends {
        let (rating, status, body) = send.await.expect("task");
        if rating == 7 {
            assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
            assert!(body["error"]["code"].is_string(), "{body}");
            refused += 1;
            continue;
        }
        assert_eq!(status, StatusCode::OK, "{body}");
        ids.insert(body["response"]["id"].as_str().expect("id").to_owned());
        assert_eq!(body["response"]["answer"], json!({"rating": 2}));
        assert!(body["progress"]["answered"].as_i64().expect("answered") >= 1);
        assert_eq!(body["progress"]["total"], 6, "six tasks, the sanity task among them");
        match body["outcome"].as_str() {
            Some("created") => created += 1,
            Some("unchanged") => unchanged += 1,
            other => panic!("unexpected outcome {other:?}: {body}"),
        }
    }
    assert_eq!((created, unchanged, refused), (20 * 6, 20, 20));
    assert_eq!(ids.len(), 20 * 6, "a vote sent twice is the same response");
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, 20 * 6);
    assert_eq!(
        count(&app, "SELECT count(*) FROM responses WHERE answer <> '{\"rating\": 2}'::jsonb").await,
        0,
        "the refused answer changed nothing"
    );
    // Each questionnaire is complete: every worker can submit it.
    let done = count(
        &app,
        "SELECT count(*) FROM (SELECT a.id FROM assignments a JOIN responses r ON r.assignment_id = a.id
         GROUP BY a.id HAVING count(*) = 6) x",
    )
    .await;
    assert_eq!(done, 20);
    // The campaign's figures agree (one worker joined without answering).
    join(&app, &invitation, "idle").await;
    let (status, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(status, StatusCode::OK, "{detail}");
    assert_eq!(detail["progress"]["responses"], 20 * 6);
    assert_eq!(detail["progress"]["responses_excluded"], 0);
    assert_eq!(detail["progress"]["annotators"], 20);
    assert_eq!(detail["progress"]["assignments_active"], 20);
    assert_eq!(detail["annotators"].as_array().map(Vec::len), Some(20));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn a_questionnaire_answered_all_at_once_and_twice_counts_each_answer_once_in_order() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 12, 1, json!({"tasks_per_questionnaire": 12, "sanity_per_questionnaire": 1}))
            .await;
    let w = std::sync::Arc::new(join(&app, &invitation, "eager").await);
    let (_, view) = w.next(&app, &campaign).await;
    let path = format!("/api/v1/work/assignments/{}/responses", view["assignment"]["id"].as_str().expect("id"));
    let items: Vec<Value> = view["items"].as_array().expect("items").iter().map(|i| i["id"].clone()).collect();
    let total = items.len() as i64;
    // Every answer sent twice at the same moment (a double click, a retry).
    let app = std::sync::Arc::new(app);
    let barrier = std::sync::Arc::new(tokio::sync::Barrier::new(items.len() * 2));
    let mut set = tokio::task::JoinSet::new();
    for item in items.iter().chain(items.iter()) {
        let (app, w, path, barrier, item) = (app.clone(), w.clone(), path.clone(), barrier.clone(), item.clone());
        set.spawn(async move {
            barrier.wait().await;
            w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 3}})).await
        });
    }
    let mut created = Vec::new();
    while let Some(r) = set.join_next().await {
        let (status, body) = r.expect("task");
        assert_eq!(status, StatusCode::OK, "{body}");
        assert_eq!(body["progress"]["total"], total, "{body}");
        match body["outcome"].as_str() {
            Some("created") => created.push(body["progress"]["answered"].as_i64().expect("answered")),
            Some("unchanged") => {}
            other => panic!("unexpected outcome {other:?}: {body}"),
        }
    }
    created.sort_unstable();
    assert_eq!(created, (1..=total).collect::<Vec<_>>(), "each stored answer is counted once, in order");
    assert_eq!(count(&app, "SELECT count(*) FROM responses").await, total);
    let drift = count(
        &app,
        "SELECT count(*) FROM assignments a WHERE a.answered <> (SELECT count(*) FROM responses r WHERE r.assignment_id = a.id)",
    )
    .await;
    assert_eq!(drift, 0, "the kept count is the count");
    let (status, _) = w.post(&app, &format!("{}/complete", path.trim_end_matches("/responses")), json!({})).await;
    assert_eq!(status, StatusCode::OK);
}

#[tokio::test]
async fn votes_go_on_after_every_database_connection_is_cut() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (w, path, _, campaign) = one_open_assignment(&app, &admin).await;
    let (_, view) = w.next(&app, &campaign).await;
    let items: Vec<Value> = view["items"].as_array().expect("items").iter().map(|i| i["id"].clone()).collect();
    let (status, _) = w.post(&app, &path, json!({"item_id": items[0], "answer": {"rating": 2}})).await;
    assert_eq!(status, StatusCode::OK);
    // Every connection the service holds (its pools' and the ones kept for
    // storing answers) is cut, as when PostgreSQL restarts.
    sqlx::query(
        "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
         WHERE datname = current_database() AND pid <> pg_backend_pid()",
    )
    .execute(&app.pool)
    .await
    .expect("cut");
    for item in &items[1..] {
        let mut answered = false;
        for _ in 0..40 {
            let (status, body) = w.post(&app, &path, json!({"item_id": item, "answer": {"rating": 3}})).await;
            match status {
                StatusCode::OK => {
                    answered = true;
                    break;
                }
                // A broken connection is a temporary failure, never a 500.
                StatusCode::SERVICE_UNAVAILABLE => {}
                other => panic!("{other}: {body}"),
            }
        }
        assert!(answered, "the answer is stored once fresh connections replace the cut ones");
    }
    let mut stored = None;
    for _ in 0..40 {
        if let Ok(n) = sqlx::query_scalar::<_, i64>("SELECT count(*) FROM responses").fetch_one(&app.pool).await {
            stored = Some(n);
            break;
        }
    }
    assert_eq!(stored, Some(items.len() as i64), "each answer stored exactly once");
}

#[tokio::test]
async fn a_worker_who_finished_sees_their_code_and_no_start_button_also_once_closed() {
    let app = TestApp::spawn().await;
    let admin = crate::fixtures::admin_token(&app).await;
    let (campaign, link) = crate::fixtures::open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        serde_json::json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3}),
    )
    .await;
    let w = crate::fixtures::join(&app, &link, "finisher").await;
    let (_, view) = w.next(&app, &campaign).await;
    let done = w.finish(&app, &view, 1).await;
    let code = done["completion_code"].as_str().expect("code").to_owned();
    let page = |w: &crate::fixtures::WorkerSession| {
        let (app, campaign) = (&app, campaign.clone());
        let client = w.client.clone();
        async move {
            client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("page").text().await.expect("html")
        }
    };
    let html = page(&w).await;
    assert!(html.contains(&code) && html.contains("nothing more to do"), "{html}");
    assert!(!html.contains("/start"), "no Start button after finishing: {html}");
    // Closing the campaign never hides a code already earned.
    let (status, _) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/state"),
        Some(serde_json::json!({"state": "closed"})),
    )
    .await;
    assert!(status.is_success());
    let html = page(&w).await;
    assert!(html.contains(&code), "{html}");
}

/// The task page a browser is sent to picks its task from the answers
/// stored, in whatever order they came (here through the API, out of
/// order): the first task without an answer, a position asked for with its
/// answer shown, the first open again for a position out of range, and the
/// page to submit once every task has an answer.
#[tokio::test]
async fn the_task_page_shows_the_first_task_without_an_answer_whatever_order_they_came_in() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 8, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    let w = join(&app, &invitation, "w").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let items: Vec<String> =
        view["items"].as_array().expect("items").iter().map(|i| i["id"].as_str().expect("id").to_owned()).collect();
    assert_eq!(items.len(), 4);
    let responses = format!("/api/v1/work/assignments/{assignment}/responses");
    let answer = |item: usize, rating: u8| {
        w.post(&app, &responses, json!({"item_id": items[item], "answer": {"rating": rating}}))
    };
    let page = |query: &str| {
        let url = app.at(&format!("/work/a/{assignment}{query}"));
        let client = w.client.clone();
        async move {
            let response = client.get(url).send().await.expect("page");
            assert_eq!(response.status(), StatusCode::OK);
            response.text().await.expect("html")
        }
    };
    let shows = |html: &str, position: usize, answered: usize| {
        assert!(html.contains(&format!("<title>Task {position} of 4")), "task {position}: {html}");
        assert_eq!(crate::fixtures::item_on_page(html), items[position - 1], "the item of task {position}");
        assert!(html.contains(&format!("aria-valuenow=\"{answered}\"")), "{answered} answered: {html}");
    };
    let fresh = page("").await;
    shows(&fresh, 1, 0);
    assert!(!fresh.contains("name=\"change\""), "nothing answered yet");
    assert_eq!(answer(1, 2).await.0, StatusCode::OK);
    assert_eq!(answer(2, 3).await.0, StatusCode::OK);
    shows(&page("").await, 1, 2);
    assert_eq!(answer(0, 1).await.0, StatusCode::OK);
    shows(&page("").await, 4, 3);
    // Back to task 3: its answer shown, a change if sent again.
    let third = page("?pos=3").await;
    shows(&third, 3, 3);
    assert!(third.contains("name=\"change\" value=\"1\""), "an answered task is changed: {third}");
    assert!(third.contains("value=\"3\" data-key=\"3\"\n          class=\"choice selected\""), "3 chosen: {third}");
    shows(&page("?pos=9").await, 4, 3);
    assert_eq!(answer(3, 2).await.0, StatusCode::OK);
    let all = page("").await;
    assert!(all.contains("You have answered all 4 tasks"), "the page to submit: {all}");
    shows(&page("?pos=2").await, 2, 4);
}

/// Task pages asked for at once share their statements: each still shows
/// its own worker's task, progress and answer, never another's.
#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn task_pages_asked_for_at_once_each_show_their_own_worker_s_task_and_answer() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        96,
        1,
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1}),
    )
    .await;
    // Worker n answered its first n % 4 tasks with the rating n % 3 + 1.
    let mut workers = Vec::new();
    for n in 0..24usize {
        let w = join(&app, &invitation, &format!("page-{n}")).await;
        let (_, view) = w.next(&app, &campaign).await;
        let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
        let items: Vec<String> =
            view["items"].as_array().expect("items").iter().map(|i| i["id"].as_str().expect("id").to_owned()).collect();
        let responses = format!("/api/v1/work/assignments/{assignment}/responses");
        for item in &items[..n % 4] {
            let (status, body) =
                w.post(&app, &responses, json!({"item_id": item, "answer": {"rating": n % 3 + 1}})).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        workers.push((n, std::sync::Arc::new(w), assignment, items));
    }
    let mut pages = Vec::new();
    for round in 0..3 {
        for (n, w, assignment, items) in &workers {
            let query = if round == 1 { "?pos=1" } else { "" };
            let (url, client) = (app.at(&format!("/work/a/{assignment}{query}")), w.client.clone());
            let (n, items, first) = (*n, items.clone(), round == 1);
            pages.push(tokio::spawn(async move {
                let response = client.get(url).send().await.expect("page");
                assert_eq!(response.status(), StatusCode::OK);
                (n, items, first, response.text().await.expect("html"))
            }));
        }
    }
    for page in pages {
        let (n, items, first, html) = page.await.expect("task");
        let (answered, position) = (n % 4, if first { 1 } else { n % 4 + 1 });
        assert!(html.contains(&format!("<title>Task {position} of 4")), "worker {n}, task {position}: {html}");
        assert_eq!(crate::fixtures::item_on_page(&html), items[position - 1], "worker {n}'s item");
        assert!(html.contains(&format!("aria-valuenow=\"{answered}\"")), "worker {n}: {answered} answered");
        let rating = n % 3 + 1;
        let chosen = format!("value=\"{rating}\" data-key=\"{rating}\"\n          class=\"choice selected\"");
        assert_eq!(html.contains(&chosen), first && answered > 0, "worker {n}'s own answer, on its task only");
        assert_eq!(html.matches("class=\"choice selected\"").count(), usize::from(first && answered > 0));
    }
}
