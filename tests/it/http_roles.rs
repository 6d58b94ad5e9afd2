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

#[tokio::test]
async fn invitation_links_and_api_tokens_are_listed_revoked_at_once_and_may_expire() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        serde_json::json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}),
    )
    .await;
    let (status, links) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), None).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(links[0]["token"], invitation.as_str());
    let (status, links) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/invitations/{invitation}/revoke"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{links}");
    assert!(links[0]["revoked_at"].is_string());
    let resp = app.client().get(app.at(&format!("/join/{invitation}?worker_id=late"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::CONFLICT, "a revoked link admits nobody new");

    // Tokens: one for an expert with an expiry, listed, revoked, refused at once.
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, "erin", "expert-password-1")
        .await
        .expect("expert");
    let (status, made) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/tokens",
        Some(serde_json::json!({"user": "erin", "expires_in_days": 30})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    let erin = made["token"].as_str().expect("token").to_owned();
    assert_eq!(api(&app, &erin, Method::GET, "/api/v1/expert/campaigns", None).await.0, StatusCode::OK);
    let (_, list) = api(&app, &admin, Method::GET, "/api/v1/admin/tokens", None).await;
    let listed = list.as_array().expect("tokens").iter().find(|t| t["id"] == made["id"]).expect("listed").clone();
    assert_eq!(listed["user"], "erin");
    assert!(listed["expires_at"].is_string() && !listed.to_string().contains(&erin), "{listed}");
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/tokens/{}/revoke", made["id"].as_str().expect("id")),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(api(&app, &erin, Method::GET, "/api/v1/expert/campaigns", None).await.0, StatusCode::UNAUTHORIZED);
    // An expired token is refused too.
    let (_, short) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/tokens",
        Some(serde_json::json!({"user": "erin", "expires_in_days": 1})),
    )
    .await;
    sqlx::query("UPDATE api_tokens SET expires_at = now() - interval '1 second' WHERE id = $1::uuid")
        .bind(short["id"].as_str().expect("id"))
        .execute(&app.pool)
        .await
        .expect("expire");
    assert_eq!(
        api(&app, short["token"].as_str().expect("t"), Method::GET, "/api/v1/expert/campaigns", None).await.0,
        StatusCode::UNAUTHORIZED
    );
    // No admin can mint a token that acts as another admin.
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Admin, "other-admin", "admin-password-2")
        .await
        .expect("admin");
    let (status, body) =
        api(&app, &admin, Method::POST, "/api/v1/admin/tokens", Some(serde_json::json!({"user": "other-admin"}))).await;
    assert_eq!(status, StatusCode::FORBIDDEN, "{body}");
    // The command line revokes too.
    let (_, cli) =
        api(&app, &admin, Method::POST, "/api/v1/admin/tokens", Some(serde_json::json!({"user": "erin"}))).await;
    let url = app.database_url();
    let (ok, out, err) = crate::cli_stats::atelier(&["token", "list", "--database-url", &url]);
    assert!(ok && out.contains(cli["id"].as_str().expect("id")), "{out}{err}");
    let (ok, out, err) = crate::cli_stats::atelier(&[
        "token",
        "revoke",
        "--id",
        cli["id"].as_str().expect("id"),
        "--database-url",
        &url,
    ]);
    assert!(ok && out.contains("revoked"), "{out}{err}");
    assert_eq!(
        api(&app, cli["token"].as_str().expect("t"), Method::GET, "/api/v1/expert/campaigns", None).await.0,
        StatusCode::UNAUTHORIZED
    );
}

#[tokio::test]
async fn archived_campaigns_are_hidden_read_only_and_exportable_and_only_empty_ones_can_be_deleted() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        serde_json::json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}),
    )
    .await;
    let w = join(&app, &invitation, "archivist").await;
    let (_, view) = w.next(&app, &campaign).await;
    w.finish(&app, &view, 2).await;
    let (status, archived) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/archive"), None).await;
    assert_eq!(status, StatusCode::OK, "{archived}");
    assert_eq!(archived["state"], "closed");
    let (_, list) = api(&app, &admin, Method::GET, "/api/v1/admin/campaigns", None).await;
    assert!(list.as_array().expect("list").iter().all(|c| c["id"] != campaign.as_str()), "hidden by default");
    let (_, list) = api(&app, &admin, Method::GET, "/api/v1/admin/campaigns?archived=true", None).await;
    assert_eq!(list[0]["id"], campaign.as_str());
    for (path, body) in [
        ("items", json!({"items": [crate::fixtures::vton_item(77, None)]})),
        ("state", json!({"state": "open"})),
        ("invitations", json!({})),
    ] {
        let (status, body) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/{path}"), Some(body)).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::CONFLICT, Some("campaign_archived")),
            "{path}"
        );
    }
    let (status, _) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(status, StatusCode::OK, "still exportable");
    let (status, body) = api(&app, &admin, Method::DELETE, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("campaign_has_data")));
    let (status, _) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/unarchive"), None).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/invitations"), None).await;
    assert_eq!(status, StatusCode::CREATED, "writable again");

    let (_, empty) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "vton", "name": "empty"})))
            .await;
    let empty = empty["id"].as_str().expect("id").to_owned();
    let (status, _) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{empty}/items"),
        Some(json!({"items": [crate::fixtures::vton_item(1, None)]})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (status, _) = api(&app, &admin, Method::DELETE, &format!("/api/v1/admin/campaigns/{empty}"), None).await;
    assert_eq!(status, StatusCode::NO_CONTENT);
    let (status, _) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{empty}"), None).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

/// Experts log in; invitation links are for the crowd. An expert campaign
/// refuses to make one (a link would only lead workers to a refusal), its
/// page offers neither links nor payouts, and its wanted submissions count
/// every expert once per batch they all label.
#[tokio::test]
async fn expert_campaigns_have_no_invitation_links_and_want_every_expert_per_batch() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "pairs", "config": {"k": 3, "catalog": 10, "pairs_per_batch": 2}}),
        "model,query,candidate,rank\nm,q1,a,0\nm,q1,b,1\nm,q1,c,2\n",
    )
    .await;
    for name in ["ex-1", "ex-2", "ex-3"] {
        users::create(&app.pool, Role::Expert, name, "expert-password").await.expect("expert");
    }

    let (status, err) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    assert_eq!((status, err["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("not_a_crowd_campaign")), "{err}");
    let (_, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}"), None).await;
    assert_eq!(detail["invitations"], json!([]), "nothing was made");
    let batches = detail["progress"]["batches"].as_i64().expect("batches");
    assert_eq!(batches, 2, "three pairs, two a batch");
    assert_eq!(detail["progress"]["assignments_wanted"], 3 * batches, "three experts, each batch once each");

    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let page = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page");
    let page = page.text().await.expect("html");
    assert!(page.contains("of 6 wanted submissions"), "{page}");
    assert!(page.contains("This campaign is for experts"), "{page}");
    assert!(!page.contains("New invitation link") && !page.contains("Payouts by worker id"), "{page}");
    // The page's form (posted by hand) is refused the same way.
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{id}/invitations")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("form");
    assert_eq!(resp.status(), StatusCode::CONFLICT);

    // Switched to the crowd, the same campaign may invite workers.
    let (status, b) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{id}/settings"),
        Some(json!({"participants": "crowd", "annotators_per_batch": 2})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let (status, b) = api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    assert_eq!(status, StatusCode::CREATED, "{b}");
}

/// A link with places admits that many workers, even when they come all at
/// once; those who joined get back in, a newcomer to a full link is told
/// so and no identity is made for them; the list says who joined.
#[tokio::test]
async fn an_invitation_link_with_places_admits_that_many_workers_and_they_may_return() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, open_link) = open_vton_campaign(
        &app,
        &admin,
        4,
        1,
        serde_json::json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}),
    )
    .await;
    let links = format!("/api/v1/admin/campaigns/{campaign}/invitations");
    // No body, an empty object and `null` all make a link without places.
    for body in [None, Some(json!({})), Some(serde_json::Value::Null)] {
        let (status, made) = api(&app, &admin, Method::POST, &links, body).await;
        assert_eq!((status, &made["places"]), (StatusCode::CREATED, &serde_json::Value::Null), "{made}");
    }
    for (body, code) in [(json!({"places": 0}), "invalid_places"), (json!({"places": "five"}), "invalid_body")] {
        let (status, err) = api(&app, &admin, Method::POST, &links, Some(body)).await;
        assert_eq!((status, err["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some(code)), "{err}");
    }
    let (status, made) = api(&app, &admin, Method::POST, &links, Some(json!({"places": 5}))).await;
    assert_eq!(status, StatusCode::CREATED, "{made}");
    assert_eq!(made["places"], 5);
    let link = made["token"].as_str().expect("token").to_owned();

    // Twenty workers open the link at the same moment: five get in.
    let attempts = (0..20).map(|n| {
        let (app, link) = (&app, &link);
        async move {
            let url = app.at(&format!("/join/{link}?worker_id=rush-{n}"));
            (n, app.client().get(url).send().await.expect("join").status())
        }
    });
    let statuses = futures_util::future::join_all(attempts).await;
    let admitted: Vec<usize> = statuses.iter().filter(|(_, s)| *s == StatusCode::SEE_OTHER).map(|(n, _)| *n).collect();
    assert_eq!(admitted.len(), 5, "{statuses:?}");
    assert!(statuses.iter().all(|(_, s)| [StatusCode::SEE_OTHER, StatusCode::CONFLICT].contains(s)), "{statuses:?}");
    let refused = app.client().get(app.at(&format!("/join/{link}?worker_id=late-comer"))).send().await.expect("join");
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    assert!(refused.text().await.expect("html").contains("this study is full"));
    let identities: i64 =
        sqlx::query_scalar("SELECT count(*) FROM users WHERE external_id LIKE 'rush-%' OR external_id = 'late-comer'")
            .fetch_one(&app.pool)
            .await
            .expect("count");
    assert_eq!(identities, 5, "nobody refused was given an identity");
    // Those who joined get back in; the other link of the campaign has no limit.
    crate::fixtures::join(&app, &link, &format!("rush-{}", admitted[0])).await;
    crate::fixtures::join(&app, &open_link, "late-comer").await;

    let (_, listed) = api(&app, &admin, Method::GET, &links, None).await;
    let row =
        |token: &str| listed.as_array().expect("links").iter().find(|l| l["token"] == token).cloned().expect("row");
    assert_eq!((row(&link)["joined"].as_i64(), row(&link)["places"].as_i64()), (Some(5), Some(5)));
    assert_eq!((row(&open_link)["joined"].as_i64(), row(&open_link)["places"].as_i64()), (Some(1), None));
    // The campaign page makes one with places, and lists them.
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/invitations")))
        .form(&[("csrf_token", csrf.as_str()), ("places", "3")])
        .send()
        .await
        .expect("form");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let page = client.get(app.at(&format!("/admin/campaigns/{campaign}"))).send().await.expect("page");
    let page = page.text().await.expect("html");
    assert!(page.contains("5 joined of 5 places") && page.contains("0 joined of 3 places"), "{page}");
    assert!(page.contains("1 joined\n"), "the link without places: {page}");
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/invitations")))
        .form(&[("csrf_token", csrf.as_str()), ("places", "many")])
        .send()
        .await
        .expect("form");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
}

#[tokio::test]
async fn a_revoked_link_lets_its_workers_finish_and_see_their_code_but_start_nothing_new() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) = crate::fixtures::open_vton_campaign(
        &app,
        &admin,
        8,
        2,
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3,
               "max_questionnaires_per_worker": 2}),
    )
    .await;
    // One worker finished a questionnaire; another is in the middle of one.
    let finished = crate::fixtures::join(&app, &link, "finished-1").await;
    let (_, view) = finished.next(&app, &campaign).await;
    let code = finished.finish(&app, &view, 1).await["completion_code"].as_str().expect("code").to_owned();
    let midway = crate::fixtures::join(&app, &link, "midway-1").await;
    let (_, held) = midway.next(&app, &campaign).await;
    let held_id = held["assignment"]["id"].clone();
    let (status, _) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{campaign}/invitations/{link}/revoke"), None)
            .await;
    assert!(status.is_success());
    // Bots behind the leaked link start nothing new.
    let (status, body) = finished.next(&app, &campaign).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::CONFLICT, Some("invitation_revoked")), "{body}");
    // The worker midway reopens the link: back to their questionnaire, which they finish.
    let resp = midway.client.get(app.at(&format!("/join/{link}?worker_id=midway-1"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "those who joined come back");
    let (status, again) = midway.next(&app, &campaign).await;
    assert_eq!((status, &again["assignment"]["id"]), (StatusCode::OK, &held_id));
    assert!(midway.finish(&app, &again, 1).await["completion_code"].is_string());
    // Whoever finished sees their code again on reopening; a newcomer is turned away.
    let resp = finished.client.get(app.at(&format!("/join/{link}?worker_id=finished-1"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let page = finished.client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("page");
    let html = page.text().await.expect("html");
    assert!(html.contains(&code), "{html}");
    assert!(html.contains("was closed") && !html.contains("/start"), "no Start button, the reason instead: {html}");
    let resp = app.client().get(app.at(&format!("/join/{link}?worker_id=newcomer"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    // Told the study is closed, sent back to the platform, not to the staff's sign-in.
    let page = resp.text().await.expect("html");
    assert!(page.contains("closed to new participants") && page.contains("return the task"), "{page}");
    assert!(!page.contains("Back to the start"), "{page}");
}
