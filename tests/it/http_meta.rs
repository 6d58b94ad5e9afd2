//! Health, readiness, metrics and the OpenAPI document.

use crate::fixtures::worker_with_questionnaire;
use crate::support::TestApp;
use reqwest::StatusCode;
use serde_json::Value;

#[tokio::test]
async fn health_readiness_and_metrics_answer() {
    let app = TestApp::spawn().await;
    let client = reqwest::Client::new();
    assert_eq!(client.get(app.at("/healthz")).send().await.expect("healthz").status(), StatusCode::OK);
    assert_eq!(client.get(app.at("/readyz")).send().await.expect("readyz").text().await.expect("body"), "ready");
    let resp = client.get(app.at("/healthz")).send().await.expect("healthz");
    assert!(resp.headers().contains_key("x-request-id"), "every response carries a request id");

    let (w, view) = worker_with_questionnaire(&app, "m").await;
    w.finish(&app, &view, 1).await;
    let anonymous = client.get(app.at("/metrics")).send().await.expect("metrics");
    assert_eq!(anonymous.status(), StatusCode::UNAUTHORIZED, "request counts are no one else's business");
    let admin =
        atelier::auth::users::create(&app.pool, atelier::auth::Role::Admin, "metrics-admin", "admin-password-2")
            .await
            .expect("admin");
    let admin = atelier::auth::tokens::create(&app.pool, admin.id).await.expect("token");
    let metrics = client.get(app.at("/metrics")).bearer_auth(&admin).send().await.expect("metrics");
    let metrics = metrics.text().await.expect("text");
    assert!(metrics.contains("atelier_http_requests_total"), "{metrics}");
    assert!(metrics.contains("atelier_http_request_duration_seconds"));
    assert!(metrics.contains("atelier_responses_stored_total"));
    assert!(metrics.contains("route=\"/api/v1/work/assignments/{id}/responses\""), "routes are labelled by pattern");
}

#[tokio::test]
async fn while_the_database_is_away_pages_and_the_api_say_when_to_retry() {
    let app = TestApp::spawn().await;
    app.pool.close().await;
    let client = reqwest::Client::new();
    let page =
        client.get(app.at("/join/a-token?worker_id=w")).header("accept", "text/html").send().await.expect("page");
    assert_eq!(page.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(page.headers()["retry-after"], "5", "a page's 503 says when to retry, as the API's does");
    assert!(page.headers()["content-type"].to_str().expect("type").starts_with("text/html"));
    let api = client.get(app.at("/api/v1/admin/campaigns")).bearer_auth("at_whatever").send().await.expect("api");
    assert_eq!(api.status(), StatusCode::SERVICE_UNAVAILABLE);
    assert_eq!(api.headers()["retry-after"], "5");
}

#[tokio::test]
async fn openapi_document_lists_every_api_route() {
    let app = TestApp::spawn().await;
    let doc: Value = reqwest::get(app.at("/api/v1/openapi.json")).await.expect("doc").json().await.expect("json");
    assert!(doc["openapi"].as_str().expect("version").starts_with("3."));
    // Each kind's answer format, with an example a script can copy.
    let schemas = &doc["components"]["schemas"];
    for (schema, key) in [
        ("VsdAnswer", "label"),
        ("FashionpediaAnswer", "attributes"),
        ("VtonAnswer", "rating"),
        ("A100Answer", "choice"),
    ] {
        assert!(schemas[schema]["properties"][key].is_object(), "{schema}: {}", schemas[schema]);
        assert!(
            schemas[schema]["example"][key].is_string()
                || schemas[schema]["example"][key].is_number()
                || schemas[schema]["example"][key].is_array(),
            "{schema} has an example"
        );
    }
    assert!(doc["paths"]["/api/v1/login"]["post"].is_object(), "scripts log in with JSON");
    // Every reference resolves; health checks need no credentials; the core's
    // settings say what annotators_per_batch holds (null, "every" or a number).
    let text = doc.to_string();
    for reference in text.split("\"$ref\":\"").skip(1).map(|r| &r[..r.find('"').expect("end")]) {
        let name = reference.trim_start_matches("#/components/schemas/");
        assert!(schemas[name].is_object(), "`{reference}` resolves");
    }
    for open in ["/healthz", "/readyz"] {
        assert_eq!(doc["paths"][open]["get"]["security"], serde_json::json!([{}]), "{open} needs no credentials");
    }
    assert_eq!(
        schemas["CoreSettings"]["properties"]["annotators_per_batch"]["$ref"],
        "#/components/schemas/AnnotatorsPerBatch"
    );
    let per_batch = &schemas["AnnotatorsPerBatch"]["oneOf"];
    assert_eq!(per_batch.as_array().map(Vec::len), Some(3), "{}", schemas["AnnotatorsPerBatch"]);
    let paths = doc["paths"].as_object().expect("paths");
    for expected in [
        "/healthz",
        "/readyz",
        "/metrics",
        "/api/v1/me",
        "/api/v1/openapi.json",
        "/api/v1/admin/campaigns",
        "/api/v1/admin/campaigns/{id}",
        "/api/v1/admin/campaigns/{id}/state",
        "/api/v1/admin/campaigns/{id}/items",
        "/api/v1/admin/campaigns/{id}/batches",
        "/api/v1/admin/campaigns/{id}/invitations",
        "/api/v1/admin/campaigns/{id}/responses",
        "/api/v1/admin/campaigns/{id}/responses.csv",
        "/api/v1/admin/campaigns/{id}/ground-truth",
        "/api/v1/admin/campaigns/{id}/ground-truth.csv",
        "/api/v1/admin/responses/{id}/exclude",
        "/api/v1/admin/users",
        "/api/v1/admin/images",
        "/api/v1/admin/campaigns/{id}/a100/questions",
        "/api/v1/admin/campaigns/{id}/a100/models",
        "/api/v1/admin/a100/pilot",
        "/api/v1/admin/campaigns/{id}/vton/triplets",
        "/api/v1/admin/campaigns/{id}/vton/curation",
        "/api/v1/admin/campaigns/{id}/vton/requeue",
        "/api/v1/admin/campaigns/{id}/vton/predictor",
        "/api/v1/admin/campaigns/{id}/vton/questionnaires.csv",
        "/api/v1/admin/tokens",
        "/api/v1/work/campaigns/{id}/assignment",
        "/api/v1/work/assignments/{id}",
        "/api/v1/work/assignments/{id}/responses",
        "/api/v1/work/assignments/{id}/complete",
        "/api/v1/expert/campaigns",
        "/api/v1/expert/campaigns/{id}/assignment",
        "/api/v1/expert/assignments/{id}",
        "/api/v1/expert/assignments/{id}/responses",
        "/api/v1/expert/assignments/{id}/complete",
    ] {
        assert!(paths.contains_key(expected), "{expected} missing from the OpenAPI document");
    }
    // And every documented operation is served (no 404/405 for its method).
    let client = reqwest::Client::new();
    for (path, item) in paths {
        for method in item.as_object().expect("operations").keys() {
            let url = app.at(&path.replace("{id}", &uuid::Uuid::new_v4().to_string()));
            let m = reqwest::Method::from_bytes(method.to_uppercase().as_bytes()).expect("method");
            let status =
                client.request(m, &url).header("authorization", "Bearer atl_x").send().await.expect("call").status();
            assert!(
                status != StatusCode::NOT_FOUND && status != StatusCode::METHOD_NOT_ALLOWED,
                "{method} {path}: {status}"
            );
        }
    }
}

#[tokio::test]
async fn the_openapi_document_says_which_errors_each_operation_gives_and_the_api_keeps_to_it() {
    let app = TestApp::spawn().await;
    let admin = crate::fixtures::admin_token(&app).await;
    let doc: Value = reqwest::get(app.at("/api/v1/openapi.json")).await.expect("doc").json().await.expect("json");
    assert_eq!(doc["paths"]["/api/v1/openapi.json"]["get"]["security"], serde_json::json!([{}]), "anyone may read it");
    for (path, item) in doc["paths"].as_object().expect("paths") {
        for (method, operation) in item.as_object().expect("item") {
            let responses = operation["responses"].as_object().expect("responses");
            let has = |status: &str| responses.contains_key(status);
            if path.starts_with("/api/v1/admin/") {
                assert!(has("401") && has("403"), "{method} {path}: {responses:?}");
            }
            if operation.get("requestBody").is_some() {
                assert!(has("400") && has("413") && has("415") && has("422"), "{method} {path}");
            }
            if path.contains('{') {
                assert!(has("400") && has("404"), "{method} {path}");
            }
        }
    }
    let client = reqwest::Client::new();
    // The scheme's name is case-insensitive; another scheme is no credential.
    let lower = client.get(app.at("/api/v1/admin/campaigns")).header("authorization", format!("bearer {admin}"));
    assert_eq!(lower.send().await.expect("get").status(), StatusCode::OK);
    let basic = client.get(app.at("/api/v1/admin/campaigns")).header("authorization", "Basic YWRtaW46eA==");
    let resp = basic.send().await.expect("get");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    let body: Value = resp.json().await.expect("json");
    assert_eq!(body["error"]["code"], "invalid_authorization");
    // `2.0` is an integer to JSON Schema; `2.5` days is refused.
    let token = |days: Value| {
        client
            .post(app.at("/api/v1/admin/tokens"))
            .bearer_auth(&admin)
            .json(&serde_json::json!({"expires_in_days": days}))
    };
    assert_eq!(token(serde_json::json!(2.0)).send().await.expect("post").status(), StatusCode::CREATED);
    assert_eq!(token(serde_json::json!(2.5)).send().await.expect("post").status(), StatusCode::UNPROCESSABLE_ENTITY);
    // A configuration is an object: `null` changes nothing.
    let id = crate::fixtures::new_campaign(&app, &admin, "vton", "config").await;
    let put = client
        .put(app.at(&format!("/api/v1/admin/campaigns/{id}/config?confirm=true")))
        .bearer_auth(&admin)
        .header("content-type", "application/json")
        .body("null");
    assert_eq!(put.send().await.expect("put").status(), StatusCode::UNPROCESSABLE_ENTITY);
    // A malformed bonus is refused whatever the format asked for.
    let csv = client
        .get(app.at(&format!("/api/v1/admin/campaigns/{id}/payouts.csv?format=full&amount=")))
        .bearer_auth(&admin);
    assert_eq!(csv.send().await.expect("get").status(), StatusCode::UNPROCESSABLE_ENTITY);
}

/// axe-core's `scrollable-region-focusable` (serious): a table that scrolls
/// sideways on a phone must be reachable by keyboard and named.
#[test]
fn every_sideways_scrolling_table_is_focusable_and_named() {
    let mut dirs = vec![std::path::PathBuf::from("templates")];
    let kinds = std::fs::read_dir("src/kinds").expect("kinds");
    dirs.extend(kinds.flatten().map(|k| k.path().join("templates")).filter(|p| p.is_dir()));
    let mut seen = 0;
    for dir in dirs {
        for file in std::fs::read_dir(&dir).expect("templates").flatten() {
            let text = std::fs::read_to_string(file.path()).expect("template");
            for (at, _) in text.match_indices("class=\"table-scroll\"") {
                let tag = &text[at..at + text[at..].find('>').expect("tag end")];
                assert!(
                    tag.contains("tabindex=\"0\"") && tag.contains("role=\"region\"") && tag.contains("aria-label="),
                    "{}: {tag}",
                    file.path().display()
                );
                seen += 1;
            }
        }
    }
    assert!(seen >= 20, "the scrolling tables were found ({seen})");
}
