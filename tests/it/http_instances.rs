//! Several service instances on one PostgreSQL work as one: nothing that
//! matters lives in one process's memory (sessions, login limits,
//! assignments, releases, uploads on shared storage).

use crate::fixtures::{admin_token, api, join, login_page, open_vton_campaign, ADMIN_PASSWORD};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::json;

/// Instance A (the app), instance B's address beside it on the same
/// database, an admin token, and an open VTON campaign (its id and
/// invitation) of one-worker questionnaires.
async fn two_instances_and_a_campaign() -> (TestApp, String, String, String, String) {
    let app = TestApp::spawn().await;
    let other = app.spawn_beside().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1}),
    )
    .await;
    (app, other, admin, campaign, invitation)
}

#[tokio::test]
async fn two_instances_on_one_database_share_sessions_limits_assignments_and_releases() {
    let (app, other, admin, campaign, invitation) = two_instances_and_a_campaign().await;
    // A worker joins through instance A and carries on through instance B.
    let w = join(&app, &invitation, "roaming").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let on_b = |path: &str| format!("{other}{path}");
    let resp = w
        .client
        .post(on_b(&format!("/api/v1/work/assignments/{assignment}/responses")))
        .header("x-csrf-token", &w.csrf)
        .json(&json!({"item_id": view["items"][0]["id"], "answer": {"rating": 2}}))
        .send()
        .await
        .expect("answer on B");
    assert_eq!(resp.status(), StatusCode::OK, "the session made on A is valid on B");
    // The only slot of the first questionnaire is taken on A: B does not hand it out again.
    let second = join(&app, &invitation, "second").await;
    let resp = second
        .client
        .post(on_b(&format!("/api/v1/work/campaigns/{campaign}/assignment")))
        .header("x-csrf-token", &second.csrf)
        .json(&json!({}))
        .send()
        .await
        .expect("next on B");
    let next: serde_json::Value = resp.json().await.expect("json");
    assert_ne!(next["assignment"]["id"], assignment.as_str(), "{next}");

    // Login failures counted on A hold on B.
    for n in 0..10 {
        let (client, csrf) = login_page(&app).await;
        let resp = client
            .post(app.at("/login"))
            .header("x-forwarded-for", format!("203.0.113.{n}"))
            .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", "wrong")])
            .send()
            .await
            .expect("login");
        assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    }
    let client = app.client();
    let html = client.get(on_b("/login")).send().await.expect("page").text().await.expect("html");
    let csrf = crate::fixtures::csrf_in(&html);
    let resp = client
        .post(on_b("/login"))
        .header("x-forwarded-for", "203.0.113.200")
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .expect("login on B");
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS, "the name's backoff is shared");

    // A release cut on A downloads from B; an image uploaded to A is served by B.
    let (status, _) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/releases"), Some(json!({}))).await;
    assert_eq!(status, StatusCode::CREATED);
    let resp = reqwest::Client::new()
        .get(on_b(&format!("/api/v1/admin/campaigns/{campaign}/releases/1/archive")))
        .bearer_auth(&admin)
        .send()
        .await
        .expect("download on B");
    assert_eq!(resp.status(), StatusCode::OK);
    let png = crate::fixtures::png(6, 5, 30);
    let stored: serde_json::Value = reqwest::Client::new()
        .post(app.at("/api/v1/admin/images"))
        .bearer_auth(&admin)
        .header("content-type", "image/png")
        .body(png.clone())
        .send()
        .await
        .expect("upload")
        .json()
        .await
        .expect("json");
    let url = stored["url"].as_str().expect("url");
    let served = reqwest::get(on_b(url)).await.expect("image on B").bytes().await.expect("bytes");
    assert_eq!(served.as_ref(), png.as_slice());
}

/// Sessions are remembered by each instance between requests; ending one on
/// one instance ends it on the others at once (the change is announced).
#[tokio::test]
async fn a_session_ended_on_one_instance_is_refused_by_the_other_that_remembered_it() {
    let (app, other, _, campaign, invitation) = two_instances_and_a_campaign().await;
    let w = join(&app, &invitation, "leaving").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let vote_on_b = |n: usize| {
        w.client
            .post(format!("{other}/api/v1/work/assignments/{assignment}/responses"))
            .header("x-csrf-token", &w.csrf)
            .json(&json!({"item_id": view["items"][n]["id"], "answer": {"rating": 2}}))
            .send()
    };
    // B reads the session and remembers it.
    assert_eq!(vote_on_b(0).await.expect("vote").status(), StatusCode::OK);
    assert_eq!(vote_on_b(1).await.expect("vote").status(), StatusCode::OK);
    let resp = w.client.post(app.at("/logout")).form(&[("csrf_token", w.csrf.as_str())]).send().await.expect("logout");
    assert!(resp.status().is_redirection(), "{}", resp.status());
    // The announcement arrives within milliseconds (B may answer from memory
    // until it does); allow a generous bound.
    let view_on_b = format!("{other}/api/v1/work/assignments/{assignment}");
    let mut refused = false;
    for _ in 0..100 {
        let status = w.client.get(&view_on_b).send().await.expect("view").status();
        if status == StatusCode::UNAUTHORIZED {
            refused = true;
            break;
        }
        assert_eq!(status, StatusCode::OK);
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert!(refused, "B kept the ended session for more than a second");
    let status = vote_on_b(2).await.expect("vote").status();
    assert!(matches!(status, StatusCode::UNAUTHORIZED | StatusCode::FORBIDDEN), "{status}");
}

/// Each instance keeps what it saw of an assignment for its task pages:
/// an answer sent through the other instance still moves its page on, and
/// an answer shows on either.
#[tokio::test]
async fn task_pages_on_two_instances_follow_answers_sent_through_either() {
    let (app, other, _admin, campaign, invitation) = two_instances_and_a_campaign().await;
    let w = join(&app, &invitation, "two-tabs").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let page = async |base: &str, query: &str| {
        let response = w.client.get(format!("{base}/work/a/{assignment}{query}")).send().await.expect("page");
        assert_eq!(response.status(), StatusCode::OK);
        response.text().await.expect("html")
    };
    let answer = async |base: &str, html: &str, rating: &str| {
        let item = crate::fixtures::item_on_page(html);
        let response = w
            .client
            .post(format!("{base}/work/a/{assignment}/answer"))
            .form(&[("csrf_token", w.csrf.as_str()), ("item_id", item.as_str()), ("rating", rating)])
            .send()
            .await
            .expect("answer");
        assert_eq!(response.status(), StatusCode::SEE_OTHER, "{}", response.text().await.unwrap_or_default());
        item
    };
    let shows = |html: &str, position: usize, answered: usize| {
        assert!(html.contains(&format!("<title>Task {position} of 3")), "task {position}: {html}");
        assert!(html.contains(&format!("aria-valuenow=\"{answered}\"")), "{answered} answered: {html}");
    };
    let a = app.url.clone();
    let first = page(&a, "").await;
    shows(&first, 1, 0);
    let one = answer(&a, &first, "1").await;
    let second = page(&a, "").await;
    shows(&second, 2, 1);
    assert_ne!(crate::fixtures::item_on_page(&second), one);
    // The second task answered through B: A's page of it, asked for before
    // A has seen the answer, shows it; and A's next page moves on.
    answer(&other, &second, "3").await;
    let asked = page(&a, "?pos=2").await;
    shows(&asked, 2, 2);
    assert!(asked.contains("value=\"3\" data-key=\"3\"\n          class=\"choice selected\""), "{asked}");
    let third = page(&a, "").await;
    shows(&third, 3, 2);
    shows(&page(&other, "").await, 3, 2);
    // The answer given through B shows on A's page of that task.
    let back = page(&a, "?pos=2").await;
    shows(&back, 2, 2);
    assert!(back.contains("value=\"3\" data-key=\"3\"\n          class=\"choice selected\""), "{back}");
    answer(&a, &third, "2").await;
    assert!(page(&a, "").await.contains("You have answered all 3 tasks"));
    assert!(page(&other, "").await.contains("You have answered all 3 tasks"));
}

#[tokio::test]
async fn task_pages_show_a_campaign_s_settings_as_changed_through_another_instance() {
    let (app, other, admin, campaign, invitation) = two_instances_and_a_campaign().await;
    let w = join(&app, &invitation, "settings-change").await;
    let (_, view) = w.next(&app, &campaign).await;
    let assignment = view["assignment"]["id"].as_str().expect("id").to_owned();
    let page = async || {
        let response = w.client.get(app.at(&format!("/work/a/{assignment}"))).send().await.expect("page");
        assert_eq!(response.status(), StatusCode::OK);
        response.text().await.expect("html")
    };
    let participants = async |who: &str| {
        let response = reqwest::Client::new()
            .put(format!("{other}/api/v1/admin/campaigns/{campaign}/settings"))
            .bearer_auth(&admin)
            .json(&json!({"participants": who}))
            .send()
            .await
            .expect("settings on B");
        assert_eq!(response.status(), StatusCode::OK, "{}", response.text().await.unwrap_or_default());
    };
    // A keeps the campaign after its first page; a change made through B
    // shows on A's next page all the same (experts get the campaign header).
    let header = "<a href=\"/expert\">Your campaigns</a>";
    assert!(!page().await.contains(header), "a crowd campaign's page has no expert header");
    participants("experts").await;
    assert!(page().await.contains(header), "the change made through B shows on A");
    participants("crowd").await;
    assert!(!page().await.contains(header), "and so does the change back");
}
