//! Crowd links as the platforms use them: MTurk's ExternalQuestion end to
//! end as MTurk opens our link (the preview with no session, no identity and
//! one sample that is never a sanity task; the accepted HIT inside MTurk's
//! frame sent to a tab of its own; the work at the top; the HIT submitted to
//! `turkSubmitTo` with the assignment id), a generic platform's own id
//! parameter, the admin's study preview, and a leaked link's sessions ended.

use crate::fixtures::{admin_token, csrf_in, open_vton_campaign};
use crate::support::TestApp;
use reqwest::StatusCode;
use serde_json::{json, Value};

const SANDBOX: &str = "https%3A%2F%2Fworkersandbox.mturk.com";

/// A crowd campaign of 3 images and one sanity task, 2 workers per questionnaire.
async fn small_campaign(app: &TestApp, admin: &str) -> (String, String) {
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2});
    open_vton_campaign(app, admin, 3, 1, config).await
}

/// Presses Start on the campaign's landing page as the worker's browser
/// would, with the extra form fields given; the answer.
async fn press_start(
    app: &TestApp,
    client: &reqwest::Client,
    campaign: &str,
    csrf: &str,
    extra: &[(&str, &str)],
) -> reqwest::Response {
    let mut form = vec![("csrf_token", csrf)];
    form.extend_from_slice(extra);
    client.post(app.at(&format!("/work/{campaign}/start"))).form(&form).send().await.expect("start")
}

/// Presses Start and opens the task page it leads to: the page's address,
/// the assignment and the item its form answers.
async fn open_first_task(
    app: &TestApp,
    client: &reqwest::Client,
    campaign: &str,
    csrf: &str,
) -> (String, String, String) {
    let resp = press_start(app, client, campaign, csrf, &[]).await;
    let task = resp.headers()["location"].to_str().expect("location").to_owned();
    let assignment = task.trim_start_matches("/work/a/").to_owned();
    let page = client.get(app.at(&task)).send().await.expect("task").text().await.expect("html");
    let item = crate::fixtures::item_on_page(&page);
    (task, assignment, item)
}

async fn users(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.pool).await.expect("count")
}

#[tokio::test]
async fn an_mturk_hit_previews_runs_in_its_own_tab_and_is_submitted_to_mturk() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let before = users(&app).await;

    // The preview: instructions and a sample that cannot be answered; no cookie, nobody created.
    let preview = app.client();
    let resp = preview
        .get(app.at(&format!(
            "/join/{invitation}?assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE&hitId=H1&turkSubmitTo={SANDBOX}"
        )))
        .header("sec-fetch-dest", "iframe")
        .send()
        .await
        .expect("preview");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get("set-cookie").is_none(), "a preview sets no cookie");
    let csp = resp.headers()["content-security-policy"].to_str().expect("csp").to_owned();
    assert!(csp.contains("frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com"), "{csp}");
    assert!(resp.headers().get("x-frame-options").is_none(), "no DENY that would contradict the policy");
    let html = resp.text().await.expect("html");
    assert!(html.contains("This is a preview") && html.contains("<fieldset class=\"preview\" disabled>"), "{html}");
    assert!(html.contains("/img/t/0.png"), "the first ordinary item is the sample: {html}");
    assert!(!html.contains("/img/t/1000.png"), "never the sanity task");
    assert_eq!(users(&app).await, before, "a preview creates no identity");

    // Accepted, inside MTurk's frame: the task opens in a tab of its own, still nobody created.
    let accepted = format!("/join/{invitation}?assignmentId=A-77&hitId=H1&workerId=AWORKER1&turkSubmitTo={SANDBOX}");
    let resp = app.client().get(app.at(&accepted)).header("sec-fetch-dest", "iframe").send().await.expect("frame");
    assert_eq!(resp.status(), StatusCode::OK);
    assert!(resp.headers().get("set-cookie").is_none());
    let html = resp.text().await.expect("html");
    assert!(html.contains("target=\"_blank\"") && html.contains("workerId=AWORKER1"), "{html}");
    assert_eq!(users(&app).await, before);

    // At the top: the worker joins, works through the questionnaire on the pages and submits.
    let worker = app.client();
    let resp = worker.get(app.at(&accepted)).header("sec-fetch-dest", "document").send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let landing = worker.get(app.at(&format!("/work/{campaign}"))).send().await.expect("landing");
    let csrf = csrf_in(&landing.text().await.expect("html"));
    let resp = press_start(&app, &worker, &campaign, &csrf, &[]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let task_url = resp.headers()["location"].to_str().expect("location").to_owned();
    let assignment = task_url.trim_start_matches("/work/a/").to_owned();
    let me: Value = worker.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
    let api_csrf = me["csrf_token"].as_str().expect("csrf").to_owned();
    let view: Value = worker
        .get(app.at(&format!("/api/v1/work/assignments/{assignment}")))
        .send()
        .await
        .expect("view")
        .json()
        .await
        .expect("json");
    for item in view["items"].as_array().expect("items") {
        let resp = worker
            .post(app.at(&format!("/api/v1/work/assignments/{assignment}/responses")))
            .header("x-csrf-token", &api_csrf)
            .json(&json!({"item_id": item["id"], "answer": {"rating": 1}}))
            .send()
            .await
            .expect("answer");
        assert_eq!(resp.status(), StatusCode::OK);
    }
    let resp = worker
        .post(app.at(&format!("/work/a/{assignment}/complete")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("complete");
    assert_eq!(resp.headers()["location"], format!("/work/a/{assignment}/done").as_str());
    let done = worker.get(app.at(&format!("/work/a/{assignment}/done"))).send().await.expect("done");
    let csp = done.headers()["content-security-policy"].to_str().expect("csp").to_owned();
    assert!(csp.contains("form-action 'self' https://www.mturk.com https://workersandbox.mturk.com"), "{csp}");
    let html = done.text().await.expect("html");
    assert!(
        html.contains("<form method=\"post\" action=\"https://workersandbox.mturk.com/mturk/externalSubmit\">")
            && html.contains("name=\"assignmentId\" value=\"A-77\""),
        "the HIT is submitted to MTurk with its assignment: {html}"
    );

    // The payouts file has the MTurk ids of the visit.
    let payouts =
        crate::fixtures::get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{campaign}/payouts.csv")).await;
    assert!(payouts.contains("AWORKER1") && payouts.contains("A-77"), "{payouts}");
}

#[tokio::test]
async fn a_link_naming_another_site_as_turk_submit_to_is_never_submitted_there() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, invitation) = small_campaign(&app, &admin).await;
    let worker = app.client();
    let link = format!(
        "/join/{invitation}?assignmentId=A-1&hitId=H&workerId=AWORKER2&turkSubmitTo=https%3A%2F%2Fevil.example"
    );
    assert_eq!(worker.get(app.at(&link)).send().await.expect("join").status(), StatusCode::SEE_OTHER);
    let kept: Option<Value> = sqlx::query_scalar(
        "SELECT j.platform_ids FROM invitation_joins j JOIN users u ON u.id = j.worker_id WHERE u.external_id = 'AWORKER2'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("join row");
    let kept = kept.expect("ids kept");
    assert_eq!(kept["assignment_id"], "A-1");
    assert!(kept.get("turk_submit_to").is_none(), "only MTurk's own origins are kept: {kept}");
}

#[tokio::test]
async fn a_generic_link_reads_the_worker_id_under_the_name_the_admin_gave() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, _) = small_campaign(&app, &admin).await;
    let path = format!("/api/v1/admin/campaigns/{campaign}/invitations");
    let links = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM invitations").fetch_one(&app.pool).await.expect("count")
    };
    let before = links().await;
    for bad in ["1participant", "has space", "x".repeat(65).as_str(), "a=b"] {
        let (status, body) =
            crate::fixtures::api(&app, &admin, reqwest::Method::POST, &path, Some(json!({"id_param": bad}))).await;
        assert_eq!(
            (status, body["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_id_param"))
        );
    }
    assert_eq!(links().await, before, "a refused link is not made");
    let (status, link) =
        crate::fixtures::api(&app, &admin, reqwest::Method::POST, &path, Some(json!({"id_param": "participant"})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{link}");
    let url = link["url"].as_str().expect("url");
    assert!(url.ends_with("?participant="), "{url}");
    let token = link["token"].as_str().expect("token");

    let resp = app.client().get(app.at(&format!("/join/{token}?participant=P-42&other=1"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let joined: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE external_id = 'P-42'")
        .fetch_one(&app.pool)
        .await
        .expect("count");
    assert_eq!(joined, 1, "the id came from the link's own parameter");
    // Without it the page says which name it expects.
    let resp = app.client().get(app.at(&format!("/join/{token}?other=1"))).send().await.expect("join");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.text().await.expect("html").contains("?participant=..."));
    // The campaign's list shows each link's parameter.
    let (_, listed) = crate::fixtures::api(&app, &admin, reqwest::Method::GET, &path, None).await;
    assert!(listed.as_array().expect("links").iter().any(|l| l["id_param"] == "participant"), "{listed}");
}

#[tokio::test]
async fn the_start_for_a_worker_is_their_campaign_never_the_staff_login() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let worker = crate::fixtures::join(&app, &invitation, "start-worker").await;
    let resp = worker.client.get(app.at("/")).send().await.expect("start");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], format!("/work/{campaign}").as_str());
    let anonymous = app.client().get(app.at("/")).send().await.expect("start");
    assert_eq!(anonymous.headers()["location"], "/login");
}

#[tokio::test]
async fn an_admin_previews_the_study_as_a_worker_sees_it_and_nothing_is_recorded() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 2,
        "background": [{"id": "experience", "question": "How often do you shop for clothes online?",
                        "options": ["Rarely", "Monthly", "Weekly"]}]});
    let (campaign, invitation) = open_vton_campaign(&app, &admin, 3, 1, config).await;
    let counts = || async {
        sqlx::query_as::<_, (i64, i64, i64)>(
            "SELECT (SELECT count(*) FROM users), (SELECT count(*) FROM assignments), (SELECT count(*) FROM responses)",
        )
        .fetch_one(&app.pool)
        .await
        .expect("counts")
    };
    let intro = json!({"text": "Rate each try-on.", "estimated_minutes": 12, "pay": "£1.50",
        "consent": "Your ratings are published under a pseudonym."});
    let path = format!("/api/v1/admin/campaigns/{campaign}/intro");
    let (status, _) = crate::fixtures::api(&app, &admin, reqwest::Method::PUT, &path, Some(intro)).await;
    assert_eq!(status, StatusCode::OK);
    let before = counts().await;
    let page = |task: &'static str| {
        let (app, admin, campaign) = (&app, &admin, campaign.clone());
        async move {
            let query = if task.is_empty() { String::new() } else { format!("?task={task}") };
            reqwest::Client::new()
                .get(app.at(&format!("/admin/campaigns/{campaign}/preview{query}")))
                .bearer_auth(admin)
                .send()
                .await
                .expect("preview")
        }
    };
    // The first screen is the study's page as a new worker meets it: time
    // and pay, the introduction, the background questions and the consent,
    // disabled, in the landing page's order; then the first task.
    let landing = page("").await.text().await.expect("html");
    let at = |text: &str| landing.find(text).unwrap_or_else(|| panic!("{text} is missing: {landing}"));
    let order = [
        at("12 minutes"),
        at("£1.50"),
        at("Rate each try-on."),
        at("How it works"),
        at("<fieldset class=\"preview\" disabled>"),
        at("About you"),
        at("How often do you shop for clothes online?"),
        at("Your ratings are published under a pseudonym."),
        at("?task=1"),
    ];
    assert!(order.windows(2).all(|w| w[0] < w[1]), "the landing page's order: {order:?}");
    assert!(!landing.contains("Question 1 of"), "no task on the first screen");
    let first = page("1").await.text().await.expect("html");
    assert!(first.contains("Question 1 of 4") && first.contains("Back to the study"), "{first}");
    let resp = page("2").await;
    assert_eq!(resp.status(), StatusCode::OK);
    let html = resp.text().await.expect("html");
    assert!(html.contains("Question 2 of 4") && html.contains("<fieldset class=\"preview\" disabled>"), "{html}");
    assert!(html.contains("?task=1") && html.contains("?task=3"), "previous and next tasks");
    let last = page("99").await.text().await.expect("html");
    assert!(last.contains("Question 4 of 4") && !last.contains("Next task"), "{last}");
    assert_eq!(counts().await, before, "a preview records nothing");
    // Workers cannot open it.
    let worker = crate::fixtures::join(&app, &invitation, "curious").await;
    let resp = worker.client.get(app.at(&format!("/admin/campaigns/{campaign}/preview"))).send().await.expect("get");
    assert!(resp.status() == StatusCode::FORBIDDEN || resp.status() == StatusCode::SEE_OTHER, "{}", resp.status());
}

#[tokio::test]
async fn revoke_and_end_sessions_signs_out_everyone_who_joined_through_the_link_for_good() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, leaked) = small_campaign(&app, &admin).await;
    let base = format!("/api/v1/admin/campaigns/{campaign}/invitations");
    let (_, other) = crate::fixtures::api(&app, &admin, reqwest::Method::POST, &base, None).await;
    let other = other["token"].as_str().expect("token").to_owned();
    let bot = crate::fixtures::join(&app, &leaked, "bot-1").await;
    let (status, _) = bot.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK, "the bot holds a questionnaire");
    let honest = crate::fixtures::join(&app, &other, "honest-1").await;

    let (status, links) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::POST,
        &format!("{base}/{leaked}/revoke?end_sessions=true"),
        None,
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{links}");
    let ended = links.as_array().expect("links").iter().find(|l| l["token"] == leaked.as_str()).expect("link").clone();
    assert!(ended["revoked_at"].is_string() && ended["sessions_ended_at"].is_string(), "{ended}");

    // The bot's session is gone at once; the other link's worker works on.
    let (status, _) = bot.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED, "the session was ended");
    let (status, _) = honest.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::OK);
    // Nobody gets back in through the link, not even those who joined.
    let resp = bot.client.get(app.at(&format!("/join/{leaked}?worker_id=bot-1"))).send().await.expect("rejoin");
    assert_eq!(resp.status(), StatusCode::CONFLICT);
    assert!(resp.text().await.expect("html").contains("closed by the study"));
    let (status, _) = bot.next(&app, &campaign).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
}

#[tokio::test]
async fn workers_read_the_intro_and_agree_to_the_consent_before_their_first_questionnaire() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let path = format!("/api/v1/admin/campaigns/{campaign}/intro");
    let put = |body: Value| crate::fixtures::api(&app, &admin, reqwest::Method::PUT, &path, Some(body));
    let (status, body) = put(json!({"text": "x", "estimated_minutes": 0})).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_intro")));
    let intro = json!({
        "text": "Rate each try-on <script>alert(1)</script>.\n\n/images/example.png\n\nThank you.",
        "estimated_minutes": 12, "pay": "£1.50", "consent": "Your ratings are published under a pseudonym."
    });
    let (status, saved) = put(intro).await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    let (_, got) = crate::fixtures::api(&app, &admin, reqwest::Method::GET, &path, None).await;
    assert_eq!(got["pay"], "£1.50");

    // The page: instructions (escaped), the example image, time and pay, the consent box.
    let worker = crate::fixtures::join(&app, &invitation, "reader").await;
    let html = worker
        .client
        .get(app.at(&format!("/work/{campaign}")))
        .send()
        .await
        .expect("landing")
        .text()
        .await
        .expect("html");
    assert!(
        html.contains("Rate each try-on &#60;script&#62;") || html.contains("Rate each try-on &lt;script&gt;"),
        "{html}"
    );
    assert!(html.contains("<img src=\"/images/example.png\""), "{html}");
    assert!(html.contains("About <strong>12 minutes</strong>") && html.contains("Pay: <strong>£1.50</strong>"));
    assert!(html.contains("name=\"consent\" value=\"yes\" required"), "{html}");
    // Keys are mentioned only where a keyboard is likely (the hint hides on touch screens).
    assert!(html.contains("(<span class=\"key-hint\">Backspace or </span>the “Previous” link)"), "{html}");
    let csrf = csrf_in(&html);
    // Without the box ticked nothing starts.
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let assignments: i64 =
        sqlx::query_scalar("SELECT count(*) FROM assignments").fetch_one(&app.pool).await.expect("n");
    assert_eq!(assignments, 0);
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[("consent", "yes")]).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let consent: String = sqlx::query_scalar("SELECT consent FROM consents").fetch_one(&app.pool).await.expect("kept");
    assert_eq!(consent, "Your ratings are published under a pseudonym.", "the text they agreed to is kept");

    // Through the API the same rule holds.
    let api_worker = crate::fixtures::join(&app, &invitation, "scripted").await;
    let (status, body) = api_worker.next(&app, &campaign).await;
    assert_eq!((status, body["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("consent_required")));
    let (status, body) =
        api_worker.post(&app, &format!("/api/v1/work/campaigns/{campaign}/assignment"), json!({"consent": true})).await;
    assert_eq!(status, StatusCode::OK, "{body}");
}

#[tokio::test]
async fn a_refused_start_shows_why_beside_the_form_keeps_the_choices_and_stores_nothing() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let background = json!([
        {"id": "fashion", "question": "Fashion background?", "options": ["none", "some", "professional"]},
        {"id": "age", "question": "Your age?", "options": ["18-34", "35+"]}
    ]);
    let config = json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1,
                        "annotators_per_questionnaire": 2, "background": background});
    let (campaign, invitation) = open_vton_campaign(&app, &admin, 3, 1, config).await;
    let path = format!("/api/v1/admin/campaigns/{campaign}/intro");
    let intro = json!({"text": "Rate each try-on.", "consent": "Your ratings are published under a pseudonym."});
    let (status, saved) = crate::fixtures::api(&app, &admin, reqwest::Method::PUT, &path, Some(intro)).await;
    assert_eq!(status, StatusCode::OK, "{saved}");
    let worker = crate::fixtures::join(&app, &invitation, "hasty").await;
    let landing = worker.client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("landing");
    let csrf = csrf_in(&landing.text().await.expect("html"));

    // One question left out (a browser without `required`, or a script): the
    // landing page again, the reason beside the form, what was chosen kept.
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[("bg_fashion", "some"), ("consent", "yes")]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    let form = &html[html.find("id=\"start\"").expect("the start form")..];
    assert!(form.contains("role=\"alert\">please answer: Your age?"), "{form}");
    assert!(form.contains("name=\"bg_fashion\" value=\"some\" required checked"), "{form}");
    assert!(!form.contains("value=\"none\" required checked"), "{form}");
    assert!(form.contains("name=\"consent\" value=\"yes\" required checked"), "{form}");
    assert!(!form.contains("csrf_token\" value=\"\""), "a fresh token in the form: {form}");
    let stored: (i64, i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM consents), (SELECT count(*) FROM participant_profiles),
                (SELECT count(*) FROM assignments)",
    )
    .fetch_one(&app.pool)
    .await
    .expect("counts");
    assert_eq!(stored, (0, 0, 0), "a refused start stores neither the consent nor the answers");

    // An answer that is not an option: refused the same way.
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[("bg_fashion", "a lot"), ("bg_age", "35+")]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    assert!(
        html.contains("`a lot` is not an answer to &#34;Fashion background?&#34;")
            || html.contains("`a lot` is not an answer to &quot;Fashion background?&quot;"),
        "{html}"
    );
    assert!(html.contains("name=\"bg_age\" value=\"35+\" required checked"), "{html}");

    // All answered, the box not ticked: the consent is what is missing.
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[("bg_fashion", "none"), ("bg_age", "35+")]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    assert!(html.contains("role=\"alert\">please read the consent text"), "{html}");
    assert!(html.contains("name=\"consent\" value=\"yes\" required>"), "not ticked: {html}");

    let fields = [("bg_fashion", "none"), ("bg_age", "35+"), ("consent", "yes")];
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &fields).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let answers: Value =
        sqlx::query_scalar("SELECT answers FROM participant_profiles").fetch_one(&app.pool).await.expect("stored");
    assert_eq!(answers, json!({"fashion": "none", "age": "35+"}));
}

#[tokio::test]
async fn two_questionnaires_share_no_item_id_although_they_share_the_sanity_task() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config =
        json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1, "annotators_per_questionnaire": 1});
    let (campaign, invitation) = open_vton_campaign(&app, &admin, 6, 1, config).await;
    let mut views = Vec::new();
    for who in ["cmp-1", "cmp-2"] {
        let w = crate::fixtures::join(&app, &invitation, who).await;
        let (status, view) = w.next(&app, &campaign).await;
        assert_eq!(status, StatusCode::OK);
        views.push((w, view));
    }
    let ids = |view: &Value| -> Vec<String> {
        view["items"].as_array().expect("items").iter().map(|i| i["id"].as_str().expect("id").to_owned()).collect()
    };
    let (first, second) = (ids(&views[0].1), ids(&views[1].1));
    assert_ne!(views[0].1["assignment"]["batch_id"], views[1].1["assignment"]["batch_id"], "two questionnaires");
    let sanity = |view: &Value| {
        view["items"].as_array().expect("items").iter().any(|i| i["payload"]["tryon"] == "/img/t/1000.png")
    };
    assert!(sanity(&views[0].1) && sanity(&views[1].1), "both hold the shared sanity task");
    assert!(first.iter().all(|id| !second.contains(id)), "no id in common: {first:?} {second:?}");
    let real: Vec<String> =
        sqlx::query_scalar("SELECT id::text FROM items").fetch_all(&app.pool).await.expect("item ids");
    assert!(first.iter().chain(&second).all(|id| !real.contains(id)), "workers never see item ids");
    // Answers name items by handle, and the stored response says the handle back.
    let (w, view) = &views[0];
    let assignment = view["assignment"]["id"].as_str().expect("id");
    let (status, body) = w
        .post(
            &app,
            &format!("/api/v1/work/assignments/{assignment}/responses"),
            json!({"item_id": first[0], "answer": {"rating": 2}}),
        )
        .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    assert_eq!(body["response"]["item_id"], first[0].as_str());
    let (_, again) = w.get(&app, &format!("/api/v1/work/assignments/{assignment}")).await;
    assert_eq!(again["answers"][&first[0]], json!({"rating": 2}), "{again}");
}

#[tokio::test]
async fn an_answer_refused_on_the_page_is_explained_beside_the_task_with_the_choice_kept() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let worker = crate::fixtures::join(&app, &invitation, "two-tabs").await;
    let landing = worker.client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("landing");
    let csrf = csrf_in(&landing.text().await.expect("html"));
    // Two tabs show the same first task.
    let (_, assignment, item) = open_first_task(&app, &worker.client, &campaign, &csrf).await;
    let post = |rating: &'static str| {
        let (worker, app, csrf, item, assignment) = (&worker, &app, csrf.clone(), item.clone(), assignment.clone());
        async move {
            worker
                .client
                .post(app.at(&format!("/work/a/{assignment}/answer")))
                .form(&[("csrf_token", csrf.as_str()), ("item_id", item.as_str()), ("rating", rating)])
                .send()
                .await
                .expect("answer")
        }
    };
    assert_eq!(post("1").await.status(), StatusCode::SEE_OTHER, "the first tab's answer is taken");
    // The second tab, still showing the task unanswered, sends another rating.
    let refused = post("3").await;
    // Post-redirect-get: the refusal is shown by the task's own address, so a reload never sends it again.
    assert_eq!(refused.status(), StatusCode::SEE_OTHER);
    assert_eq!(refused.headers()["location"], format!("/work/a/{assignment}").as_str());
    let page = || async { worker.client.get(app.at(&format!("/work/a/{assignment}"))).send().await.expect("task") };
    let html = page().await.text().await.expect("html");
    assert!(html.contains("role=\"alert\"") && html.contains("You already answered this task"), "{html}");
    assert!(html.contains("Question 1 of"), "the same task, not an error page: {html}");
    // The answer kept is the one marked (not the refused one).
    assert!(
        html.contains("value=\"1\" data-key=\"1\"\n          class=\"choice selected\""),
        "the kept answer: {html}"
    );
    assert!(!html.contains("value=\"3\" data-key=\"3\"\n          class=\"choice selected\""), "{html}");
    assert!(html.contains("name=\"change\" value=\"1\""), "sending again replaces the answer");
    let stored: Value = sqlx::query_scalar("SELECT answer FROM responses").fetch_one(&app.pool).await.expect("one");
    assert_eq!(stored, json!({"rating": 1}), "nothing changed");
    // A reload shows the task without the refusal (it was said once).
    let again = page().await.text().await.expect("html");
    assert!(!again.contains("You already answered this task"), "{again}");
}

#[tokio::test]
async fn a_stale_page_of_a_submitted_questionnaire_leads_to_its_code() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let worker = crate::fixtures::join(&app, &invitation, "went-back").await;
    let (_, view) = worker.next(&app, &campaign).await;
    let stale_item = view["items"][0]["id"].as_str().expect("handle").to_owned();
    worker.finish(&app, &view, 1).await;
    let assignment = view["assignment"]["id"].as_str().expect("id");
    // Back to a task page of the submitted questionnaire, and an answer sent from it.
    let page = worker.client.get(app.at(&format!("/work/a/{assignment}?pos=1"))).send().await.expect("page");
    assert_eq!(page.status(), StatusCode::SEE_OTHER);
    assert_eq!(page.headers()["location"], format!("/work/a/{assignment}/done").as_str());
    let resp = worker
        .client
        .post(app.at(&format!("/work/a/{assignment}/answer")))
        .form(&[
            ("csrf_token", worker.csrf.as_str()),
            ("item_id", stale_item.as_str()),
            ("rating", "3"),
            ("change", "1"),
        ])
        .send()
        .await
        .expect("answer");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "not an error page");
    assert_eq!(resp.headers()["location"], format!("/work/a/{assignment}/done").as_str());
    let done = worker.client.get(app.at(&format!("/work/a/{assignment}/done"))).send().await.expect("done");
    let html = done.text().await.expect("html");
    assert!(html.contains("this questionnaire is submitted") && html.contains("completion-code"), "{html}");
    let stored: Vec<Value> =
        sqlx::query_scalar("SELECT answer FROM responses").fetch_all(&app.pool).await.expect("answers");
    assert!(stored.iter().all(|a| *a == json!({"rating": 1})), "nothing changed after submission");
}

#[tokio::test]
async fn a_questionnaire_whose_time_ran_out_says_so_beside_the_task_and_leads_back_to_the_study() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) = small_campaign(&app, &admin).await;
    let worker = crate::fixtures::join(&app, &invitation, "slow-phone").await;
    let (task, assignment, item) = open_first_task(&app, &worker.client, &campaign, &worker.csrf).await;
    // The worker put the phone down; the lease ran out meanwhile, and
    // workers asking for work when none was left swept it.
    sqlx::query("UPDATE assignments SET leased_until = now() - interval '1 second' WHERE id = $1::uuid")
        .bind(&assignment)
        .execute(&app.pool)
        .await
        .expect("lease runs out");
    for name in ["on-time", "late"] {
        crate::fixtures::join(&app, &invitation, name).await.next(&app, &campaign).await;
    }
    let refused = worker
        .client
        .post(app.at(&format!("/work/a/{assignment}/answer")))
        .form(&[("csrf_token", worker.csrf.as_str()), ("item_id", item.as_str()), ("rating", "2")])
        .send()
        .await
        .expect("answer");
    assert_eq!(refused.status(), StatusCode::SEE_OTHER, "post-redirect-get");
    let refused =
        worker.client.get(app.at(&format!("/work/a/{assignment}"))).send().await.expect("the task, refusal shown");
    assert_eq!(refused.status(), StatusCode::CONFLICT);
    let html = refused.text().await.expect("html");
    assert!(html.contains("role=\"alert\"") && html.contains("The time for this questionnaire ran out"), "{html}");
    assert!(html.contains("the answer you just sent was not saved"), "{html}");
    assert!(html.contains("Question 1 of"), "the same task, not an error page: {html}");
    assert!(html.contains(&format!("value=\"{item}\"")), "the task it was on: {html}");
    assert!(
        html.contains("value=\"2\" data-key=\"2\"\n          class=\"choice selected\""),
        "the choice is kept: {html}"
    );
    assert!(html.contains(&format!("href=\"/work/{campaign}\"")), "the way on: {html}");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM responses").fetch_one(&app.pool).await.expect("n");
    assert_eq!(stored, 0, "nothing recorded after the time ran out");

    // Reopened later, its page says the same, not an error page.
    let again = worker.client.get(app.at(&task)).send().await.expect("task");
    assert_eq!(again.status(), StatusCode::CONFLICT);
    let html = again.text().await.expect("html");
    assert!(html.contains("The time for this questionnaire ran out") && html.contains("Question 1 of"), "{html}");
    assert!(!html.contains("not saved"), "nothing was sent this time: {html}");

    // The study page starts a new questionnaire.
    let landing = worker.client.get(app.at(&format!("/work/{campaign}"))).send().await.expect("landing");
    let csrf = csrf_in(&landing.text().await.expect("html"));
    assert!(!csrf.is_empty(), "the study page offers Start");
    // Its slot went to the worker who swept it and the study is full: what
    // to do on the platform, not a bare "thank you".
    let resp = press_start(&app, &worker.client, &campaign, &csrf, &[]).await;
    assert_eq!(resp.status(), StatusCode::OK);
    let html = resp.text().await.expect("html");
    assert!(html.contains("no task left") && html.contains("return your submission"), "{html}");
}

#[tokio::test]
async fn an_uploaded_sanity_image_has_another_address_in_every_questionnaire() {
    use crate::fixtures::{api, png, vton_item};
    use reqwest::Method;
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let image = png(5, 5, 40);
    let stored = crate::fixtures::upload_png(&app, &admin, &image).await;
    let config = json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1,
                        "annotators_per_questionnaire": 1, "background": []});
    let (_, created) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "uploaded sanity", "config": config})),
    )
    .await;
    let campaign = created["id"].as_str().expect("id").to_owned();
    let mut items: Vec<Value> = (0..6).map(|n| vton_item(n, None)).collect();
    let mut sanity = vton_item(1000, Some(1));
    sanity["payload"]["tryon"] = json!(stored);
    items.push(sanity);
    let base = format!("/api/v1/admin/campaigns/{campaign}");
    for (path, body) in [
        ("items", json!({"items": items})),
        ("batches", json!({"seed": 3})),
        ("state", json!({"state": "open"})),
        ("invitations", json!({})),
    ] {
        let (status, body) = api(&app, &admin, Method::POST, &format!("{base}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{path}: {body}");
    }
    let (_, links) = api(&app, &admin, Method::GET, &format!("{base}/invitations"), None).await;
    let invitation = links[0]["token"].as_str().expect("token").to_owned();

    let mut seen = Vec::new();
    for who in ["img-1", "img-2"] {
        let w = crate::fixtures::join(&app, &invitation, who).await;
        let (_, view) = w.next(&app, &campaign).await;
        let text = view.to_string();
        assert!(!text.contains("/images/") && !text.contains(&stored[8..24]), "no stored name: {text}");
        let address = view["items"]
            .as_array()
            .expect("items")
            .iter()
            .map(|i| i["payload"]["tryon"].as_str().expect("tryon").to_owned())
            .find(|a| a.contains("/img/") && a.starts_with("/work/a/"))
            .expect("the sanity image under the assignment's name");
        let got = w.client.get(app.at(&address)).send().await.expect("image");
        assert_eq!(got.status(), StatusCode::OK);
        assert_eq!(got.headers()["content-type"], "image/png");
        assert_eq!(got.bytes().await.expect("bytes").as_ref(), image.as_slice(), "the image itself");
        // The task page shows the same address.
        let assignment = view["assignment"]["id"].as_str().expect("id");
        let mut page = String::new();
        for pos in 1..=4 {
            let url = app.at(&format!("/work/a/{assignment}?pos={pos}"));
            page.push_str(&w.client.get(url).send().await.expect("page").text().await.expect("html"));
        }
        assert!(!page.contains("/images/"), "the page names no stored image");
        seen.push((w, address));
    }
    assert_ne!(seen[0].1, seen[1].1, "two questionnaires, two addresses for one image");
    // One worker cannot fetch through the other's questionnaire.
    let other = seen[1].0.client.get(app.at(&seen[0].1)).send().await.expect("image");
    assert_eq!(other.status(), StatusCode::NOT_FOUND);
}
