//! Role isolation: each role sees only what it should.

use crate::fixtures::{admin_token, api, join, open_vton_campaign};
use crate::support::TestApp;
use atelier::auth::{tokens, users, Role};
use reqwest::{Method, StatusCode};
use serde_json::json;

#[tokio::test]
async fn anonymous_callers_get_401_and_wrong_roles_403() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 8, 2, json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1}))
            .await;
    let expert = users::create(&app.pool, Role::Expert, "eve", "expert-password").await.expect("expert");
    let expert_token = tokens::create(&app.pool, expert.id).await.expect("token");
    let worker = join(&app, &invitation, "w-1").await;

    let anonymous = reqwest::Client::new();
    for path in [
        "/api/v1/admin/campaigns",
        "/api/v1/me",
        "/api/v1/expert/campaigns",
        &format!("/api/v1/admin/campaigns/{campaign}/items"),
    ] {
        let resp = anonymous.get(app.at(path)).send().await.expect("get");
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED, "{path}");
        let body: serde_json::Value = resp.json().await.expect("json");
        assert_eq!(body["error"]["code"], "unauthenticated");
    }
    for path in [
        "/api/v1/admin/campaigns",
        &format!("/api/v1/admin/campaigns/{campaign}/items"),
        &format!("/api/v1/admin/campaigns/{campaign}/responses"),
    ] {
        let (status, body) = worker.get(&app, path).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "worker on {path}: {body}");
        let (status, _) = api(&app, &expert_token, Method::GET, path, None).await;
        assert_eq!(status, StatusCode::FORBIDDEN, "expert on {path}");
    }
    // Admin pages are no place for workers either.
    let resp = worker.client.get(app.at("/admin")).send().await.expect("get");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    // Experts cannot take crowd work, workers cannot use expert routes.
    let (status, _) = api(
        &app,
        &expert_token,
        Method::POST,
        &format!("/api/v1/work/campaigns/{campaign}/assignment"),
        Some(json!({})),
    )
    .await;
    assert_eq!(status, StatusCode::FORBIDDEN);
    let (status, _) = worker.get(&app, "/api/v1/expert/campaigns").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

#[tokio::test]
async fn workers_never_receive_gold_answers_or_other_workers_responses() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        8,
        2,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 2, "annotators_per_questionnaire": 2}),
    )
    .await;
    let alice = join(&app, &invitation, "alice").await;
    let bob = join(&app, &invitation, "bob").await;

    let (status, view) = alice.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    let text = view.to_string();
    assert!(!text.contains("gold") && !text.contains("rating"), "no gold in the worker's view: {text}");
    assert!(!text.contains("sanity"), "sanity tasks are not recognisable: {text}");
    assert!(!text.contains("\"model\""), "the try-on model is hidden from raters: {text}");
    let alice_assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let first_item = view["items"][0]["id"].clone();
    let (status, _) = alice
        .post(
            &app,
            &format!("/api/v1/work/assignments/{alice_assignment}/responses"),
            json!({"item_id": first_item, "answer": {"rating": 2}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK);

    // Bob may not read or answer Alice's assignment: it does not exist for him.
    let (status, _) = bob.get(&app, &format!("/api/v1/work/assignments/{alice_assignment}")).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, _) = bob
        .post(
            &app,
            &format!("/api/v1/work/assignments/{alice_assignment}/responses"),
            json!({"item_id": first_item, "answer": {"rating": 1}}),
        )
        .await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    // Bob's own view of the same batch shows none of Alice's answers.
    let (_, bob_view) = bob.next(&app, &campaign).await;
    assert_eq!(bob_view["assignment"]["batch_id"], view["assignment"]["batch_id"], "same questionnaire");
    assert_eq!(bob_view["answers"], json!({}));
    assert_eq!(bob_view["progress"]["answered"], 0);

    // A worker who did not open this campaign's link cannot work on it.
    let other_campaign_worker = {
        let (c2, inv2) = open_vton_campaign(
            &app,
            &admin,
            4,
            1,
            json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}),
        )
        .await;
        let w = join(&app, &inv2, "carol").await;
        assert_ne!(c2, campaign);
        w
    };
    let (status, _) = other_campaign_worker.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}
