//! The VSD kind in the service: rankings in, the pool built and grown,
//! every expert labels every pair, the ground truth and its exports, the
//! estimates, flagged pairs and model scoring.

use crate::fixtures::{admin_token, api, expert_token, get_text};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};
use serde_json::{json, Value};

async fn post_csv(app: &TestApp, token: &str, path: &str, body: &str) -> (StatusCode, Value) {
    let resp = reqwest::Client::new()
        .post(app.at(path))
        .bearer_auth(token)
        .header("content-type", "text/csv")
        .body(body.to_owned())
        .send()
        .await
        .expect("post");
    let status = resp.status();
    (status, resp.json().await.unwrap_or(Value::Null))
}

/// Labels every pair left for the expert: `label(query, candidate)`.
pub(crate) async fn label_all(
    app: &TestApp,
    token: &str,
    campaign: &str,
    label: impl Fn(&str) -> &'static str,
) -> usize {
    let mut labelled = 0;
    loop {
        let path = format!("/api/v1/expert/campaigns/{campaign}/assignment");
        let (status, view) = api(app, token, Method::POST, &path, Some(json!({}))).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        if view.is_null() {
            return labelled;
        }
        let id = view["assignment"]["id"].as_str().expect("id").to_owned();
        for item in view["items"].as_array().expect("items") {
            assert!(item["payload"].get("proposed_by").is_none(), "experts never see who proposed a pair");
            assert!(item["payload"].get("query").is_none(), "nor the ids");
            // The pair's non-query image (ids sort, so it may be either side).
            let images = [&item["payload"]["query_image"], &item["payload"]["candidate_image"]];
            let image = images.iter().filter_map(|i| i.as_str()).find(|i| !i.contains("/q")).expect("image").to_owned();
            let body = json!({"item_id": item["id"], "answer": {"label": label(&image)}});
            let (status, r) =
                api(app, token, Method::POST, &format!("/api/v1/expert/assignments/{id}/responses"), Some(body)).await;
            assert_eq!(status, StatusCode::OK, "{r}");
            labelled += 1;
        }
        let (status, r) =
            api(app, token, Method::POST, &format!("/api/v1/expert/assignments/{id}/complete"), None).await;
        assert_eq!(status, StatusCode::OK, "{r}");
    }
}

#[tokio::test]
async fn rankings_become_a_pool_that_every_expert_labels_and_the_exports_follow_the_votes() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (status, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vsd", "name": "VSD", "config": {"k": 2, "catalog": 10, "image_base_url": "https://img.example/"}})),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{c}");
    assert_eq!(c["settings"]["participants"], "experts");
    assert_eq!(c["settings"]["annotators_per_batch"], "every");
    let id = c["id"].as_str().expect("id").to_owned();
    let base = format!("/api/v1/admin/campaigns/{id}/vsd");

    // A bad row refuses the whole file, naming the line and field.
    let (status, err) =
        post_csv(&app, &admin, &format!("{base}/rankings"), "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,x\n").await;
    assert_eq!((status, err["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_rankings")));
    assert!(err["error"]["message"].as_str().expect("message").contains("line 3: rank"), "{err}");
    // Also when the bad row comes after the first chunks were inserted (rows
    // are parsed and stored 5,000 at a time, in one transaction).
    let mut long: String = (0..12_000).map(|i| format!("m1,q{},c{i},{}\n", i / 100, i % 100)).collect();
    long.push_str("m1,q0,late,-1\n");
    let (status, err) =
        post_csv(&app, &admin, &format!("{base}/rankings"), &format!("model,query,candidate,rank\n{long}")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(err["error"]["message"].as_str().expect("message").contains("line 12002: rank"), "{err}");
    let lines: String = (0..6_000)
        .map(|i| format!("{{\"model\":\"m\",\"query\":\"q\",\"candidate\":\"c{i}\",\"rank\":{i}}}\n"))
        .collect();
    let (status, err) =
        post_csv(&app, &admin, &format!("{base}/rankings"), &format!("{lines}\n{{\"model\":\"m\"}}\n")).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{err}");
    assert!(err["error"]["message"].as_str().expect("message").contains("line 6002"), "{err}");
    let stored: i64 =
        sqlx::query_scalar("SELECT count(*) FROM vsd_rankings").fetch_one(&app.pool).await.expect("count");
    assert_eq!(stored, 0, "a refused file leaves nothing stored");
    let (status, _) = post_csv(
        &app,
        &admin,
        &format!("{base}/rankings"),
        "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\nm1,q1,c,2\nm1,q2,a,0\nm1,q2,d,1\n",
    )
    .await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, s) = api(&app, &admin, Method::GET, &format!("{base}/suspects"), None).await;
    assert_eq!((s["suspects"].as_u64(), s["per_model"]["m1"].as_u64()), (Some(4), Some(4)), "{s}");
    let (status, change) = api(&app, &admin, Method::POST, &format!("{base}/pool"), None).await;
    assert_eq!(status, StatusCode::OK, "{change}");
    assert_eq!(change, json!({"suspects": 4, "added": 4, "merged": 0}));
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, body) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{body}");
    }

    // Two experts label everything: e1 says only `a` is similar, e2 also `b`.
    let (e1, e2) = (expert_token(&app, "e1").await, expert_token(&app, "e2").await);
    assert_eq!(label_all(&app, &e1, &id, |img| if img.ends_with("/a") { "1" } else { "0" }).await, 4);
    assert_eq!(
        label_all(&app, &e2, &id, |img| if img.ends_with("/a") || img.ends_with("/b") { "1" } else { "0" }).await,
        4
    );

    // Another model comes later: its proposals merge into the pairs there and add new ones.
    let (status, _) =
        post_csv(&app, &admin, &format!("{base}/rankings"), "model,query,candidate,rank\nm2,q1,b,0\nm2,q1,e,1\n").await;
    assert_eq!(status, StatusCode::CREATED);
    let (_, change) = api(&app, &admin, Method::POST, &format!("{base}/pool"), None).await;
    assert_eq!(change, json!({"suspects": 5, "added": 1, "merged": 1}), "only (q1, b) gained a proposer");
    let (_, again) = api(&app, &admin, Method::POST, &format!("{base}/pool"), None).await;
    assert_eq!(again, json!({"suspects": 5, "added": 0, "merged": 0}), "re-pooling with nothing new");
    let (status, body) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/batches"), Some(json!({"seed": 2})))
            .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(label_all(&app, &e1, &id, |_| "unsure").await, 1, "only the new pair is asked");
    // e2 flags the new pair as broken.
    let path = format!("/api/v1/expert/campaigns/{id}/assignment");
    let (_, view) = api(&app, &e2, Method::POST, &path, Some(json!({}))).await;
    let a = view["assignment"]["id"].as_str().expect("id");
    let body = json!({"item_id": view["items"][0]["id"], "answer": {"label": "broken", "reason": "image missing"}});
    let (status, _) =
        api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body)).await;
    assert_eq!(status, StatusCode::OK);
    // The ground truth moves only with submitted batches (the flag is not there yet).
    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    assert_eq!(gt["flagged"], json!([]), "a batch still being labelled moves nothing");
    let (status, r) = api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/complete"), None).await;
    assert_eq!(status, StatusCode::OK, "{r}");

    let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    let pair = |q: &str, c: &str| {
        gt["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .find(|p| p["query"] == q && p["candidate"] == c)
            .cloned()
            .expect("pair")
    };
    assert_eq!(pair("q1", "a")["label"], 1);
    assert_eq!(pair("q1", "a")["unanimous"], true);
    assert_eq!(pair("q1", "b")["label"], 0, "a 1-1 tie is negative");
    assert_eq!(pair("q1", "b")["proposed_by"], json!({"m1": 1, "m2": 0}), "provenance grew");
    assert_eq!(pair("q1", "e")["label"], Value::Null, "only unsure (and a flag)");
    assert_eq!(
        gt["flagged"][0]["reasons"].as_object().expect("reasons").values().next(),
        Some(&json!("image missing"))
    );
    // The admin sees the flagged pair's images beside the reason.
    let page = get_text(&app, &admin, &format!("/admin/campaigns/{id}/vsd")).await;
    let flagged = &page[page.find(r#"id="flagged""#).expect("flagged")..];
    for (role, image) in [("query", "q1"), ("candidate", "e")] {
        let thumb =
            format!(r#"<img src="https://img.example/{image}" alt="{role} {image}" loading="lazy" class="vsd-thumb">"#);
        assert!(flagged.contains(&thumb), "{thumb} in {flagged}");
    }
    assert!(flagged.contains("image missing"), "{flagged}");
    assert_eq!(gt["estimate"]["labelled"], 4);
    assert_eq!(gt["estimate"]["positives"], 2);
    assert_eq!(gt["estimate"]["p_k"], 0.5);
    assert_eq!(gt["estimate"]["pairs_total"], 18, "2 queries x (10 - 1)");

    // The benchmark's own format holds exactly the labelled pairs.
    let benchmark: Value =
        serde_json::from_str(&get_text(&app, &admin, &format!("{base}/benchmark.json")).await).expect("JSON");
    let mut keys: Vec<(String, i64)> = benchmark
        .as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                format!("{}-{}", r["key"][0].as_str().expect("q"), r["key"][1].as_str().expect("c")),
                r["value"].as_i64().expect("v"),
            )
        })
        .collect();
    keys.sort();
    // Keys are oriented query first, as the benchmark's evaluation expects.
    assert_eq!(keys, vec![("q1-a".into(), 1), ("q1-b".into(), 0), ("q2-a".into(), 1), ("q2-d".into(), 0)]);
    let csv = get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/ground-truth.csv")).await;
    assert!(csv.starts_with(
        "query,candidate,label,similar,not_similar,unsure,broken,unanimous,sample,proposed_by,votes,complete\n"
    ));
    assert!(csv.contains("q1,b,0,1,1,0,0,false,false,m1:1 m2:0,"), "the query first: {csv}");

    // Model scoring: a model that ranks the positives first.
    let scores = "query,candidate,score\nq1,a,0.9\nq1,b,0.2\nq2,a,0.8\nq2,d,0.1\n";
    let (status, r) = post_csv(&app, &admin, &format!("{base}/models?model=good"), scores).await;
    assert_eq!(status, StatusCode::CREATED, "{r}");
    let (status, err) =
        post_csv(&app, &admin, &format!("{base}/models?model=bad"), "query,candidate,score\nq1,a,high\n").await;
    assert_eq!((status, err["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_scores")));
    let (_, report) = api(&app, &admin, Method::GET, &format!("{base}/models"), None).await;
    let good = &report["models"][0];
    assert_eq!(good["model"], "good");
    assert_eq!(good["generator"], false);
    assert_eq!(good["labelled_negatives"]["roc_auc_micro"], 1.0);
    assert_eq!(good["labelled_negatives"]["hr"]["5"], 0.2, "2 positives in the top 5 of 2 queries: 2 / (5 x 2)");
    assert_eq!(report["robustness"]["leave_out"].as_array().expect("rows").len(), 2, "one row per generator");

    // The page shows it all.
    let (client, _) = crate::fixtures::logged_in_admin(&app).await;
    let page = client
        .get(app.at(&format!("/admin/campaigns/{id}/vsd")))
        .send()
        .await
        .expect("page")
        .text()
        .await
        .expect("html");
    assert!(page.contains("Suspects at k = 2") && page.contains("image missing") && page.contains("good"), "{page}");
    // The kind serves its own styles and the task page links them.
    for (path, marker) in [("/kinds/vsd/style.css", ".vsd-task"), ("/kinds/fashionpedia/style.css", ".fp-task")] {
        let css = reqwest::get(app.at(path)).await.expect("css");
        assert!(css.headers()["content-type"].to_str().expect("type").starts_with("text/css"));
        assert!(css.text().await.expect("text").contains(marker));
    }
}

#[tokio::test]
async fn the_benchmark_sites_real_records_import_and_export_with_their_labels() {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/vsd/site_examples");
    let Ok(entries) = std::fs::read_dir(&dir) else {
        crate::support::say_skipped("vsd site examples: ../shared/reference/vsd/site_examples not found");
        return;
    };
    let mut records: Vec<Value> = Vec::new();
    for entry in entries.flatten() {
        let text = std::fs::read_to_string(entry.path()).expect("readable");
        records.extend(serde_json::from_str::<Vec<Value>>(&text).expect("JSON array"));
    }
    assert_eq!(records.len(), 80);
    // Each record: a query, a gallery image, each model's rank of it, the experts' label.
    let mut lines = Vec::new();
    for r in &records {
        for model in ["clip", "beit", "argus", "dino"] {
            lines.push(
                json!({"model": model, "query": r["query"], "candidate": r["gallery"],
                              "rank": r[format!("rank_{model}")], "score": r[format!("sim_{model}")]})
                .to_string(),
            );
        }
    }
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vsd", "name": "site", "config": {"k": 100, "pairs_per_batch": 100}})),
    )
    .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let (status, body) =
        post_csv(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/vsd/rankings"), &lines.join("\n")).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    assert_eq!(body["stored"], 320, "JSON lines are accepted too");
    let (_, change) = api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/vsd/pool"), None).await;
    assert_eq!(change["added"], 74, "80 records, 74 distinct pairs");
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        let (status, b) =
            api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
        assert!(status.is_success(), "{b}");
    }
    // Two experts give each pair its published label.
    let label_of: std::collections::HashMap<(String, String), i64> = records
        .iter()
        .map(|r| {
            let key = (r["query"].as_str().expect("q").to_owned(), r["gallery"].as_str().expect("g").to_owned());
            (key, r["value"].as_i64().expect("value"))
        })
        .collect();
    let items: Vec<(uuid::Uuid, String, String)> =
        sqlx::query_as("SELECT id, payload->>'query', payload->>'candidate' FROM items")
            .fetch_all(&app.pool)
            .await
            .expect("items");
    let by_id: std::collections::HashMap<String, i64> = items
        .iter()
        .map(|(id, a, b)| {
            let v = label_of.get(&(a.clone(), b.clone())).or_else(|| label_of.get(&(b.clone(), a.clone())));
            (id.to_string(), *v.expect("a labelled record"))
        })
        .collect();
    for name in ["site-e1", "site-e2"] {
        let token = expert_token(&app, name).await;
        loop {
            let (_, view) =
                api(&app, &token, Method::POST, &format!("/api/v1/expert/campaigns/{id}/assignment"), Some(json!({})))
                    .await;
            if view.is_null() {
                break;
            }
            let a = view["assignment"]["id"].as_str().expect("id").to_owned();
            for item in view["items"].as_array().expect("items") {
                let label = by_id[item["id"].as_str().expect("id")].to_string();
                let body = json!({"item_id": item["id"], "answer": {"label": label}});
                let (status, _) =
                    api(&app, &token, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body))
                        .await;
                assert_eq!(status, StatusCode::OK);
            }
            api(&app, &token, Method::POST, &format!("/api/v1/expert/assignments/{a}/complete"), None).await;
        }
    }
    let benchmark: Value = serde_json::from_str(
        &get_text(&app, &admin, &format!("/api/v1/admin/campaigns/{id}/vsd/benchmark.json")).await,
    )
    .expect("JSON");
    let exported: std::collections::HashMap<(String, String), i64> = benchmark
        .as_array()
        .expect("array")
        .iter()
        .map(|r| {
            (
                (r["key"][0].as_str().expect("q").to_owned(), r["key"][1].as_str().expect("c").to_owned()),
                r["value"].as_i64().expect("v"),
            )
        })
        .collect();
    assert_eq!(exported, label_of, "the export is the benchmark's own records, query first");
}

#[tokio::test]
async fn a_cached_ground_truth_follows_every_change_of_its_data() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (_, c) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vsd", "name": "cache", "config": {"k": 1}})),
    )
    .await;
    let id = c["id"].as_str().expect("id").to_owned();
    let base = format!("/api/v1/admin/campaigns/{id}/vsd");
    let gt = || async {
        let (_, gt) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
        gt["pairs"][0].clone()
    };
    post_csv(&app, &admin, &format!("{base}/rankings"), "model,query,candidate,rank\nm1,q1,a,0\n").await;
    api(&app, &admin, Method::POST, &format!("{base}/pool"), None).await;
    assert_eq!(gt().await["proposed_by"], json!({"m1": 0}));
    assert_eq!(gt().await["proposed_by"], json!({"m1": 0}), "served again");
    // A merge changes an item's payload only: the next ground truth shows it.
    post_csv(&app, &admin, &format!("{base}/rankings"), "model,query,candidate,rank\nm2,q1,a,0\n").await;
    api(&app, &admin, Method::POST, &format!("{base}/pool"), None).await;
    assert_eq!(gt().await["proposed_by"], json!({"m1": 0, "m2": 0}));
    // A vote too.
    for (path, body) in [("batches", json!({"seed": 1})), ("state", json!({"state": "open"}))] {
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/{path}"), Some(body)).await;
    }
    let expert = expert_token(&app, "cache-e").await;
    label_all(&app, &expert, &id, |_| "1").await;
    assert_eq!(gt().await["label"], 1);
    // And a settings change.
    let (status, _) = api(
        &app,
        &admin,
        Method::PUT,
        &format!("/api/v1/admin/campaigns/{id}/config?confirm=true"),
        Some(json!({"k": 1, "catalog": 5})),
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    let (_, full) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{id}/ground-truth"), None).await;
    assert_eq!(full["estimate"]["pairs_total"], 4, "1 query x (5 - 1)");
}

#[tokio::test]
async fn only_pairs_every_expert_has_answered_are_exported_unless_partial_results_are_asked_for() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "partial", "config": {"k": 2, "image_base_url": "https://img.example/"}}),
        "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\n",
    )
    .await;
    let (e1, e2) = (expert_token(&app, "e1").await, expert_token(&app, "e2").await);
    assert_eq!(label_all(&app, &e1, &id, |_| "1").await, 2);
    // e2 says "not similar" to one pair and has not submitted the batch yet.
    let path = format!("/api/v1/expert/campaigns/{id}/assignment");
    let (_, view) = api(&app, &e2, Method::POST, &path, Some(json!({}))).await;
    let a = view["assignment"]["id"].as_str().expect("id").to_owned();
    let body = json!({"item_id": view["items"][0]["id"], "answer": {"label": "0"}});
    let (status, _) =
        api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body)).await;
    assert_eq!(status, StatusCode::OK);

    let get = |path: String| {
        let (app, admin) = (&app, &admin);
        async move {
            let resp = reqwest::Client::new().get(app.at(&path)).bearer_auth(admin).send().await.expect("get");
            let left_out =
                resp.headers().get("x-atelier-incomplete-pairs").map(|v| v.to_str().unwrap_or("").to_owned());
            (left_out, resp.text().await.expect("text"))
        }
    };
    let base = format!("/api/v1/admin/campaigns/{id}");
    let (left_out, body) = get(format!("{base}/vsd/benchmark.json")).await;
    assert_eq!((left_out.as_deref(), body.as_str()), (Some("2"), "[]"), "e2 has started: nothing is final");
    let (_, body) = get(format!("{base}/vsd/benchmark.json?partial=true")).await;
    let partial: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(partial.as_array().map(Vec::len), Some(2), "e1's submitted votes, on request: {partial}");
    let (_, csv) = get(format!("{base}/ground-truth.csv")).await;
    assert_eq!(csv.lines().count(), 1, "only the header: {csv}");
    let (_, csv) = get(format!("{base}/ground-truth.csv?partial=true")).await;
    assert!(csv.lines().skip(1).all(|l| l.ends_with(",false")) && csv.lines().count() == 3, "{csv}");
    let (_, gt) = api(&app, &admin, Method::GET, &format!("{base}/ground-truth"), None).await;
    assert_eq!((gt["incomplete"].as_u64(), gt["estimate"]["labelled"].as_u64()), (Some(2), Some(0)), "{gt}");
    assert!(gt["label_rule"].as_str().unwrap_or("").contains("unsure abstains"), "the export states its rule");

    // e2 finishes: both pairs final, the tie (1 against 0) negative for the one e2 rejected.
    let body = json!({"item_id": view["items"][1]["id"], "answer": {"label": "1"}});
    let (status, _) =
        api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body)).await;
    assert_eq!(status, StatusCode::OK);
    let (status, _) = api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/complete"), None).await;
    assert_eq!(status, StatusCode::OK);
    let (left_out, body) = get(format!("{base}/vsd/benchmark.json")).await;
    let labels: Value = serde_json::from_str(&body).expect("json");
    assert_eq!(left_out.as_deref(), Some("0"));
    let values: Vec<i64> = labels.as_array().expect("array").iter().filter_map(|r| r["value"].as_i64()).collect();
    assert_eq!((values.len(), values.iter().sum::<i64>()), (2, 1), "{labels}");

    // A release holds the benchmark's format, the suspects, the estimates and
    // the model-scoring tables (scores given as (candidate, query) count too).
    let scores = "query,candidate,score\na,q1,0.9\nq1,b,0.2\n";
    let (status, body) = post_csv(&app, &admin, &format!("{base}/vsd/models?model=mine"), scores).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");
    let (_, live) = api(&app, &admin, Method::GET, &format!("{base}/vsd/models"), None).await;
    let (files, archive) = crate::fixtures::cut_release(&app, &admin, &id).await;
    let scoring: Value = serde_json::from_slice(&files["vsd_model_scores.json"]).expect("json");
    assert_eq!(scoring["models"][0]["model"], "mine");
    assert!(live["averages"].as_str().unwrap_or("").contains("both a positive and a negative"), "{live}");
    assert_eq!(scoring["models"][0]["labelled_negatives"], live["models"][0]["labelled_negatives"], "{scoring}");
    assert!(scoring["models"][0]["labelled_negatives"]["roc_auc_micro"].is_number(), "both pairs scored: {scoring}");
    let dir = tempfile::tempdir().expect("tempdir");
    let path = dir.path().join("v1.tar.gz");
    std::fs::write(&path, &archive).expect("write");
    let (ok, out, err) = crate::cli_stats::atelier(&["release", "verify", path.to_str().expect("path")]);
    assert!(ok, "the scoring tables are recomputed from the release's own files: {out}{err}");
    let released: Value = serde_json::from_slice(&files["vsd_ground_truth.json"]).expect("json");
    assert_eq!(released, labels, "the same as the live benchmark.json");
    let suspects = String::from_utf8_lossy(&files["vsd_suspects.csv"]).to_string();
    assert!(suspects.starts_with("query,candidate,proposed_by,label,complete\nq1,a,m1:0,"), "{suspects}");
    let estimates: Value = serde_json::from_slice(&files["vsd_estimates.json"]).expect("json");
    assert_eq!(estimates["labelled"], 2);
}

#[tokio::test]
async fn the_random_sample_is_drawn_from_the_catalog_never_a_query_pair_in_the_wild() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // Wild: queries q1, q2 rank each other and catalog images.
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "wild", "config": {"k": 1, "wild": true}}),
        "model,query,candidate,rank\nm,q1,q2,0\nm,q2,q1,0\nm,q1,c1,1\n",
    )
    .await;
    let catalog: Vec<String> = (1..=40).map(|i| format!("c{i}")).chain(["q1".to_owned()]).collect();
    let path = format!("/api/v1/admin/campaigns/{id}/vsd/sample");
    // b from Chebyshev: 1 / (0.5 x 0.1) = 20.
    let body = json!({"epsilon": 0.5, "q": 0.1, "seed": 9, "catalog": catalog});
    let (status, added) = api(&app, &admin, Method::POST, &path, Some(body)).await;
    assert_eq!(status, StatusCode::OK, "{added}");
    assert_eq!(
        (added["added"].as_u64(), added["b"].as_u64(), added["population"].as_str()),
        (Some(20), Some(20), Some("catalog"))
    );
    assert_eq!(added["candidates"], 40, "a query listed in the catalog is no candidate in the wild");
    let sampled: Vec<Value> = sqlx::query_scalar("SELECT payload FROM items WHERE payload->>'sample' = 'true'")
        .fetch_all(&app.pool)
        .await
        .expect("items");
    assert_eq!(sampled.len(), 20);
    for p in &sampled {
        let (q, c) = (p["query"].as_str().expect("q"), p["candidate"].as_str().expect("c"));
        assert!(q.starts_with('q') && c.starts_with('c'), "a query and a catalog image: {p}");
        assert_eq!(p["sample_seed"], 9);
    }
    let (status, err) = api(&app, &admin, Method::POST, &path, Some(json!({"seed": 1}))).await;
    assert_eq!((status, err["error"]["code"].as_str()), (StatusCode::UNPROCESSABLE_ENTITY, Some("invalid_sample")));
}

#[tokio::test]
async fn refused_forms_on_the_vsd_page_stay_beside_the_form_with_what_was_typed() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &admin, "vsd", "VSD forms").await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let post = |path: &'static str, fields: Vec<(&'static str, &'static str)>| {
        let (client, csrf, url) = (client.clone(), csrf.clone(), app.at(&format!("/admin/campaigns/{id}/vsd/{path}")));
        async move {
            let mut form = vec![("csrf_token", csrf.as_str())];
            form.extend(fields);
            let resp = client.post(url).form(&form).send().await.expect("post");
            (resp.status(), resp.text().await.expect("html"))
        }
    };
    // Rankings with a rank that is not a number: nothing stored, the text kept.
    let (status, html) = post("rankings", vec![("content", "model,query,candidate,rank\nm1,q1,a,first\n")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(r#"id="rankings-error">Nothing was imported: "#), "{html}");
    assert!(html.contains("m1,q1,a,first\n</textarea>"), "the pasted text is kept: {html}");
    let rows: i64 = sqlx::query_scalar("SELECT count(*) FROM vsd_rankings").fetch_one(&app.pool).await.expect("count");
    assert_eq!(rows, 0);
    // Adding suspects with no rankings is refused beside the suspects.
    let (status, html) = post("pool", vec![]).await;
    assert!(status.is_client_error(), "{status}");
    let suspects = &html[html.find(r#"id="suspects""#).expect("suspects section")..];
    assert!(suspects[..2000].contains(r#"<p class="error" role="alert">"#), "{suspects}");
    // Scores that are not CSV: the model name kept.
    let (status, html) = post("models", vec![("model", "my-model"), ("content", "query,candidate\nq1\n")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("Not scored: ") && html.contains(r#"value="my-model""#), "{html}");
}

#[tokio::test]
async fn the_p_hat_sample_is_drawn_from_all_of_a_and_counts_only_pairs_every_expert_answered() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    // Four queries, each ranking c1, c2 first (S_k, k = 2: 8 pairs of A's 4 x 8 = 32).
    let rankings: String = std::iter::once("model,query,candidate,rank\n".to_owned())
        .chain((1..=4).flat_map(|q| (1..=3).map(move |c| format!("m,q{q},c{c},{}\n", c - 1))))
        .collect();
    let id = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "p-hat", "config": {"k": 2, "pairs_per_batch": 40, "image_base_url": "https://img.example/"}}),
        &rankings,
    )
    .await;
    let catalog: Vec<String> = (1..=8).map(|c| format!("c{c}")).collect();
    let path = format!("/api/v1/admin/campaigns/{id}/vsd/sample");
    let (status, added) =
        api(&app, &admin, Method::POST, &path, Some(json!({"b": 16, "seed": 5, "catalog": catalog}))).await;
    assert_eq!(status, StatusCode::OK, "{added}");
    // Uniform over A: about 16 x 8 / 32 = 4 of the draws are suspects (never 0, as drawing from A \ S_k gave).
    let in_suspects = added["in_suspects"].as_u64().expect("in_suspects");
    assert!((1..=8).contains(&in_suspects), "{added}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("items");
    assert_eq!(items as u64, 8 + 16 - in_suspects, "a drawn suspect is not labelled twice");
    let marked: i64 = sqlx::query_scalar("SELECT count(*) FROM items WHERE payload->>'in_sample' = 'true'")
        .fetch_one(&app.pool)
        .await
        .expect("marked");
    assert_eq!(marked as u64, in_suspects);
    let (status, body) =
        api(&app, &admin, Method::POST, &format!("/api/v1/admin/campaigns/{id}/batches"), Some(json!({"seed": 1})))
            .await;
    assert!(status.is_success(), "{body}");

    // e1 labels everything (c1 similar); e2 answers one pair and leaves the batch open.
    let similar = |image: &str| if image.ends_with("/c1") { "1" } else { "0" };
    let (e1, e2) = (expert_token(&app, "p1").await, expert_token(&app, "p2").await);
    assert_eq!(label_all(&app, &e1, &id, similar).await, (8 + 16 - in_suspects) as usize);
    let (_, view) =
        api(&app, &e2, Method::POST, &format!("/api/v1/expert/campaigns/{id}/assignment"), Some(json!({}))).await;
    let a = view["assignment"]["id"].as_str().expect("id").to_owned();
    // As label_all labels it (the pair's non-query image decides), so that e2's later pass agrees.
    let first = &view["items"][0]["payload"];
    let images = [&first["query_image"], &first["candidate_image"]];
    let image = images.iter().filter_map(|i| i.as_str()).find(|i| !i.contains("/q")).expect("image");
    let body = json!({"item_id": view["items"][0]["id"], "answer": {"label": similar(image)}});
    let (status, _) =
        api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/responses"), Some(body)).await;
    assert_eq!(status, StatusCode::OK);
    let gt_path = format!("/api/v1/admin/campaigns/{id}/ground-truth");
    let (_, gt) = api(&app, &admin, Method::GET, &gt_path, None).await;
    let estimate = &gt["estimate"];
    assert!(estimate["sample"].is_null(), "no sample pair is final while e2 has started: {estimate}");
    assert_eq!(estimate["sample_incomplete"], 16, "{estimate}");
    assert_eq!(estimate["sample_in_suspects"], in_suspects, "{estimate}");

    // e2 finishes: every sample pair is final; (b, a) follow the rule written out from the paper:
    // b labelled sample pairs, a of them positive, p-hat = max(p_LB, a / b).
    label_all(&app, &e2, &id, similar).await;
    let (status, _) = api(&app, &e2, Method::POST, &format!("/api/v1/expert/assignments/{a}/complete"), None).await;
    assert!(status.is_success() || status == StatusCode::CONFLICT);
    let (_, gt) = api(&app, &admin, Method::GET, &gt_path, None).await;
    let sample = gt["sample"].as_array().expect("sample");
    assert_eq!(sample.len(), 16, "{gt}");
    let expected_a = sample.iter().filter(|p| p["candidate"] == "c1" || p["query"] == "c1").count();
    assert_eq!(gt["estimate"]["sample"], json!({"b": 16, "a": expected_a}), "{}", gt["estimate"]);
}
