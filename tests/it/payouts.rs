//! Payouts by worker id: recommendations, the platforms' bulk files,
//! marking payouts done, and background answers by worker id.

use crate::a100_service::{a100_campaign, question};
use crate::fixtures::{admin_token, api, get_text, join};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

#[tokio::test]
async fn payouts_recommend_by_attention_checks_and_export_for_prolific_and_mturk() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = three_workers(&app, &admin).await;
    let (status, rows) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/payouts"), None).await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    let row = |w: &str| rows.as_array().expect("rows").iter().find(|r| r["worker_id"] == w).expect("row").clone();
    assert_eq!(row("PRO_1")["recommendation"], "approve");
    assert_eq!(row("PRO_1")["checks_passed"], 1);
    let third: Value = row("PRO_3");
    assert_eq!(third["recommendation"], "reject");
    assert_eq!(third["reason"], "Failed 1 of 1 attention checks");
    assert_eq!(third["exclusions"]["attention_check_failed"], 2);
    assert_eq!(third["submitted"], 1);

    let base = format!("/api/v1/admin/campaigns/{campaign}/payouts.csv");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve")).await, "PRO_1\nPRO_2\n");
    assert_eq!(
        get_text(&app, &admin, &format!("{base}?format=prolific-bonus&amount=0.50")).await,
        "PRO_1,0.50\nPRO_2,0.50\n"
    );
    // Workers who came without an MTurk assignment are not MTurk's to approve.
    let mturk = get_text(&app, &admin, &format!("{base}?format=mturk")).await;
    assert_eq!(mturk, "HITId,AssignmentId,WorkerId,Approve,Reject\n");
    let (status, body) =
        api(&app, &admin, Method::GET, &format!("{base}?format=prolific-bonus&amount=lots"), None).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_amount")));
    let full = get_text(&app, &admin, &base).await;
    assert!(
        full.starts_with("worker_id,annotator,questionnaires_submitted,seconds,checks_passed,checks_failed,"),
        "{full}"
    );

    // Paid workers drop out of the next bulk file.
    let (status, marked) = api(
        &app,
        &admin,
        Method::POST,
        &format!("/api/v1/admin/campaigns/{campaign}/payouts/paid"),
        Some(json!({"worker_ids": ["PRO_1"]})),
    )
    .await;
    assert_eq!((status, marked["marked"].as_u64()), (StatusCode::OK, Some(1)));
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve")).await, "PRO_2\n");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve&all=true")).await, "PRO_1\nPRO_2\n");

    let background = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/background.csv")).await;
    assert_eq!(background, "worker_id,fashion\nPRO_1,yes\nPRO_2,no\nPRO_3,no\n");
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/payouts")).await;
    assert!(page.contains("<code>PRO_3</code>") && page.contains("Failed 1 of 1 attention checks"), "{page}");
    assert!(page.contains("Mark the 1 approved, unpaid worker(s) as paid"), "{page}");
    // Workers see none of it.
    let w = join(&app, &invitation, "PRO_4").await;
    let (status, _) = w.get(&app, &format!("/api/v1/admin/campaigns/{campaign}/payouts")).await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// An A100 campaign with an attention check: PRO_1 and PRO_2 pass it,
/// PRO_3 fails it; each submits one questionnaire with a background answer.
async fn three_workers(app: &TestApp, admin: &str) -> (String, String) {
    let mut check = question("check");
    check["attention_check"] = json!(true);
    check["answer"] = json!("check-c1");
    let config = json!({"participants": 3, "background": [{"id": "fashion", "question": "Fashion background?", "options": ["yes", "no"]}]});
    let (campaign, invitation) = a100_campaign(app, admin, "a100-lat", vec![question("q1"), check], config).await;
    for (who, attention, fashion) in
        [("PRO_1", "check-c1", "yes"), ("PRO_2", "check-c1", "no"), ("PRO_3", "check-c4", "no")]
    {
        let w = join(app, &invitation, who).await;
        let (status, view) = w
            .post(
                app,
                &format!("/api/v1/work/campaigns/{campaign}/assignment"),
                json!({"background": {"fashion": fashion}}),
            )
            .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        w.finish_with(app, &view, |item| {
            let first = item["payload"]["choices"][0]["id"].as_str().expect("id");
            json!({"choice": if first.starts_with("check") { attention } else { "q1-c2" }})
        })
        .await;
    }
    (campaign, invitation)
}

#[tokio::test]
async fn an_admin_decides_per_worker_on_the_page_and_every_file_follows() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, _) = three_workers(&app, &admin).await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let page = client.get(app.at(&format!("/admin/campaigns/{campaign}/payouts"))).send().await.expect("page");
    let html = page.text().await.expect("html");
    let third = sqlx::query_scalar::<_, uuid::Uuid>("SELECT id FROM users WHERE external_id = 'PRO_3'")
        .fetch_one(&app.pool)
        .await
        .expect("PRO_3");
    assert!(html.contains(&format!(r#"<tr id="worker-{third}" class="rejected">"#)), "rejected stand out: {html}");
    let decide = |fields: Vec<(&'static str, &'static str)>| {
        let (client, csrf, url) =
            (client.clone(), csrf.clone(), app.at(&format!("/admin/campaigns/{campaign}/payouts/decision")));
        async move {
            let mut form = vec![("csrf_token", csrf.as_str())];
            form.extend(fields);
            let resp = client.post(url).form(&form).send().await.expect("decide");
            (resp.status(), resp.text().await.expect("body"))
        }
    };
    // PRO_3's failed check is overruled, with a bonus.
    let (status, _) = decide(vec![("worker_id", "PRO_3"), ("decision", "approve"), ("bonus", "0.25")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    // A rejection without a reason is refused in the row, the form kept.
    let (status, html) =
        decide(vec![("worker_id", "PRO_2"), ("decision", "reject"), ("reason", " "), ("bonus", "0.30")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(r#"<p class="error" role="alert">a rejection needs the reason"#), "{html}");
    assert!(html.contains(r#"value="reject" checked"#) && html.contains(r#"value="0.30""#), "{html}");
    let decided: i64 =
        sqlx::query_scalar("SELECT count(*) FROM payout_decisions").fetch_one(&app.pool).await.expect("n");
    assert_eq!(decided, 1, "the refused decision stored nothing");
    let (status, _) =
        decide(vec![("worker_id", "PRO_2"), ("decision", "reject"), ("reason", "Answered at random")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);

    // Every file follows the decisions; a worker's own bonus wins.
    let base = format!("/api/v1/admin/campaigns/{campaign}/payouts.csv");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve")).await, "PRO_1\nPRO_3\n");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-bonus")).await, "PRO_3,0.25\n");
    assert_eq!(
        get_text(&app, &admin, &format!("{base}?format=prolific-bonus&amount=0.50")).await,
        "PRO_1,0.50\nPRO_3,0.25\n"
    );
    let full = get_text(&app, &admin, &base).await;
    assert!(
        full.lines().next().expect("header").contains(",confusable_with,decision,decision_reason,bonus,"),
        "{full}"
    );
    assert!(full.lines().any(|l| l.starts_with("PRO_2,") && l.contains(",reject,Answered at random,,")), "{full}");

    // The API takes the same decisions: cleared, PRO_3 is back to the recommendation.
    let path = format!("/api/v1/admin/campaigns/{campaign}/payouts/decision");
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(json!({"worker_id": "PRO_3"}))).await;
    assert_eq!(status, StatusCode::NO_CONTENT, "{body}");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve")).await, "PRO_1\n");
    let (status, body) =
        api(&app, &admin, Method::POST, &path, Some(json!({"worker_id": "PRO_1", "bonus": "1.234"}))).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_amount")));
    let (status, _) = api(&app, &admin, Method::POST, &path, Some(json!({"worker_id": "nobody"}))).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn prolific_and_mturk_links_carry_their_ids_into_the_payouts_file() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) = small_vton_campaign(&app, &admin).await;
    // As Prolific appends them (no worker_id): the worker id is PROLIFIC_PID.
    let prolific = {
        let client = app.client();
        let path = format!("/join/{link}?PROLIFIC_PID=5f0c1a2b3c4d5e6f7a8b9c0d&STUDY_ID=study-7&SESSION_ID=sess-9");
        let resp = client.get(app.at(&path)).send().await.expect("join");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        let me: Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
        assert_eq!(me["user"]["external_id"], "5f0c1a2b3c4d5e6f7a8b9c0d");
        crate::fixtures::WorkerSession {
            client,
            csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
            user_id: me["user"]["id"].as_str().expect("id").to_owned(),
        }
    };
    let (_, view) = prolific.next(&app, &campaign).await;
    prolific.finish(&app, &view, 1).await;
    let mturk = app.client();
    let resp = mturk
        .get(app.at(&format!("/join/{link}?workerId=A1B2C3&assignmentId=3XYZ&hitId=3HIT")))
        .send()
        .await
        .expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let me: Value = mturk.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
    let mturk = crate::fixtures::WorkerSession {
        client: mturk,
        csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
        user_id: me["user"]["id"].as_str().expect("id").to_owned(),
    };
    let (_, view) = mturk.next(&app, &campaign).await;
    mturk.finish(&app, &view, 1).await;
    // MTurk's preview (no assignment yet) is no row of MTurk's file.
    let preview = format!("/join/{link}?workerId=A9PREVIEW&assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=3HIT");
    app.client().get(app.at(&preview)).send().await.expect("preview");
    // MTurk's batch-results layout, matched on AssignmentId: MTurk workers only.
    let file = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/payouts.csv?format=mturk")).await;
    let lines: Vec<&str> = file.lines().collect();
    assert_eq!(lines.len(), 2, "{file}");
    assert_eq!(lines[0], "HITId,AssignmentId,WorkerId,Approve,Reject");
    assert!(lines[1] == "3HIT,3XYZ,A1B2C3,x," || lines[1].starts_with("3HIT,3XYZ,A1B2C3,,"), "{file}");
    let csv = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/payouts.csv?format=full")).await;
    let header = csv.lines().next().expect("header");
    assert!(header.ends_with(",study_id,session_id,assignment_id,hit_id"), "{header}");
    let row = csv.lines().find(|l| l.starts_with("5f0c1a2b3c4d5e6f7a8b9c0d,")).expect("prolific row");
    assert!(row.ends_with(",study-7,sess-9,,"), "{row}");
    // A link without any id says which parameter each platform sends.
    let resp = app.client().get(app.at(&format!("/join/{link}"))).send().await.expect("join");
    assert!(resp.text().await.expect("html").contains("PROLIFIC_PID"));
}

#[tokio::test]
async fn the_study_sets_its_completion_code_and_address_and_workers_are_sent_there() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) = small_vton_campaign(&app, &admin).await;
    let path = format!("/api/v1/admin/campaigns/{campaign}/completion");
    for bad in ["javascript:alert(1)", "http://evil.example/p", "https://", "https:// x", "HTTP://evil.example"] {
        let (status, body) = api(&app, &admin, Method::PUT, &path, Some(json!({"url": bad}))).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_completion_url")),
            "{bad}"
        );
    }
    let url = "https://app.prolific.com/submissions/complete?cc=C1A2B3C4";
    let (status, body) = api(&app, &admin, Method::PUT, &path, Some(json!({"code": "C1A2B3C4", "url": url}))).await;
    assert_eq!((status, body), (StatusCode::OK, json!({"code": "C1A2B3C4", "url": url})));
    let w = join(&app, &link, "PRO_done").await;
    let (_, view) = w.next(&app, &campaign).await;
    let done = w.finish(&app, &view, 1).await;
    assert_eq!((done["completion_code"].as_str(), done["completion_url"].as_str()), (Some("C1A2B3C4"), Some(url)));
    // On the page, submitting sends the worker to the platform's address.
    let page = join(&app, &link, "PRO_page").await;
    let (_, view) = page.next(&app, &campaign).await;
    let id = view["assignment"]["id"].as_str().expect("id").to_owned();
    for item in view["items"].as_array().expect("items") {
        let body = json!({"item_id": item["id"], "answer": {"rating": 2}});
        let (status, _) = page.post(&app, &format!("/api/v1/work/assignments/{id}/responses"), body).await;
        assert_eq!(status, StatusCode::OK);
    }
    let resp = page
        .client
        .post(app.at(&format!("/work/a/{id}/complete")))
        .form(&[("csrf_token", page.csrf.as_str())])
        .send()
        .await
        .expect("complete");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], url);
}

/// An open VTON campaign of two questionnaires (4 tasks and a sanity task each, 3 workers each) and its link.
async fn small_vton_campaign(app: &TestApp, admin: &str) -> (String, String) {
    let config =
        json!({"tasks_per_questionnaire": 5, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 3});
    crate::fixtures::open_vton_campaign(app, admin, 4, 1, config).await
}

#[tokio::test]
async fn worker_ids_that_look_alike_are_flagged_on_each_other() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_vton_campaign(&app, &admin).await;
    // The real one, one with a U+2010 hyphen and one with a Cyrillic "е" (three places in the study).
    let ids = ["demo-worker-1", "demo\u{2010}worker-1", "d\u{0435}mo-worker-1"];
    for id in ids {
        let url = format!("/join/{invitation}?worker_id={}", urlencode(id));
        let client = app.client();
        assert_eq!(client.get(app.at(&url)).send().await.expect("join").status(), StatusCode::SEE_OTHER, "{id}");
        let me: Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
        let worker = crate::fixtures::WorkerSession {
            client,
            csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
            user_id: me["user"]["id"].as_str().expect("id").to_owned(),
        };
        let (_, view) = worker.next(&app, &campaign).await;
        worker.finish(&app, &view, 1).await;
    }
    let (status, rows) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/payouts"), None).await;
    assert_eq!(status, StatusCode::OK, "{rows}");
    let flagged = |id: &str| -> Vec<String> {
        let row = rows.as_array().expect("rows").iter().find(|r| r["worker_id"] == id).expect("row");
        serde_json::from_value(row["confusable_with"].clone()).expect("list")
    };
    assert_eq!(flagged("demo-worker-1").len(), 2, "both look-alikes are named");
    assert!(flagged("demo\u{2010}worker-1").contains(&"demo-worker-1".to_owned()));
    assert_eq!(crate::fixtures::count_distinct_workers(&app).await, 3, "three workers, each paid apart");
    let csv = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/payouts.csv")).await;
    let header = csv.lines().next().expect("header");
    assert!(header.contains(",paid_at,confusable_with,"), "{csv}");
    let real = csv.lines().find(|l| l.starts_with("demo-worker-1,")).expect("row");
    assert!(
        real.contains("demo\u{2010}worker-1 d\u{0435}mo-worker-1")
            || real.contains("d\u{0435}mo-worker-1 demo\u{2010}worker-1"),
        "{real}"
    );
}

fn urlencode(text: &str) -> String {
    text.bytes()
        .map(|b| if b.is_ascii_alphanumeric() || b == b'-' { (b as char).to_string() } else { format!("%{b:02X}") })
        .collect()
}

#[tokio::test]
async fn worker_ids_that_are_formulas_or_shift_columns_never_reach_the_prolific_files() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"participants": 4});
    let (campaign, invitation) = a100_campaign(&app, &admin, "a100-lat", vec![question("q1")], config).await;
    let forged = ["=HYPERLINK(\"https://evil.example\",\"x\")", "=cmd|' /C calc'!A0", "5f3c0000000000000000aa00,99.00"];
    for who in forged.iter().copied().chain(["5f3c0000000000000000aa01"]) {
        let client = app.client();
        let resp =
            client.get(app.at(&format!("/join/{invitation}"))).query(&[("worker_id", who)]).send().await.expect("join");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{who}");
        let me: Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
        let w = crate::fixtures::WorkerSession {
            client,
            csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
            user_id: me["user"]["id"].as_str().expect("id").to_owned(),
        };
        let (status, view) = w.post(&app, &format!("/api/v1/work/campaigns/{campaign}/assignment"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        w.finish_with(&app, &view, |_| json!({"choice": "q1-c2"})).await;
    }
    let base = format!("/api/v1/admin/campaigns/{campaign}/payouts.csv");
    assert_eq!(get_text(&app, &admin, &format!("{base}?format=prolific-approve")).await, "5f3c0000000000000000aa01\n");
    assert_eq!(
        get_text(&app, &admin, &format!("{base}?format=prolific-bonus&amount=0.50")).await,
        "5f3c0000000000000000aa01,0.50\n"
    );
    // The page lists them as needing attention (escaped), instead.
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{campaign}/payouts")).await;
    let attention = &page[page.find("id=\"needs-attention\"").expect("a notice")..];
    let attention = &attention[..attention.find("</div>").expect("end")];
    assert!(attention.contains("3 approved worker id(s)"), "{attention}");
    assert!(attention.contains("<code>5f3c0000000000000000aa00,99.00</code>"), "{attention}");
    assert!(attention.contains("=HYPERLINK(&#34;https://evil.example&#34;,&#34;x&#34;)"), "{attention}");
    // The full table still has everyone, with formulas neutralised.
    let full = get_text(&app, &admin, &base).await;
    assert!(!full.lines().any(|l| l.starts_with('=')), "{full}");
    assert!(full.contains("\"'=HYPERLINK(") && full.contains("'=cmd|"), "{full}");
}

#[tokio::test]
async fn the_campaign_page_sets_the_completion_and_hands_out_links_ready_to_paste() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, link) = small_vton_campaign(&app, &admin).await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let path = format!("/admin/campaigns/{campaign}/completion");
    // Refused: the reason beside the form, what was typed kept, nothing saved.
    let typed = "http://app.prolific.com/submissions/complete?cc=C1A2B3C4";
    let resp = client
        .post(app.at(&path))
        .form(&[("csrf_token", csrf.as_str()), ("code", "C1A2B3C4"), ("url", typed)])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    let section = &html[html.find("id=\"completion\"").expect("the completion form")..];
    let section = &section[..section.find("</form>").expect("its end")];
    assert!(section.contains("Not saved: the completion address must start with https://"), "{section}");
    assert!(section.replace("&#38;", "&").contains(&format!("value=\"{typed}\"")), "{section}");
    let (_, body) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert!(body["completion_url"].is_null(), "{body}");
    // Saved: the API and the page agree.
    let url = "https://app.prolific.com/submissions/complete?cc=C1A2B3C4";
    let resp = client
        .post(app.at(&path))
        .form(&[("csrf_token", csrf.as_str()), ("code", " C1A2B3C4 "), ("url", url)])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let (_, body) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!((body["completion_code"].as_str(), body["completion_url"].as_str()), (Some("C1A2B3C4"), Some(url)));
    // Each live link as Prolific's study URL and MTurk's ExternalQuestion, with copy buttons.
    let page = client.get(app.at(&format!("/admin/campaigns/{campaign}"))).send().await.expect("page");
    let html = page.text().await.expect("html").replace("&#38;", "&").replace("&#60;", "<").replace("&#62;", ">");
    assert!(html.contains("value=\"C1A2B3C4\""), "the field shows the code");
    let joined = format!("/join/{link}");
    let prolific = format!(
        "{joined}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
    );
    assert!(html.contains(&prolific), "{html}");
    assert!(html.contains(&format!("<ExternalURL>{}{joined}</ExternalURL>", app.at(""))), "{html}");
    assert!(html.contains("data-copy=\"prolific-1\"") && html.contains("id=\"mturk-1\""), "{html}");
    // The Prolific URL, as Prolific fills it in, lets the worker in.
    let filled = format!("{joined}?PROLIFIC_PID=5f0c1a2b3c4d5e6f7a8b9c0d&STUDY_ID=s1&SESSION_ID=x1");
    let resp = app.client().get(app.at(&filled)).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
}
