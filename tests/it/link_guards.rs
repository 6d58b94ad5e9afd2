//! Study links that bots cannot farm: at most `joins_per_address` new ids
//! per address per ten minutes, Prolific ids in Prolific's shape, places
//! held without an answer handed back, ended workers kept out through every
//! link, a worker bound to the platform session they joined with, and the
//! platform's own list of submissions deciding whose work counts.

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, api, get_text, WorkerSession};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

/// Opens `path` (a join link) in a fresh browser from `address`; the
/// status, the body and the browser.
async fn open(app: &TestApp, path: &str, address: &str) -> (StatusCode, String, reqwest::Client) {
    let client = app.client();
    let resp = client.get(app.at(path)).header("x-forwarded-for", address).send().await.expect("join");
    let status = resp.status();
    (status, resp.text().await.expect("body"), client)
}

/// The worker session of a browser that joined.
async fn session_of(client: reqwest::Client, app: &TestApp) -> WorkerSession {
    let me: Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
    WorkerSession {
        csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
        user_id: me["user"]["id"].as_str().expect("id").to_owned(),
        client,
    }
}

async fn set(app: &TestApp, admin: &str, campaign: &str, settings: Value) {
    let (status, body) =
        api(app, admin, Method::PUT, &format!("/api/v1/admin/campaigns/{campaign}/settings"), Some(settings)).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn one_address_brings_at_most_ten_new_ids_in_ten_minutes() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 50})).await;
    for n in 0..10 {
        let (status, body, _) = open(&app, &format!("/join/{link}?worker_id=bot-{n}"), "198.51.100.7").await;
        assert_eq!(status, StatusCode::SEE_OTHER, "{n}: {body}");
    }
    let (status, body, _) = open(&app, &format!("/join/{link}?worker_id=bot-10"), "198.51.100.7").await;
    assert_eq!(status, StatusCode::TOO_MANY_REQUESTS);
    assert!(body.contains("too many new worker ids joined this study from your network"), "{body}");
    let made: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE external_id = 'bot-10'")
        .fetch_one(&app.pool)
        .await
        .expect("count");
    assert_eq!(made, 0, "no identity is made for a refused id");
    // Someone who joined comes back; another address is not affected.
    let (status, _, _) = open(&app, &format!("/join/{link}?worker_id=bot-3"), "198.51.100.7").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _, _) = open(&app, &format!("/join/{link}?worker_id=person-1"), "198.51.100.8").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // In-lab sessions behind one address turn the limit off.
    set(&app, &admin, &campaign, json!({"joins_per_address": 0})).await;
    let (status, _, _) = open(&app, &format!("/join/{link}?worker_id=bot-10"), "198.51.100.7").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, body) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{campaign}/settings"),
        Some(json!({"joins_per_address": -1})),
    )
    .await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_settings")));
}

#[tokio::test]
async fn a_prolific_id_has_prolifics_shape() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, link) = a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 5})).await;
    for bad in ["bot-1", "5f3c0000000000000000aa0", "5f3c0000000000000000aa0z", "5f3c0000000000000000aa01ff"] {
        let (status, body, _) = open(&app, &format!("/join/{link}?PROLIFIC_PID={bad}"), "198.51.100.20").await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{bad}");
        assert!(body.contains("expects a Prolific participant id"), "{body}");
    }
    let (status, _, _) =
        open(&app, &format!("/join/{link}?PROLIFIC_PID=5f3c0000000000000000aa01&SESSION_ID=s1"), "198.51.100.20").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
}

#[tokio::test]
async fn a_questionnaire_taken_and_never_answered_goes_back_after_the_first_answer_limit() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 1})).await;
    let (_, _, squatter) = open(&app, &format!("/join/{link}?worker_id=squatter"), "198.51.100.30").await;
    let squatter = session_of(squatter, &app).await;
    let (status, held) = squatter.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK, "{held}");
    // The place is held for ten minutes, not the two-hour lease.
    let minutes: f64 = sqlx::query_scalar(
        "SELECT extract(epoch FROM leased_until - created_at)::float8 / 60 FROM assignments WHERE state = 'active'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("lease");
    assert!((minutes - 10.0).abs() < 0.1, "{minutes}");
    // Coming back without answering does not renew it past those ten minutes.
    squatter.next(&app, &campaign).await;
    sqlx::query("UPDATE assignments SET created_at = created_at - interval '11 minutes', leased_until = now() - interval '1 minute'")
        .execute(&app.pool)
        .await
        .expect("time passes");
    let (status, again) = squatter.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    let renewed: bool = sqlx::query_scalar("SELECT leased_until > now() FROM assignments WHERE state = 'active'")
        .fetch_one(&app.pool)
        .await
        .expect("lease");
    assert!(!renewed, "resuming without an answer renewed the place: {again}");
    // A real participant gets the place; the squatter is told their time ran out.
    let (_, _, real) = open(&app, &format!("/join/{link}?worker_id=real"), "198.51.100.31").await;
    let real = session_of(real, &app).await;
    let (status, view) = real.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(view["assignment"]["batch_id"], held["assignment"]["batch_id"], "{view}");
    let path = format!("/api/v1/work/assignments/{}/responses", held["assignment"]["id"].as_str().expect("id"));
    let (status, body) =
        squatter.post(&app, &path, json!({"item_id": held["items"][0]["id"], "answer": {"choice": "q1-c1"}})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("lease_expired")));
}

#[tokio::test]
async fn ended_workers_stay_out_through_every_link_until_let_back_in() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, leaked) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 5})).await;
    let (_, other) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), None).await;
    let other = other["token"].as_str().expect("token").to_owned();
    let (status, _, _) = open(&app, &format!("/join/{leaked}?worker_id=leaker"), "198.51.100.40").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/invitations/{leaked}/revoke?end_sessions=true"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    // Through the campaign's other live link: refused, and no session.
    let (status, body, client) = open(&app, &format!("/join/{other}?worker_id=leaker"), "198.51.100.41").await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert!(body.contains("ended your participation"), "{body}");
    let me = client.get(app.at("/api/v1/me")).send().await.expect("me");
    assert_eq!(me.status(), StatusCode::UNAUTHORIZED);
    let (_, ended) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ended-workers"), None).await;
    assert_eq!(ended[0]["worker_id"], "leaker", "{ended}");
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}")).await;
    assert!(page.contains("1 worker(s) kept out") && page.contains("<code>leaker</code>"), "{page}");
    // The admin lets them back in: the other link admits them again (the ended one stays closed).
    let (status, _) =
        api(&app, &admin, Method::DELETE, &format!("/api/v1/admin/campaigns/{campaign}/ended-workers/leaker"), None)
            .await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    // An id no worker can have (an invisible character) names no ended worker: 404, as documented.
    let path = format!("/api/v1/admin/campaigns/{campaign}/ended-workers/%C3%AE%F2%B9%90%B2");
    let (status, body) = api(&app, &admin, Method::DELETE, &path, None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::NOT_FOUND, Some("not_found")), "{body}");
    let (status, _, _) = open(&app, &format!("/join/{other}?worker_id=leaker"), "198.51.100.41").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (status, _, _) = open(&app, &format!("/join/{leaked}?worker_id=leaker"), "198.51.100.41").await;
    assert_eq!(status, StatusCode::CONFLICT);
}

#[tokio::test]
async fn knowing_a_participants_id_is_not_enough_to_be_them() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 5})).await;
    let pid = "5f3c0000000000000000bb01";
    let (status, _, owner) =
        open(&app, &format!("/join/{link}?PROLIFIC_PID={pid}&STUDY_ID=st&SESSION_ID=secret-session"), "198.51.100.50")
            .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let owner = session_of(owner, &app).await;
    let (_, view) = owner.next(&app, &campaign).await;
    owner.finish_with(&app, &view, |_| json!({"choice": "q1-c3"})).await;
    // Another browser with the id alone (or a wrong session) is refused, and sees nothing of theirs.
    for query in [format!("PROLIFIC_PID={pid}"), format!("PROLIFIC_PID={pid}&SESSION_ID=guess")] {
        let (status, body, client) = open(&app, &format!("/join/{link}?{query}"), "198.51.100.51").await;
        assert_eq!(status, StatusCode::CONFLICT, "{query}: {body}");
        assert!(body.contains("already taking part in this study from another browser"), "{body}");
        let me = client.get(app.at("/api/v1/me")).send().await.expect("me");
        assert_eq!(me.status(), StatusCode::UNAUTHORIZED);
    }
    // With the platform's session (the worker on a second device, from Prolific), they are back.
    let (status, _, _) =
        open(&app, &format!("/join/{link}?PROLIFIC_PID={pid}&SESSION_ID=secret-session"), "198.51.100.52").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // The owner's own browser needs nothing more.
    let resp = owner.client.get(app.at(&format!("/join/{link}?PROLIFIC_PID={pid}"))).send().await.expect("again");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
}

/// A worker of the A100 campaign choosing `choice` for q1 (from their own address).
async fn vote(app: &TestApp, campaign: &str, link: &str, worker: &str, choice: &str) {
    let (status, body, client) =
        open(app, &format!("/join/{link}?worker_id={worker}"), &crate::fixtures::address_of(worker)).await;
    assert_eq!(status, StatusCode::SEE_OTHER, "{body}");
    let w = session_of(client, app).await;
    let (status, view) = w.next(app, campaign).await;
    assert_eq!(status, StatusCode::OK, "{view}");
    w.finish_with(app, &view, |_| json!({"choice": choice})).await;
}

#[tokio::test]
async fn the_platforms_list_decides_whose_votes_count() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 10})).await;
    let real = ["5f3c00000000000000000001", "5f3c00000000000000000002", "5f3c00000000000000000003"];
    for w in real {
        vote(&app, &campaign, &link, w, "q1-c2").await;
    }
    for n in 0..4 {
        vote(&app, &campaign, &link, &format!("bot{n}"), "q1-c5").await;
    }
    let majority = |gt: &Value| gt["questions"][0]["majority"].clone();
    let gt_path = format!("/api/v1/admin/campaigns/{campaign}/ground-truth");
    let (_, gt) = api(&app, &admin, Method::GET, &gt_path, None).await;
    assert_eq!(majority(&gt), "q1-c5", "the bots decide while everyone counts: {gt}");

    // A list that does not parse changes nothing, and says where.
    let path = format!("/api/v1/admin/campaigns/{campaign}/platform-submissions");
    let resp = reqwest::Client::new()
        .put(app.at(&path))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body("Participant id,Status\n5f3c00000000000000000001,APPROVED\n,APPROVED\n")
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["error"]["code"], "invalid_platform_list");
    assert!(body["error"]["message"].as_str().expect("message").contains("line 3"), "{body}");

    // Prolific's export: two approved, one rejected; the bots are not on it.
    let export = format!(
        "Submission id,Participant id,Status,Started at\n\
         a,{},APPROVED,2026-12-01\nb,{},AWAITING REVIEW,2026-12-01\nc,{},REJECTED,2026-12-01\n",
        real[0], real[1], real[2]
    );
    let resp = reqwest::Client::new()
        .put(app.at(&path))
        .bearer_auth(&admin)
        .header("content-type", "text/csv")
        .body(export)
        .send()
        .await
        .expect("put");
    assert_eq!(resp.status(), StatusCode::OK);
    let summary: Value = resp.json().await.expect("json");
    assert_eq!(
        (&summary["platform"], &summary["on_platform"], &summary["not_on_platform"], &summary["rejected_on_platform"]),
        (&json!("prolific"), &json!(2), &json!(4), &json!(1)),
        "{summary}"
    );
    let (_, gt) = api(&app, &admin, Method::GET, &gt_path, None).await;
    assert_eq!(majority(&gt), "q1-c2", "{gt}");
    assert_eq!(gt["questions"][0]["votes"]["q1-c2"], 2, "the rejected worker does not count either: {gt}");

    // Payout files list only those who count; the page says who is not on the list.
    let files = format!("/api/v1/admin/campaigns/{campaign}/payouts.csv");
    let approve = get_text(&app, &admin, &format!("{files}?format=prolific-approve")).await;
    assert_eq!(approve, format!("{}\n{}\n", real[0], real[1]));
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/payouts")).await;
    assert!(page.contains("Ground truth from: <strong>reconciled</strong>"), "{page}");
    assert!(page.contains("2 on it, 4 not on it, 1 rejected there"), "{page}");
    assert!(page.contains("not on the platform&#39;s list") || page.contains("not on the platform's list"), "{page}");

    // The release says which rule it used and whom it left out.
    let (files, _) = crate::fixtures::cut_release(&app, &admin, &campaign).await;
    let manifest: Value = serde_json::from_slice(&files["manifest.json"]).expect("manifest");
    let rule = &manifest["parameters"]["ground_truth_from"];
    assert_eq!(
        rule,
        &json!({"rule": "reconciled", "workers_left_out": {"not_on_platform": 4, "rejected_on_platform": 1}})
    );

    // Back to everyone: the marks are lifted, the bots decide again.
    set(&app, &admin, &campaign, json!({"ground_truth_from": "all"})).await;
    let (_, gt) = api(&app, &admin, Method::GET, &gt_path, None).await;
    assert_eq!(majority(&gt), "q1-c5", "{gt}");
}

#[tokio::test]
async fn closing_a_study_stops_new_questionnaires_but_a_held_one_resumes_through_the_api() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) =
        a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], json!({"participants": 5})).await;
    let (_, _, holder) = open(&app, &format!("/join/{link}?worker_id=holder"), "198.51.100.60").await;
    let holder = session_of(holder, &app).await;
    let (_, held) = holder.next(&app, &campaign).await;
    let (status, body) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/state"),
        Some(json!({"state": "closed"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, resumed) = holder.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK, "{resumed}");
    assert_eq!(resumed["assignment"]["id"], held["assignment"]["id"]);
    holder.finish_with(&app, &resumed, |_| json!({"choice": "q1-c1"})).await;
    let (_, _, late) = open(&app, &format!("/join/{link}?worker_id=latecomer"), "198.51.100.61").await;
    let late = session_of(late, &app).await;
    let (status, body) = late.next(&app, &campaign).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("campaign_not_open")));
}
