//! A kind's admin pages and forms answer only for campaigns of that kind:
//! any other campaign gets the 422 page (never a 500) and nothing is stored.

use crate::fixtures::{admin_token, logged_in_admin, new_campaign};
use crate::support::TestApp;
use reqwest::StatusCode;

/// The kinds with admin pages, and the campaign kind each page belongs to.
const PAGES: [(&str, &str); 4] =
    [("a100", "a100-lat"), ("vton", "vton"), ("vsd", "vsd"), ("fashionpedia", "fashionpedia")];

#[tokio::test]
async fn a_kinds_pages_and_forms_refuse_campaigns_of_other_kinds() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let (client, csrf) = logged_in_admin(&app).await;
    let mut campaigns = Vec::new();
    for (_, kind) in PAGES {
        campaigns.push((kind, new_campaign(&app, &token, kind, &format!("{kind} campaign")).await));
    }
    for (page, page_kind) in PAGES {
        for (kind, id) in &campaigns {
            let resp = client
                .get(app.at(&format!("/admin/campaigns/{id}/{page}")))
                .header("accept", "text/html")
                .send()
                .await
                .expect("page");
            let status = resp.status();
            let html = resp.text().await.expect("html");
            if *kind == page_kind {
                assert_eq!(status, StatusCode::OK, "the {page} page of its own kind's campaign: {html}");
            } else {
                assert_eq!(
                    status,
                    StatusCode::NOT_FOUND,
                    "the {page} page of a {kind} campaign: no such campaign of its kind"
                );
                assert!(html.contains("is not a"), "the page says what is wrong: {html}");
            }
        }
    }

    // Forms of one kind posted to a campaign of another: refused, nothing stored.
    let vton = &campaigns.iter().find(|(k, _)| *k == "vton").expect("vton").1;
    let a100 = &campaigns.iter().find(|(k, _)| *k == "a100-lat").expect("a100").1;
    let rankings = "model,query,candidate,rank\nm1,q1,c1,1\n";
    let forms: [(String, Vec<(&str, &str)>); 5] = [
        (format!("/admin/campaigns/{vton}/vsd/rankings"), vec![("content", rankings)]),
        (format!("/admin/campaigns/{vton}/vsd/pool"), vec![]),
        (format!("/admin/campaigns/{vton}/a100"), vec![("model", "m"), ("answers", "question_id,choice_id\n")]),
        (format!("/admin/campaigns/{a100}/vton/curation"), vec![]),
        (format!("/admin/campaigns/{a100}/vton/requeue"), vec![]),
    ];
    for (path, mut fields) in forms {
        fields.push(("csrf_token", csrf.as_str()));
        let resp = client.post(app.at(&path)).header("accept", "text/html").form(&fields).send().await.expect("post");
        assert_eq!(resp.status(), StatusCode::NOT_FOUND, "{path}: no such campaign of its kind");
    }
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM vsd_rankings").fetch_one(&app.pool).await.expect("rankings");
    assert_eq!(stored, 0, "no rankings stored in a VTON campaign");
}

/// Whether the form posting to `action` sits inside an open-on-demand
/// `<details class="confirm">` (the page asks before it acts).
fn asks_first(html: &str, action: &str) -> bool {
    let Some(at) = html.find(&format!("action=\"{action}\"")) else { panic!("no form to {action}: {html}") };
    let before = &html[..at];
    let opened = before.rfind("<details class=\"confirm\">");
    let closed = before.rfind("</details>");
    opened.is_some_and(|o| closed.is_none_or(|c| c < o))
}

#[tokio::test]
async fn destructive_actions_ask_first_and_say_what_they_do() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = serde_json::json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1,
                                    "annotators_per_questionnaire": 2});
    let (id, token) = crate::fixtures::open_vton_campaign(&app, &admin, 3, 1, config).await;
    let (client, _) = logged_in_admin(&app).await;
    let page = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page");
    let html = page.text().await.expect("html");
    for action in [
        format!("/admin/campaigns/{id}/delete"),
        format!("/admin/campaigns/{id}/invitations/{token}/revoke"),
        format!("/admin/campaigns/{id}/invitations/{token}/end"),
    ] {
        assert!(asks_first(&html, &action), "{action} asks first");
    }
    assert!(html.contains("Set closed…") && html.contains("cannot be undone"), "{html}");
    // Opening it again, a harmless change, is one click.
    assert!(!asks_first(&html, &format!("/admin/campaigns/{id}/archive")), "archiving is undone by unarchiving");

    // One worker submits (passing the sanity task, rated 1): paying is asked first too.
    let w = crate::fixtures::join(&app, &token, "paid-later").await;
    let (_, view) = w.next(&app, &id).await;
    w.finish(&app, &view, 1).await;
    let payouts = client.get(app.at(&format!("/admin/campaigns/{id}/payouts"))).send().await.expect("payouts");
    let html = payouts.text().await.expect("html");
    assert!(asks_first(&html, &format!("/admin/campaigns/{id}/payouts/paid")), "{html}");
    // The bonus is typed into the page, checked there by the rule the service applies.
    let pattern = format!("pattern=\"{}\"", atelier::core::crowd::payouts::AMOUNT_PATTERN);
    assert!(html.contains("name=\"amount\"") && html.contains(&pattern), "{html}");
    let tokens = client.get(app.at("/admin/tokens")).send().await.expect("tokens").text().await.expect("html");
    let token_id: String =
        sqlx::query_scalar("SELECT id::text FROM api_tokens LIMIT 1").fetch_one(&app.pool).await.expect("token");
    assert!(asks_first(&tokens, &format!("/admin/tokens/{token_id}/revoke")), "{tokens}");
}

#[tokio::test]
async fn the_generic_import_is_offered_only_where_it_works() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (client, _) = logged_in_admin(&app).await;
    for (kind, generic) in [("vton", true), ("a100-lat", true), ("vsd", false), ("fashionpedia", false)] {
        let id = new_campaign(&app, &admin, kind, &format!("import {kind}")).await;
        let html = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page");
        let html = html.text().await.expect("html");
        let form = format!("action=\"/admin/campaigns/{id}/import");
        assert_eq!(html.contains(&form), generic, "{kind}: the generic import box");
        if !generic {
            assert!(html.contains(&format!("href=\"/admin/campaigns/{id}/{kind}\"")), "{kind}: the way to its page");
        }
        assert!(html.contains("name=\"image\""), "{kind}: images can be uploaded");
    }
}

/// A stored configuration this build no longer reads (a setting since
/// removed, say) is an error naming the campaign wherever the kind's rules
/// are needed, never a silent default; the campaign page still opens and
/// says so where the batches would be formed, and saving the settings again
/// mends it.
#[tokio::test]
async fn a_configuration_that_no_longer_reads_is_named_never_defaulted() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let config = serde_json::json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1});
    let campaign = serde_json::json!({"kind": "vton", "name": "Spring try-ons", "config": config});
    let id = crate::fixtures::create_campaign(&app, &token, campaign).await;
    let mut items: Vec<serde_json::Value> = (0..6).map(|n| crate::fixtures::vton_item(n, None)).collect();
    items.push(crate::fixtures::vton_item(1000, Some(1)));
    let items = serde_json::json!({ "items": items });
    let (status, body) = crate::fixtures::api(
        &app,
        &token,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/items"),
        Some(items),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    sqlx::query("UPDATE campaigns SET config = config || '{\"a_setting_since_removed\": 1}' WHERE id = $1::uuid")
        .bind(&id)
        .execute(&app.pool)
        .await
        .expect("an old configuration");

    let batches_path = format!("/api/v1/admin/campaigns/{id}/batches");
    let form = || {
        crate::fixtures::api(&app, &token, reqwest::Method::POST, &batches_path, Some(serde_json::json!({ "seed": 1 })))
    };
    let (status, body) = form().await;
    assert_eq!(status, StatusCode::CONFLICT, "{body}");
    assert_eq!(body["error"]["code"], "stored_config_invalid", "{body}");
    let message = body["error"]["message"].as_str().expect("message");
    assert!(message.contains("Spring try-ons") && message.contains("a_setting_since_removed"), "{message}");
    let batches: i64 = sqlx::query_scalar("SELECT count(*) FROM batches WHERE campaign_id = $1::uuid")
        .bind(&id)
        .fetch_one(&app.pool)
        .await
        .expect("batches");
    assert_eq!(batches, 0, "nothing formed with defaults standing in");

    let (client, _) = logged_in_admin(&app).await;
    let page = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("campaign page");
    assert_eq!(page.status(), StatusCode::OK, "the page that mends it still opens");
    let html = page.text().await.expect("html");
    assert!(html.contains("no longer reads"), "the page says why no batches can be formed");
    let vton = client.get(app.at(&format!("/admin/campaigns/{id}/vton"))).send().await.expect("vton page");
    assert_eq!(vton.status(), StatusCode::CONFLICT);
    assert!(vton.text().await.expect("html").contains("Spring try-ons"), "the kind's page names the campaign");

    // Saved again without the old key (as the settings form does), it reads.
    sqlx::query("UPDATE campaigns SET config = config - 'a_setting_since_removed' WHERE id = $1::uuid")
        .bind(&id)
        .execute(&app.pool)
        .await
        .expect("mended");
    let (status, body) = form().await;
    assert_eq!(status, StatusCode::CREATED, "the new version is read afresh: {body}");
}
