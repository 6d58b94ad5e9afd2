//! A task kind written outside the build, plugged into the real server:
//! experts tick several tags per item (a multi-select form), a second expert
//! reviews and the reviewed answer wins, imports of an existing item merge,
//! and "every annotator" work survives pauses longer than the lease.

use crate::fixtures::{admin_token, api, csrf_in, login_page};
use crate::support::TestApp;
use atelier::auth::{tokens, users, Role};
use atelier::core::campaign::settings::{AnnotatorsPerBatch, CoreSettings, Participants};
use atelier::core::kind::contract::{About, BatchPlan, Invalid, ItemRef, Policy};
use atelier::core::kind::ground_truth_text::GroundTruthText;
use atelier::core::kind::typed::AggregationInput;
use atelier::core::Registry;
use atelier::core::TypedKind;
use atelier::http::kind_routes::KindRoutes;
use atelier::http::task_pages::{escape_html, KindPages, Task, TypedTaskPages};
use rand::rngs::StdRng;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// Tags: pick any of an item's options (or "not sure").
#[derive(Clone, Copy)]
struct Tags;

/// The test kind's configuration: items per batch.
#[derive(serde::Serialize, serde::Deserialize)]
#[serde(default)]
struct TagsConfig {
    per_batch: u64,
}

impl Default for TagsConfig {
    fn default() -> Self {
        Self { per_batch: 2 }
    }
}

/// The test kind's answer: some tags, or "not sure".
#[derive(serde::Serialize, serde::Deserialize, Clone)]
struct TagsAnswer {
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    tags: Vec<String>,
    #[serde(default, skip_serializing_if = "std::ops::Not::not")]
    not_sure: bool,
}

/// The tags kind's ground truth: every submitted answer, by item.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct TagsGroundTruth {
    items: BTreeMap<String, Vec<TagsAnswer>>,
}

/// What the tags kind is: expert work.
static ABOUT: About = About {
    ..About::new(
        "test-tags",
        "Tags (a test kind)",
        CoreSettings::of(Participants::Experts, 60, AnnotatorsPerBatch::AsPlanned, false),
    )
};

/// The test kind's item: the options to pick from.
#[derive(serde::Serialize, serde::Deserialize)]
struct TagsItem {
    #[serde(default)]
    options: Vec<String>,
}

impl TypedKind for Tags {
    type Config = TagsConfig;
    type Payload = TagsItem;
    type Gold = serde::de::IgnoredAny;
    type Batched = serde::de::IgnoredAny;
    type Presentation = ();
    type Answer = TagsAnswer;
    type GroundTruth = TagsGroundTruth;

    fn about(&self) -> &'static About {
        &ABOUT
    }
    fn validate_item(&self, payload: &TagsItem, _gold: Option<&serde::de::IgnoredAny>) -> Result<(), Invalid> {
        if payload.options.is_empty() {
            return Err(Invalid("options: give at least one".into()));
        }
        Ok(())
    }
    fn validate_answer(&self, payload: Option<&TagsItem>, answer: TagsAnswer) -> Result<TagsAnswer, Invalid> {
        if answer.not_sure {
            return Ok(TagsAnswer { tags: Vec::new(), not_sure: true });
        }
        let allowed = payload.map(|p| p.options.clone()).unwrap_or_default();
        let mut tags = answer.tags;
        tags.sort();
        tags.dedup();
        if tags.is_empty() || tags.iter().any(|t| !allowed.contains(t)) {
            return Err(Invalid(format!("tags must be some of {allowed:?}")));
        }
        Ok(TagsAnswer { tags, not_sure: false })
    }
    fn form_batches(
        &self,
        config: &TagsConfig,
        items: &[ItemRef<serde::de::IgnoredAny>],
        _rng: &mut StdRng,
    ) -> Result<Vec<BatchPlan>, Invalid> {
        let per_batch = config.per_batch.max(1) as usize;
        Ok(items
            .chunks(per_batch)
            .map(|c| BatchPlan { items: c.iter().map(|i| i.id).collect(), overlap: None, group: None })
            .collect())
    }
    fn merge_item(&self, existing: TagsItem, incoming: TagsItem) -> Option<TagsItem> {
        // An item imported again: its options and the new ones.
        let mut options = existing.options;
        for o in incoming.options {
            if !options.contains(&o) {
                options.push(o);
            }
        }
        Some(TagsItem { options })
    }
    fn policy(&self, _config: &TagsConfig) -> Result<Policy, Invalid> {
        Ok(Policy { reviewed_answer_wins: true, ..Policy::plain(ABOUT.title) })
    }
    fn aggregate(&self, _config: &TagsConfig, input: &AggregationInput<Self>) -> TagsGroundTruth {
        let names: BTreeMap<_, _> = input.items.iter().map(|i| (i.id, i.external_id.clone())).collect();
        let mut items: BTreeMap<String, Vec<TagsAnswer>> = BTreeMap::new();
        for r in input.responses.iter().filter(|r| r.submitted) {
            items.entry(names[&r.item_id].clone()).or_default().push(TagsAnswer::clone(&r.answer));
        }
        TagsGroundTruth { items }
    }
    fn export(
        &self,
        ground_truth: GroundTruthText<'_, TagsGroundTruth>,
        _partial: bool,
        each: &mut dyn FnMut(&[String]),
    ) {
        each(&["item".into(), "answers".into()]);
        for (item, answers) in ground_truth.read().unwrap_or_default().items {
            each(&[item, serde_json::to_string(&answers).unwrap_or_default()]);
        }
    }
}

/// How the tags kind is shown: checkboxes, and the answer as a list.
impl TypedTaskPages for Tags {
    type Shown = TagsItem;
    fn answer_from_form(&self, fields: &[(String, String)]) -> Option<TagsAnswer> {
        if fields.iter().any(|(k, _)| k == "not_sure") {
            return Some(TagsAnswer { tags: Vec::new(), not_sure: true });
        }
        Some(TagsAnswer {
            tags: fields.iter().filter(|(k, _)| k == "tag").map(|(_, v)| v.clone()).collect(),
            not_sure: false,
        })
    }
    fn render_task(&self, task: &Task<'_, Self>) -> Result<String, askama::Error> {
        let view = &task.form;
        let boxes: String = task
            .item
            .options
            .iter()
            .map(|o| format!(r#"<label><input type="checkbox" name="tag" value="{0}"> {0}</label>"#, escape_html(o)))
            .collect();
        Ok(format!(
            r#"<form method="post" action="/work/a/{}/answer"><input type="hidden" name="csrf_token" value="{}">
               <input type="hidden" name="item_id" value="{}"><input type="hidden" name="shown_at" value="{}">{boxes}
               <button type="submit">Save</button></form>"#,
            view.assignment_id, view.csrf_token, view.item_id, view.shown_at
        ))
    }
    fn render_answer(&self, _item: &TagsItem, answer: &TagsAnswer) -> String {
        let tags: String = answer.tags.iter().map(|t| format!("<li>{}</li>", escape_html(t))).collect();
        format!(r#"<ul class="reviewed-tags">{tags}</ul>"#)
    }
}

static TAGS: Tags = Tags;

fn registry() -> Registry {
    Registry::new(vec![&TAGS])
}

fn pages() -> KindPages {
    KindPages::new(vec![(ABOUT.name, &TAGS)])
}

/// The kind's own page, merged by the application like any kind's.
fn routes() -> Vec<KindRoutes> {
    vec![KindRoutes {
        pages: axum::Router::new().route("/admin/tags-kind", axum::routing::get(|| async { "the tags kind's page" })),
        ..Default::default()
    }]
}

/// An expert account with an API token and a logged-in browser session.
struct Expert {
    id: String,
    token: String,
    browser: reqwest::Client,
    csrf: String,
}

async fn expert(app: &TestApp, name: &str) -> Expert {
    let user = users::create(&app.pool, Role::Expert, name, "expert-password-1").await.expect("expert");
    let token = tokens::create(&app.pool, user.id).await.expect("token");
    let (browser, csrf) = login_page(app).await;
    let resp = browser
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", name), ("password", "expert-password-1")])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let home = browser.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    Expert { id: user.id.to_string(), token, csrf: csrf_in(&home), browser }
}

impl Expert {
    /// Starts work on the campaign from its page: the task page's address.
    async fn start(&self, app: &TestApp, campaign: &str) -> String {
        let resp = self
            .browser
            .post(app.at(&format!("/work/{campaign}/start")))
            .form(&[("csrf_token", self.csrf.as_str())])
            .send()
            .await
            .expect("start");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
        resp.headers()["location"].to_str().expect("location").to_owned()
    }

    async fn next(&self, app: &TestApp, campaign: &str) -> Value {
        let (status, view) = api(
            app,
            &self.token,
            Method::POST,
            &format!("/api/v1/expert/campaigns/{campaign}/assignment"),
            Some(json!({})),
        )
        .await;
        assert_eq!(status, StatusCode::OK, "{view}");
        view
    }

    async fn answer(&self, app: &TestApp, view: &Value, item: &Value, tags: &[&str]) {
        let path = format!("/api/v1/expert/assignments/{}/responses", view["assignment"]["id"].as_str().expect("id"));
        let (status, body) =
            api(app, &self.token, Method::POST, &path, Some(json!({"item_id": item["id"], "answer": {"tags": tags}})))
                .await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    async fn complete(&self, app: &TestApp, view: &Value) {
        let path = format!("/api/v1/expert/assignments/{}/complete", view["assignment"]["id"].as_str().expect("id"));
        let (status, body) = api(app, &self.token, Method::POST, &path, None).await;
        assert_eq!(status, StatusCode::OK, "{body}");
    }

    /// Labels every batch left for them with `tags`, submitting each.
    async fn label_everything(&self, app: &TestApp, campaign: &str, tags: &[&str]) {
        loop {
            let view = self.next(app, campaign).await;
            if view.is_null() {
                return;
            }
            for item in view["items"].as_array().expect("items") {
                if view["answers"].get(item["id"].as_str().expect("id")).is_none() {
                    self.answer(app, &view, item, tags).await;
                }
            }
            self.complete(app, &view).await;
        }
    }
}

/// Creates a tags campaign with `items` items (options a, b, c), batches, opens it.
async fn tags_campaign(app: &TestApp, admin: &str, settings: Value, items: usize) -> String {
    let options = vec![json!(["a", "b", "c"]); items];
    tags_campaign_of(app, admin, json!({"per_batch": 2, "settings": settings}), &options).await
}

/// A tags campaign of items with these options, `per_batch` and core
/// `settings` given in `shape`; batched and open.
async fn tags_campaign_of(app: &TestApp, admin: &str, shape: Value, options: &[Value]) -> String {
    let (status, c) = api(
        app,
        admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "test-tags", "name": "Tags", "config": {"per_batch": shape["per_batch"]}, "settings": shape.get("settings").cloned().unwrap_or(json!({}))})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    let id = c["id"].as_str().expect("id").to_owned();
    let items: Vec<Value> = options
        .iter()
        .enumerate()
        .map(|(n, o)| json!({"external_id": format!("item-{n}"), "payload": {"options": o}}))
        .collect();
    let path = format!("/api/v1/admin/campaigns/{id}/items");
    let (status, body) = api(app, admin, Method::POST, &path, Some(json!({ "items": items }))).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, body) =
            api(app, admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{path}: {body}");
    }
    id
}

async fn ground_truth(app: &TestApp, admin: &str, campaign: &str) -> Value {
    let (status, gt) =
        api(app, admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    assert_eq!(status, StatusCode::OK, "{gt}");
    gt
}

#[tokio::test]
async fn a_kind_from_outside_plugs_in_with_its_routes_merged_imports_and_a_multi_select_form() {
    let app = TestApp::spawn_with_kinds(registry(), pages(), routes).await;
    let admin = admin_token(&app).await;
    let page = reqwest::get(app.at("/admin/tags-kind")).await.expect("kind page").text().await.expect("text");
    assert_eq!(page, "the tags kind's page");
    let campaign = tags_campaign(&app, &admin, json!({}), 2).await;

    // An import naming an existing item merges into it (the kind says so).
    let path = format!("/api/v1/admin/campaigns/{campaign}/items");
    let more = json!({"items": [{"external_id": "item-0", "payload": {"options": ["c", "d"]}}]});
    let (status, body) = api(&app, &admin, Method::POST, &path, Some(more)).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, items) = api(&app, &admin, Method::GET, &path, None).await;
    let first = items.as_array().expect("items").iter().find(|i| i["external_id"] == "item-0").expect("item-0").clone();
    assert_eq!(first["payload"]["options"], json!(["a", "b", "c", "d"]));

    // The expert ticks two boxes on the task page; both are stored.
    let e = expert(&app, "tagger").await;
    let task_url = e.start(&app, &campaign).await;
    let html = e.browser.get(app.at(&task_url)).send().await.expect("task").text().await.expect("html");
    assert!(html.contains(r#"type="checkbox" name="tag" value="d""#), "the merged option is offered: {html}");
    let item_id = {
        let marker = r#"name="item_id" value=""#;
        let start = html.find(marker).expect("item id") + marker.len();
        html[start..start + 36].to_owned()
    };
    let resp = e
        .browser
        .post(app.at(&format!("{task_url}/answer")))
        .form(&[
            ("csrf_token", e.csrf.as_str()),
            ("item_id", item_id.as_str()),
            ("shown_at", "0"),
            ("tag", "d"),
            ("tag", "a"),
        ])
        .send()
        .await
        .expect("answer");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let view = e.next(&app, &campaign).await;
    assert_eq!(view["answers"][&item_id], json!({"tags": ["a", "d"]}), "{view}");
    // A box that is not an option is refused and nothing changes.
    let resp = e
        .browser
        .post(app.at(&format!("{task_url}/answer")))
        .form(&[("csrf_token", e.csrf.as_str()), ("item_id", item_id.as_str()), ("tag", "z"), ("change", "1")])
        .send()
        .await
        .expect("answer");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "post-redirect-get");
    let shown = e.browser.get(app.at(task_url.as_str())).send().await.expect("the task, refusal beside it");
    assert_eq!(shown.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(shown.text().await.expect("html").contains("Your answer was not saved"));
    assert_eq!(e.next(&app, &campaign).await["answers"][&item_id], json!({"tags": ["a", "d"]}));
}

#[tokio::test]
async fn review_shows_the_kinds_rendering_and_the_reviewed_answer_wins() {
    let app = TestApp::spawn_with_kinds(registry(), pages(), routes).await;
    let admin = admin_token(&app).await;
    let campaign = tags_campaign(&app, &admin, json!({"review": true, "annotators_per_batch": 1}), 2).await;
    let author = expert(&app, "author").await;
    let reviewer = expert(&app, "reviewer").await;

    let view = author.next(&app, &campaign).await;
    assert!(view.get("reviewing").is_none());
    let items = view["items"].as_array().expect("items").clone();
    author.answer(&app, &view, &items[0], &["a"]).await;
    author.answer(&app, &view, &items[1], &["b", "c"]).await;
    author.complete(&app, &view).await;
    assert!(author.next(&app, &campaign).await.is_null(), "nobody reviews their own work");

    let review = reviewer.next(&app, &campaign).await;
    assert_eq!(review["reviewing"].as_object().expect("under review").len(), 2);
    assert!(!review.to_string().contains(&author.id), "the author stays anonymous");
    let first = items[0]["id"].as_str().expect("id");
    let page = reviewer
        .browser
        .get(app.at(&format!("/work/a/{}?pos=1", review["assignment"]["id"].as_str().expect("id"))))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    let shown_first = review["items"][0]["id"] == first;
    let expected = if shown_first { "<li>a</li>" } else { "<li>b</li><li>c</li>" };
    assert!(page.contains(&format!(r#"<ul class="reviewed-tags">{expected}</ul>"#)), "the kind renders it: {page}");
    // The reviewer corrects the first item and confirms the second.
    for item in review["items"].as_array().expect("items") {
        let tags: &[&str] = if item["id"] == first { &["c"] } else { &["b", "c"] };
        reviewer.answer(&app, &review, item, tags).await;
    }
    reviewer.complete(&app, &review).await;

    let gt = ground_truth(&app, &admin, &campaign).await;
    assert_eq!(gt["items"]["item-0"], json!([{"tags": ["c"]}]), "the reviewed answer wins: {gt}");
    assert_eq!(gt["items"]["item-1"], json!([{"tags": ["b", "c"]}]), "{gt}");
    let batches: i64 = sqlx::query_scalar("SELECT count(*) FROM batches").fetch_one(&app.pool).await.expect("count");
    assert_eq!(batches, 2, "reviews are not reviewed again");
}

#[tokio::test]
async fn review_on_a_crowd_campaign_is_refused() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    for body in [
        json!({"kind": "vton", "name": "v", "settings": {"review": true}}),
        json!({"kind": "vton", "name": "v", "config": {"review": true}}),
        json!({"kind": "a100-lat", "name": "l", "settings": {"review": true, "participants": "crowd"}}),
    ] {
        let (status, err) = api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(body)).await;
        assert_eq!(
            (status, err["error"]["code"].as_str()),
            (StatusCode::UNPROCESSABLE_ENTITY, Some("review_needs_experts"))
        );
    }
    let count: i64 = sqlx::query_scalar("SELECT count(*) FROM campaigns").fetch_one(&app.pool).await.expect("count");
    assert_eq!(count, 0, "nothing was created");
    // Turning review on later is refused too, and the database would refuse it anyway.
    let (_, c) =
        api(&app, &admin, Method::POST, "/api/v1/admin/campaigns", Some(json!({"kind": "vton", "name": "v"}))).await;
    let id = c["id"].as_str().expect("id");
    for path in ["config", "settings"] {
        let path = format!("/api/v1/admin/campaigns/{id}/{path}");
        let (status, err) = api(&app, &admin, Method::PUT, &path, Some(json!({"review": true}))).await;
        let code = err["error"]["code"].as_str();
        assert_eq!((status, code), (StatusCode::UNPROCESSABLE_ENTITY, Some("review_needs_experts")), "{path}");
    }
    let refused =
        sqlx::query("UPDATE campaigns SET review = true WHERE id = $1::uuid").bind(id).execute(&app.pool).await;
    assert!(refused.is_err(), "the CHECK constraint holds");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn an_expert_who_pauses_past_the_lease_resumes_and_every_label_counts() {
    let app = TestApp::spawn_with_kinds(registry(), pages(), routes).await;
    let admin = admin_token(&app).await;
    // Every expert labels every item; leases are one minute.
    let campaign = tags_campaign(&app, &admin, json!({"lease_minutes": 1}), 4).await;
    let (paused, b, c) = (expert(&app, "paused").await, expert(&app, "busy-b").await, expert(&app, "busy-c").await);

    let view = paused.next(&app, &campaign).await;
    let first = view["items"][0].clone();
    paused.answer(&app, &view, &first, &["a"]).await;
    let endless: bool =
        sqlx::query_scalar("SELECT leased_until > now() + interval '1000 years' FROM assignments WHERE id = $1::uuid")
            .bind(view["assignment"]["id"].as_str().expect("id"))
            .fetch_one(&app.pool)
            .await
            .expect("lease");
    assert!(endless, "work every expert must do is never leased out from under them");

    // Two colleagues label everything at the same time.
    tokio::join!(b.label_everything(&app, &campaign, &["b"]), c.label_everything(&app, &campaign, &["c"]));
    let (_, detail) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    let progress = |name: &str| {
        let row = detail["annotators"].as_array().expect("annotators").iter().find(|a| a["annotator"] == name).cloned();
        let row = row.unwrap_or_else(|| panic!("{name} in {detail}"));
        (row["done"].as_i64().expect("done"), row["remaining"].as_i64().expect("remaining"))
    };
    assert_eq!(progress("busy-b"), (4, 0));
    assert_eq!(progress("busy-c"), (4, 0));
    assert_eq!(progress("paused"), (1, 3));
    let home = paused.browser.get(app.at("/expert")).send().await.expect("home").text().await.expect("html");
    assert!(
        home.contains(
            r#"<td class="num done" data-label="Done">1</td><td class="num remaining" data-label="Remaining">3</td>"#
        ),
        "{home}"
    );

    // Work that expired before leases became endless is given back, its label counted again.
    sqlx::query(
        "UPDATE assignments SET state = 'expired', leased_until = now() - interval '1 day' WHERE id = $1::uuid",
    )
    .bind(view["assignment"]["id"].as_str().expect("id"))
    .execute(&app.pool)
    .await
    .expect("expire");
    sqlx::query(
        "UPDATE responses SET excluded_reason = 'lease_expired', excluded_at = now() WHERE annotator_id = $1::uuid",
    )
    .bind(&paused.id)
    .execute(&app.pool)
    .await
    .expect("exclude");
    let resumed = paused.next(&app, &campaign).await;
    assert_eq!(resumed["assignment"]["id"], view["assignment"]["id"], "the same batch, resumed");
    assert_eq!(resumed["answers"][first["id"].as_str().expect("id")], json!({"tags": ["a"]}));
    paused.label_everything(&app, &campaign, &["a"]).await;

    let gt = ground_truth(&app, &admin, &campaign).await;
    for n in 0..4 {
        let answers = gt["items"][format!("item-{n}")].as_array().expect("answers").len();
        assert_eq!(answers, 3, "every expert's label of item-{n} counts: {gt}");
    }
    let excluded: i64 = sqlx::query_scalar("SELECT count(*) FROM responses WHERE excluded_reason IS NOT NULL")
        .fetch_one(&app.pool)
        .await
        .expect("count");
    assert_eq!(excluded, 0);
}

/// The task page reads with the assignment only the payloads of the first
/// task without an answer and the next (`core::work::own_view`); a task reached
/// by its position takes a second read. Each page must show its own item.
#[tokio::test]
async fn the_task_page_shows_the_first_open_task_and_any_other_by_its_position() {
    let app = TestApp::spawn_with_kinds(registry(), pages(), routes).await;
    let admin = admin_token(&app).await;
    let options: Vec<Value> = (0..3).map(|n| json!([format!("only-{n}")])).collect();
    let campaign = tags_campaign_of(&app, &admin, json!({"per_batch": 3}), &options).await;
    let e = expert(&app, "pager").await;
    let task_url = e.start(&app, &campaign).await;
    // The order the expert sees, from the API's full view.
    let view = e.next(&app, &campaign).await;
    let order: Vec<(String, String)> = view["items"]
        .as_array()
        .expect("items")
        .iter()
        .map(|i| (i["id"].as_str().expect("id").to_owned(), i["payload"]["options"][0].as_str().expect("o").to_owned()))
        .collect();
    assert_eq!(order.len(), 3);
    let page = |url: String| {
        let browser = e.browser.clone();
        async move { browser.get(url).send().await.expect("page").text().await.expect("html") }
    };
    // Each answer sends the browser to the next open task, with its own payload.
    for (id, option) in &order[..2] {
        let html = page(app.at(&task_url)).await;
        assert!(html.contains(&format!(r#"name="item_id" value="{id}""#)), "the first open task: {html}");
        assert!(html.contains(&format!(r#"value="{option}""#)), "its own payload: {html}");
        let resp = e
            .browser
            .post(app.at(&format!("{task_url}/answer")))
            .form(&[("csrf_token", e.csrf.as_str()), ("item_id", id.as_str()), ("tag", option.as_str())])
            .send()
            .await
            .expect("answer");
        assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    }
    let html = page(app.at(&task_url)).await;
    assert!(html.contains(&format!(r#"value="{}""#, order[2].1)), "the last task: {html}");
    // Going back to an answered task by its position shows that task.
    for (position, (id, option)) in order.iter().enumerate().take(2) {
        let html = page(app.at(&format!("{task_url}?pos={}", position + 1))).await;
        assert!(html.contains(&format!(r#"name="item_id" value="{id}""#)), "task {position}: {html}");
        assert!(html.contains(&format!(r#"value="{option}""#)), "task {position}'s payload: {html}");
        for (_, other) in order.iter().filter(|(other_id, _)| other_id != id) {
            assert!(!html.contains(&format!(r#"value="{other}""#)), "no other task's payload: {html}");
        }
    }
}
