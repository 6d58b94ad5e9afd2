//! Story-level helpers: an admin, a VTON campaign, workers joining it.

#![allow(dead_code)]

use crate::support::TestApp;
use atelier::auth::{tokens, users, Role};
use reqwest::{Client, StatusCode};
use serde_json::{json, Value};

pub const ADMIN_PASSWORD: &str = "admin-password-1";

/// Creates an admin account and returns an API token for it.
pub async fn admin_token(app: &TestApp) -> String {
    let admin = users::create(&app.pool, Role::Admin, "root-admin", ADMIN_PASSWORD).await.expect("admin");
    tokens::create(&app.pool, admin.id).await.expect("token")
}

/// The password of experts the tests create.
pub const EXPERT_PASSWORD: &str = "expert-password-1";

/// Creates an expert account and returns an API token for it.
pub async fn expert_token(app: &TestApp, name: &str) -> String {
    let user = users::create(&app.pool, Role::Expert, name, EXPERT_PASSWORD).await.expect("expert");
    tokens::create(&app.pool, user.id).await.expect("token")
}

/// Calls the API with a bearer token.
pub async fn api(
    app: &TestApp,
    token: &str,
    method: reqwest::Method,
    path: &str,
    body: Option<Value>,
) -> (StatusCode, Value) {
    let mut req = reqwest::Client::new().request(method, app.at(path)).bearer_auth(token);
    if let Some(b) = body {
        req = req.json(&b);
    }
    let resp = req.send().await.expect("request");
    let status = resp.status();
    let text = resp.text().await.expect("body");
    (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
}

/// One VTON item; sanity items carry a gold rating.
pub fn vton_item(n: usize, gold: Option<u8>) -> Value {
    let img = |r: &str| format!("/img/{r}/{n}.png");
    json!({
        "external_id": if gold.is_some() { format!("sanity-{n}") } else { format!("img-{n}") },
        "payload": {"garment": img("g"), "person": img("p"), "tryon": img("t"), "reference": img("r"), "model": "m1", "category": "tops", "dataset": "test"},
        "gold": gold.map(|g| json!({"rating": g})),
    })
}

/// Uploads `csv` as a file through the campaign page's import box, as the
/// logged-in admin `client` (with its CSRF token) would; the page's answer.
pub async fn upload_on_campaign_page(
    app: &TestApp,
    client: &Client,
    csrf: &str,
    campaign: &str,
    csv: String,
) -> reqwest::Response {
    let file = reqwest::multipart::Part::bytes(csv.into_bytes()).file_name("triplets.csv").mime_str("text/csv");
    // As the page's form sends it: the token first, in the body, never in the address.
    let form = reqwest::multipart::Form::new().text("csrf_token", csrf.to_owned()).part("file", file.expect("mime"));
    client.post(app.at(&format!("/admin/campaigns/{campaign}/import"))).multipart(form).send().await.expect("upload")
}

/// A small open VTON campaign (three images, one sanity task, questionnaires
/// of two tasks and the sanity one) and a worker who took a questionnaire:
/// the worker and the questionnaire's view.
pub async fn worker_with_questionnaire(app: &TestApp, worker_id: &str) -> (WorkerSession, Value) {
    let admin = admin_token(app).await;
    let (campaign, invitation) =
        open_vton_campaign(app, &admin, 3, 1, json!({"tasks_per_questionnaire": 2, "sanity_per_questionnaire": 1}))
            .await;
    let worker = join(app, &invitation, worker_id).await;
    let (_, view) = worker.next(app, &campaign).await;
    (worker, view)
}

/// A VTON campaign with `regular` images and `sanity` sanity tasks, batches
/// formed, opened; returns (campaign id, invitation token).
pub async fn open_vton_campaign(
    app: &TestApp,
    token: &str,
    regular: usize,
    sanity: usize,
    mut config: Value,
) -> (String, String) {
    // Most tests are not about the background questions asked before the first task.
    if let Some(obj) = config.as_object_mut() {
        obj.entry("background").or_insert(json!([]));
    }
    let (status, campaign) = api(
        app,
        token,
        reqwest::Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "Test VTON", "config": config})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{campaign}");
    let id = campaign["id"].as_str().expect("id").to_owned();
    let mut items: Vec<Value> = (0..regular).map(|n| vton_item(n, None)).collect();
    items.extend((0..sanity).map(|n| vton_item(1000 + n, Some(if n % 2 == 0 { 1 } else { 3 }))));
    let (status, body) = api(
        app,
        token,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/items"),
        Some(json!({"items": items})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = api(
        app,
        token,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/batches"),
        Some(json!({"seed": 3})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (status, body) = api(
        app,
        token,
        reqwest::Method::POST,
        &format!("/api/v1/admin/campaigns/{id}/state"),
        Some(json!({"state": "open"})),
    )
    .await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, inv) =
        api(app, token, reqwest::Method::POST, &format!("/api/v1/admin/campaigns/{id}/invitations"), None).await;
    assert_eq!(status, StatusCode::CREATED, "{inv}");
    (id, inv["token"].as_str().expect("token").to_owned())
}

/// The items a crowd worker's handles name in their assignment (workers
/// never see item ids; see `atelier::core::work::handles`), in the handles' order.
pub async fn items_of_handles(app: &TestApp, assignment: uuid::Uuid, handles: &[uuid::Uuid]) -> Vec<uuid::Uuid> {
    let ids: Vec<uuid::Uuid> = sqlx::query_scalar(
        "SELECT bi.item_id FROM assignments a JOIN batch_items bi ON bi.batch_id = a.batch_id WHERE a.id = $1",
    )
    .bind(assignment)
    .fetch_all(&app.pool)
    .await
    .expect("batch items");
    handles
        .iter()
        .map(|h| {
            *ids.iter()
                .find(|i| atelier::core::work::handles::handle(assignment, **i) == *h)
                .expect("an item of the batch")
        })
        .collect()
}

/// How many crowd workers exist.
pub async fn count_distinct_workers(app: &TestApp) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM users WHERE role = 'worker'").fetch_one(&app.pool).await.expect("count")
}

/// A crowd worker with a browser session.
pub struct WorkerSession {
    pub client: Client,
    pub csrf: String,
    pub user_id: String,
}

/// An address of the test network standing for this worker's own.
pub fn address_of(worker_id: &str) -> String {
    let h = worker_id.bytes().fold(2166136261u32, |h, b| (h ^ u32::from(b)).wrapping_mul(16777619));
    format!("10.{}.{}.{}", (h >> 16) & 0xff, (h >> 8) & 0xff, h & 0xff)
}

/// Opens the invitation link as a worker and returns their session.
pub async fn join(app: &TestApp, invitation: &str, worker_id: &str) -> WorkerSession {
    let client = app.client();
    // Each worker from an address of their own (the test server trusts
    // loopback as a proxy), as real workers are: the per-address join limit
    // has its own tests.
    let resp = client
        .get(app.at(&format!("/join/{invitation}?worker_id={worker_id}")))
        .header("x-forwarded-for", address_of(worker_id))
        .send()
        .await
        .expect("join");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "join redirects to the campaign page");
    let me: Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
    WorkerSession {
        client,
        csrf: me["csrf_token"].as_str().expect("csrf").to_owned(),
        user_id: me["user"]["id"].as_str().expect("id").to_owned(),
    }
}

impl WorkerSession {
    /// POSTs JSON with the CSRF header, as the browser's scripts would.
    pub async fn post(&self, app: &TestApp, path: &str, body: Value) -> (StatusCode, Value) {
        let resp =
            self.client.post(app.at(path)).header("x-csrf-token", &self.csrf).json(&body).send().await.expect("post");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// GETs JSON.
    pub async fn get(&self, app: &TestApp, path: &str) -> (StatusCode, Value) {
        let resp = self.client.get(app.at(path)).send().await.expect("get");
        let status = resp.status();
        let text = resp.text().await.expect("body");
        (status, serde_json::from_str(&text).unwrap_or(Value::String(text)))
    }

    /// Asks for the next assignment in a campaign.
    pub async fn next(&self, app: &TestApp, campaign: &str) -> (StatusCode, Value) {
        self.post(app, &format!("/api/v1/work/campaigns/{campaign}/assignment"), json!({})).await
    }

    /// Answers every item of an assignment with `rating` and submits it.
    pub async fn finish(&self, app: &TestApp, view: &Value, rating: u8) -> Value {
        self.finish_with(app, view, |_| json!({"rating": rating})).await
    }

    /// Answers every item with `answer(item)` and submits the assignment.
    pub async fn finish_with(&self, app: &TestApp, view: &Value, answer: impl Fn(&Value) -> Value) -> Value {
        let id = view["assignment"]["id"].as_str().expect("assignment id");
        for item in view["items"].as_array().expect("items") {
            let body = json!({"item_id": item["id"], "answer": answer(item)});
            let (status, body) = self.post(app, &format!("/api/v1/work/assignments/{id}/responses"), body).await;
            assert_eq!(status, StatusCode::OK, "{body}");
        }
        let (status, body) = self.post(app, &format!("/api/v1/work/assignments/{id}/complete"), json!({})).await;
        assert_eq!(status, StatusCode::OK, "{body}");
        body
    }
}

/// The CSRF token in a page's form.
pub fn csrf_in(html: &str) -> String {
    let marker = "name=\"csrf_token\" value=\"";
    let start = html.find(marker).expect("a form with a CSRF token") + marker.len();
    html[start..start + 32].to_owned()
}

/// Opens the login page in a fresh browser-like client; returns it and the form's CSRF token.
pub async fn login_page(app: &TestApp) -> (Client, String) {
    let client = app.client();
    let html = client.get(app.at("/login")).send().await.expect("login page").text().await.expect("html");
    let csrf = csrf_in(&html);
    (client, csrf)
}

/// A browser-like client logged in as the admin `admin_token` made, and its CSRF token.
pub async fn logged_in_admin(app: &TestApp) -> (Client, String) {
    logged_in(app, "root-admin", ADMIN_PASSWORD).await
}

/// A browser-like client logged in with this name and password, and its CSRF token.
pub async fn logged_in(app: &TestApp, name: &str, password: &str) -> (Client, String) {
    let (client, csrf) = login_page(app).await;
    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", name), ("password", password)])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "logged in");
    (client, csrf)
}

/// Creates a campaign of `kind` through the API; returns its id.
pub async fn new_campaign(app: &TestApp, token: &str, kind: &str, name: &str) -> String {
    create_campaign(app, token, json!({"kind": kind, "name": name})).await
}

/// Creates a campaign from a full creation body (kind, name, config,
/// settings) through the API; returns its id.
pub async fn create_campaign(app: &TestApp, token: &str, body: Value) -> String {
    let (status, c) = api(app, token, reqwest::Method::POST, "/api/v1/admin/campaigns", Some(body)).await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    c["id"].as_str().expect("id").to_owned()
}

/// A VSD campaign made from `rankings` (CSV), its pool built, batched and
/// opened; `campaign` is the creation body (kind, name, config, settings).
pub async fn open_vsd_campaign(app: &TestApp, token: &str, campaign: Value, rankings: &str) -> String {
    let id = create_campaign(app, token, campaign).await;
    let resp = Client::new()
        .post(app.at(&format!("/api/v1/admin/campaigns/{id}/vsd/rankings")))
        .bearer_auth(token)
        .header("content-type", "text/csv")
        .body(rankings.to_owned())
        .send()
        .await
        .expect("rankings");
    assert_eq!(resp.status(), StatusCode::CREATED);
    for (path, body) in
        [("vsd/pool", None), ("batches", Some(json!({"seed": 1}))), ("state", Some(json!({"state": "open"})))]
    {
        let (status, b) =
            api(app, token, reqwest::Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), body).await;
        assert!(status.is_success(), "{path}: {b}");
    }
    id
}

/// The response to a GET of `path` with the API token, redirects not
/// followed (the test reads where they lead).
pub async fn get_unfollowed(app: &TestApp, token: &str, path: &str) -> reqwest::Response {
    let client = Client::builder().redirect(reqwest::redirect::Policy::none()).build().expect("client");
    client.get(app.at(path)).bearer_auth(token).send().await.expect("get")
}

/// GETs a text document (CSV, HTML) with a bearer token.
pub async fn get_text(app: &TestApp, token: &str, path: &str) -> String {
    reqwest::Client::new().get(app.at(path)).bearer_auth(token).send().await.expect("get").text().await.expect("text")
}

/// A page whose figures a first view may show as being computed (the
/// first view waits a moment; a loaded machine may take longer): fetched
/// again, as its notice asks, until they are shown (a minute at most).
pub async fn page_when_computed(app: &TestApp, token: &str, path: &str) -> String {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    loop {
        let html = get_text(app, token, path).await;
        if !html.contains("being computed") {
            return html;
        }
        assert!(std::time::Instant::now() < deadline, "the figures were never shown: {html}");
        tokio::time::sleep(std::time::Duration::from_millis(50)).await;
    }
}

/// Cuts the campaign's next release through the API and returns its files,
/// unpacked, with the archive's bytes.
pub async fn cut_release(
    app: &TestApp,
    admin: &str,
    campaign: &str,
) -> (std::collections::BTreeMap<String, Vec<u8>>, Vec<u8>) {
    let base = format!("/api/v1/admin/campaigns/{campaign}/releases");
    let (status, release) = api(app, admin, reqwest::Method::POST, &base, Some(json!({"note": ""}))).await;
    assert_eq!(status, StatusCode::CREATED, "{release}");
    let archive = download_release(app, admin, campaign, release["number"].as_i64().expect("number")).await;
    (atelier::core::releases::packing::unpack(&archive).expect("unpack"), archive)
}

/// A release's archive, downloaded.
pub async fn download_release(app: &TestApp, admin: &str, campaign: &str, number: i64) -> Vec<u8> {
    Client::new()
        .get(app.at(&format!("/api/v1/admin/campaigns/{campaign}/releases/{number}/archive")))
        .bearer_auth(admin)
        .send()
        .await
        .expect("download")
        .bytes()
        .await
        .expect("bytes")
        .to_vec()
}

/// The item a task page's form answers (its hidden `item_id` field).
pub fn item_on_page(html: &str) -> String {
    let marker = "name=\"item_id\" value=\"";
    let at = html.find(marker).unwrap_or_else(|| panic!("no item field in {html}")) + marker.len();
    html[at..at + 36].to_owned()
}

/// Uploads an image through the API as `admin`; the address it is served at.
pub async fn upload_png(app: &TestApp, admin: &str, image: &[u8]) -> String {
    let resp = Client::new()
        .post(app.at("/api/v1/admin/images"))
        .bearer_auth(admin)
        .header("content-type", "image/png")
        .body(image.to_vec())
        .send()
        .await
        .expect("upload");
    assert_eq!(resp.status(), StatusCode::CREATED);
    let stored: Value = resp.json().await.expect("json");
    stored["url"].as_str().expect("url").to_owned()
}

/// A real PNG of `w` x `h` pixels in one grey `shade` (uploads are decoded).
pub fn png(w: u32, h: u32, shade: u8) -> Vec<u8> {
    let mut out = std::io::Cursor::new(Vec::new());
    image::RgbImage::from_pixel(w, h, image::Rgb([shade, shade, shade]))
        .write_to(&mut out, image::ImageFormat::Png)
        .expect("encode");
    out.into_inner()
}
