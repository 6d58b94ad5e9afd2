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
