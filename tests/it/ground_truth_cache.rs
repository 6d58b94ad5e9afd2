//! The ground-truth cache: its fingerprint sees every change a ground truth
//! depends on, and a page's summary kept beside it is shown while a new one
//! is computed, marked as such.

use crate::fixtures::{admin_token, api, join, logged_in_admin, open_vton_campaign};
use crate::support::TestApp;
use atelier::core::truth::aggregate_cache::fingerprint;
use reqwest::{Method, StatusCode};
use serde_json::json;
use uuid::Uuid;

/// Runs `sql` (with the campaign as `$1`) and asserts the fingerprint moved.
async fn changes(app: &TestApp, campaign: Uuid, what: &str, sql: &str, before: &mut String) {
    sqlx::query(sql).bind(campaign).execute(&app.pool).await.unwrap_or_else(|e| panic!("{what}: {e}"));
    let now = fingerprint(&app.pool, campaign).await.expect("fingerprint");
    assert_ne!(&now, before, "the fingerprint sees {what}");
    *before = now;
}

#[tokio::test]
async fn the_fingerprint_sees_every_change_a_ground_truth_depends_on() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    let (id, token) = open_vton_campaign(&app, &admin, 6, 1, config).await;
    let campaign: Uuid = id.parse().expect("uuid");
    let mut seen = fingerprint(&app.pool, campaign).await.expect("fingerprint");
    assert_eq!(fingerprint(&app.pool, campaign).await.expect("again"), seen, "nothing changed");

    // A worker's answers, one by one, through the API.
    let w = join(&app, &token, "fp-worker").await;
    let (_, view) = w.next(&app, &id).await;
    let assignment = view["assignment"]["id"].as_str().expect("assignment").to_owned();
    let items = view["items"].as_array().expect("items").clone();
    for item in &items[..2] {
        let body = json!({"item_id": item["id"], "answer": {"rating": 2}});
        let (status, b) = w.post(&app, &format!("/api/v1/work/assignments/{assignment}/responses"), body).await;
        assert_eq!(status, StatusCode::OK, "{b}");
        let now = fingerprint(&app.pool, campaign).await.expect("fingerprint");
        assert_ne!(now, seen, "a new answer");
        seen = now;
    }
    // The same answer changed (a later request: a later time).
    let body = json!({"item_id": items[0]["id"], "answer": {"rating": 3}, "change": true});
    let (status, b) = w.post(&app, &format!("/api/v1/work/assignments/{assignment}/responses"), body).await;
    assert_eq!(status, StatusCode::OK, "{b}");
    let now = fingerprint(&app.pool, campaign).await.expect("fingerprint");
    assert_ne!(now, seen, "a changed answer");
    seen = now;

    let one = "(SELECT min(id::text)::uuid FROM responses WHERE campaign_id = $1)";
    let steps = [
        ("an exclusion", format!("UPDATE responses SET excluded_reason = 'manual', excluded_at = now() WHERE id = {one}")),
        ("an exclusion cleared", format!("UPDATE responses SET excluded_reason = NULL, excluded_at = NULL WHERE id = {one}")),
        ("an expired lease", "UPDATE assignments SET state = 'expired' WHERE campaign_id = $1".to_owned()),
        ("an item's payload", "UPDATE items SET payload = payload || '{\"x\": 1}', updated_at = now() + interval '1 s' WHERE id = (SELECT min(id::text)::uuid FROM items WHERE campaign_id = $1)".to_owned()),
        ("a batch more", "INSERT INTO batches (id, campaign_id, position, overlap)
          SELECT gen_random_uuid(), $1, max(position) + 1, 1 FROM batches WHERE campaign_id = $1".to_owned()),
        ("a setting", "UPDATE campaigns SET lease_minutes = lease_minutes + 1 WHERE id = $1".to_owned()),
    ];
    for (what, sql) in &steps {
        changes(&app, campaign, what, sql, &mut seen).await;
    }
    // Another campaign's change is not this one's.
    let other =
        open_vton_campaign(&app, &admin, 6, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    assert!(!other.0.is_empty());
    assert_eq!(fingerprint(&app.pool, campaign).await.expect("fingerprint"), seen);
}

#[tokio::test]
async fn the_vton_page_shows_its_last_figures_while_new_ones_are_computed() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    let (id, token) = open_vton_campaign(&app, &admin, 3, 1, config).await;
    let (client, _) = logged_in_admin(&app).await;
    let url = app.at(&format!("/admin/campaigns/{id}/vton"));
    let page = || async { client.get(url.clone()).send().await.expect("page").text().await.expect("html") };
    // The first view waits a moment for its figures (a small campaign's
    // come well within it; a loaded machine may show "being computed").
    let first = loop {
        let html = page().await;
        if !html.contains("being computed") {
            break html;
        }
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(first.contains("questionnaires kept</td><td>0 of 0"), "{first}");
    assert!(!first.contains("being updated"), "nothing to update yet");

    // A worker finishes a questionnaire: the next view may show the figures
    // from before, saying so, until the new ones are ready.
    let w = join(&app, &token, "page-worker").await;
    let (_, view) = w.next(&app, &id).await;
    w.finish(&app, &view, 1).await;
    let mut views = 0;
    let html = loop {
        let html = page().await;
        views += 1;
        if !html.contains("being updated") {
            break html;
        }
        assert!(html.contains("questionnaires kept</td><td>0 of 0"), "the old figures, marked: {html}");
        assert!(views < 200, "the new figures come");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    };
    assert!(views >= 2, "the first view after the change showed the last figures");
    assert!(html.contains("questionnaires kept</td><td>0 of 1"), "{html}");

    // Curation refused (the campaign is archived): the page says so beside the form.
    let (status, b) = api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/archive"), None).await;
    assert!(status.is_success(), "{b}");
    let csrf = crate::fixtures::csrf_in(&html);
    let refused = client
        .post(app.at(&format!("/admin/campaigns/{id}/vton/curation")))
        .form(&[("csrf_token", csrf.as_str()), ("preset", "paper")])
        .send()
        .await
        .expect("curation");
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let html = refused.text().await.expect("html");
    assert!(html.contains("Nothing was recorded: this campaign is archived"), "{html}");
    assert!(html.contains("id=\"curation\""), "{html}");
}

/// A summary that takes a second to derive, as a VTON-QBench-size ground
/// truth's figures do.
fn slow_summary(_: &dyn atelier::core::kind::contract::TaskKind, json: &[u8]) -> atelier::error::Result<usize> {
    std::thread::sleep(std::time::Duration::from_millis(1000));
    Ok(json.len())
}

#[tokio::test]
async fn a_first_summary_that_takes_long_is_shown_as_being_computed_and_kept_when_ready() {
    use atelier::core::truth::ground_truth::{summary, Freshness};
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1});
    let (id, _) = open_vton_campaign(&app, &admin, 3, 1, config).await;
    let campaign =
        atelier::core::campaign::campaigns::get(&app.pool, id.parse().expect("uuid")).await.expect("campaign");
    let (kinds, caches) =
        (atelier::kinds::registry(), std::sync::Arc::new(atelier::core::truth::caches::Caches::default()));
    let (value, freshness) = summary(&app.pool, &kinds, &caches, &campaign, "slow", slow_summary).await.expect("first");
    // Not waited for: it takes four times the first wait.
    assert!(value.is_none() && freshness == Freshness::Computing, "{freshness:?}");
    assert!(freshness.notice().is_some_and(|n| n.contains("being computed")));
    // It goes on being derived, once, and the next view after it is ready shows it.
    let mut views = 0;
    let value = loop {
        tokio::time::sleep(std::time::Duration::from_millis(200)).await;
        views += 1;
        let (value, freshness) =
            summary(&app.pool, &kinds, &caches, &campaign, "slow", slow_summary).await.expect("again");
        if let Some(value) = value {
            assert_eq!(freshness, Freshness::Current);
            break value;
        }
        assert_eq!(freshness, Freshness::Computing);
        assert!(views < 50, "the summary comes");
    };
    assert!(*value > 0, "derived from the ground truth's text");
}
