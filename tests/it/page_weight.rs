//! Admin pages stay small at any campaign size: a 30,000-question A100
//! campaign's pages are each under 1 MB, long lists paged (their timing is
//! in BENCHMARKS.md, never in a test).

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, cut_release, get_text, join};
use crate::support::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};

/// The questions a big campaign has, as the issue measured it (30,004 there).
const QUESTIONS: usize = 30_000;
/// The largest page an admin is sent.
const MAX_PAGE_BYTES: usize = 1 << 20;

#[tokio::test]
async fn every_admin_page_of_a_30000_question_campaign_is_under_1_mb() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let questions: Vec<Value> = (0..QUESTIONS).map(|n| question(&format!("q{n:05}"))).collect();
    let (campaign, invitation) =
        a100_campaign(&app, &admin, "a100-lat", questions, json!({"participants": 3, "shuffle_questions": false}))
            .await;
    cut_release(&app, &admin, &campaign).await;
    // Two workers answer the first 150 questions alike.
    for who in ["AAA", "BBB"] {
        let w = join(&app, &invitation, who).await;
        let (status, view) = w.next(&app, &campaign).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        let id = view["assignment"]["id"].as_str().expect("assignment");
        for item in view["items"].as_array().expect("items").iter().take(150) {
            let choice = &item["payload"]["choices"][0]["id"];
            let body = json!({"item_id": item["id"], "answer": {"choice": choice}});
            let (status, body) = w.post(&app, &format!("/api/v1/work/assignments/{id}/responses"), body).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
    }
    cut_release(&app, &admin, &campaign).await;

    let first_question: uuid::Uuid =
        sqlx::query_scalar("SELECT id FROM items WHERE campaign_id = $1::uuid AND external_id = 'q00000'")
            .bind(&campaign)
            .fetch_one(&app.pool)
            .await
            .expect("a question");
    let pages = [
        "/admin".to_owned(),
        format!("/admin/campaigns/{campaign}/data"),
        format!("/admin/campaigns/{campaign}/data?page=300"),
        format!("/admin/campaigns/{campaign}/data?status=unanswered"),
        format!("/admin/campaigns/{campaign}/data/{first_question}"),
        format!("/admin/campaigns/{campaign}"),
        format!("/admin/campaigns/{campaign}/a100"),
        format!("/admin/campaigns/{campaign}/a100?page=300"),
        format!("/admin/campaigns/{campaign}/a100/pilot?min_consistency=0"),
        format!("/admin/campaigns/{campaign}/payouts"),
        format!("/admin/campaigns/{campaign}/preview"),
        format!("/admin/campaigns/{campaign}/releases/diff?from=1&to=2"),
    ];
    let mut sizes = Vec::new();
    for page in &pages {
        let html = get_text(&app, &admin, page).await;
        assert!(html.contains("</html>"), "{page} is a whole page: {}", &html[..html.len().min(500)]);
        assert!(html.len() < MAX_PAGE_BYTES, "{page} is {} bytes", html.len());
        sizes.push((page.clone(), html.len()));
    }
    println!("page sizes: {sizes:?}");

    // The data browser is paged; its answer filters read the whole campaign.
    let data = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/data?status=answered")).await;
    assert!(data.contains("150 item(s)") && data.contains("Rows 1–100 of 150"), "{}", &data[..data.len().min(3000)]);
    assert!(data.contains("2 of 2 agree"), "both workers chose the first choice");

    // The question list is paged: the first page and the last, with links between.
    let first = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/a100")).await;
    assert!(first.contains("Rows 1–100 of 30000"), "a pager on the first page");
    assert!(first.contains("page=2#questions") && !first.contains("rel=\"prev\""), "next, no previous");
    let rows = first.matches("<td class=\"bars\">").count();
    assert_eq!(rows, 100, "one page of questions");
    // Images, not ids: each question's outfit and choices, for this page only.
    assert!(first.contains(r#"<img src="/img/q00000/c1.png" alt="choice q00000-c1" loading="lazy""#), "{first}");
    assert!(first.contains(r#"<img src="/img/q00000/top.png" alt="outfit item 1 of q00000""#));
    // (No majority yet: the questionnaires are not submitted.)
    assert_eq!(first.matches("class=\"a100-thumb\"").count(), 100 * 7, "5 choices and 2 outfit items a question");
    assert!(first.contains("/data?q=q00000\""), "each question opens in the data browser");
    let last = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/a100?page=300")).await;
    assert!(last.contains("Rows 29901–30000 of 30000") && last.contains("page=299#questions"), "the last page");
    let diff = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/releases/diff?from=1&to=2")).await;
    // Votes in questionnaires not yet submitted count nowhere yet; the counts say so.
    assert!(
        diff.contains("<td><code>responses</code></td><td class=\"num\">0</td><td class=\"num\">300</td>"),
        "{diff}"
    );

    // The pilot's questions (those in submitted questionnaires) are paged too.
    let small: Vec<Value> = (0..120).map(|n| question(&format!("p{n:03}"))).collect();
    let (pilot, invitation) = a100_campaign(&app, &admin, "a100-lat", small, json!({"participants": 2})).await;
    for (who, pick) in [("CCC", 0), ("DDD", 1)] {
        let w = join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &pilot).await;
        w.finish_with(&app, &view, |item: &Value| json!({"choice": item["payload"]["choices"][pick]["id"]})).await;
    }
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{pilot}/a100/pilot?min_consistency=0")).await;
    assert!(page.contains("Rows 1–100 of 120") && page.contains("questions=2#questions"), "{page}");
    // Past the end shows the last page rather than an empty one.
    let beyond = get_text(&app, &admin, &format!("/admin/campaigns/{pilot}/a100/pilot?questions=9")).await;
    assert!(beyond.contains("Rows 101–120 of 120"), "the nearest page");
}
