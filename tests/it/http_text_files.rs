//! Files saved by spreadsheets and Windows editors start with a UTF-8 byte
//! order mark: every import takes them as if it were not there, through the
//! API, the page's upload box and the command line.

use crate::a100_service::question;
use crate::cli_stats::{atelier, write};
use crate::fixtures::{admin_token, logged_in_admin, new_campaign, upload_on_campaign_page};
use crate::support::TestApp;
use reqwest::StatusCode;
use serde_json::json;

const BOM: &str = "\u{feff}";

/// POSTs `body` with a content type and the admin's token; status and text.
async fn post(app: &TestApp, token: &str, path: &str, content_type: &str, body: String) -> (StatusCode, String) {
    let resp = reqwest::Client::new()
        .post(app.at(path))
        .bearer_auth(token)
        .header("content-type", content_type)
        .body(body)
        .send()
        .await
        .expect("post");
    (resp.status(), resp.text().await.expect("text"))
}

async fn count(app: &TestApp, sql: &str, campaign: &str) -> i64 {
    let id: uuid::Uuid = campaign.parse().expect("uuid");
    sqlx::query_scalar(sql).bind(id).fetch_one(&app.pool).await.expect("count")
}

#[tokio::test]
async fn imports_take_files_that_start_with_a_byte_order_mark() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;

    let a100 = new_campaign(&app, &token, "a100-lat", "A100 with a BOM").await;
    let set = json!({"questions": [question("q1"), question("q2")]}).to_string();
    let (status, body) = post(
        &app,
        &token,
        &format!("/api/v1/admin/campaigns/{a100}/a100/questions"),
        "application/json",
        format!("{BOM}{set}"),
    )
    .await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    let vton = new_campaign(&app, &token, "vton", "VTON with a BOM").await;
    let path = format!("/api/v1/admin/campaigns/{vton}/vton/triplets");
    let triplet = json!({"id": "j1", "garment": "g.png", "person": "p.png", "tryon": "t.png", "reference": "r.png",
                         "model": "m", "category": "upper", "dataset": "d"});
    let (status, body) =
        post(&app, &token, &path, "application/json", format!("{BOM}{}", json!({"triplets": [triplet]}))).await;
    assert_eq!(status, StatusCode::CREATED, "JSON: {body}");
    let csv = "id,garment,person,tryon,reference,model,category,dataset\r\nc1,g.png,p.png,t.png,r.png,m,upper,d\r\n";
    let (status, body) = post(&app, &token, &path, "text/csv", format!("{BOM}{csv}")).await;
    assert_eq!(status, StatusCode::CREATED, "CSV: {body}");

    // The campaign page's upload box, a file with the mark.
    let (client, csrf) = logged_in_admin(&app).await;
    let file = format!(
        "{BOM}id,garment,person,tryon,reference,model,category,dataset\nu1,g.png,p.png,t.png,r.png,m,upper,d\n"
    );
    let resp = upload_on_campaign_page(&app, &client, &csrf, &vton, file).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap_or_default());
    let items = count(&app, "SELECT count(*) FROM items WHERE campaign_id = $1", &vton).await;
    assert_eq!(items, 3, "one triplet from each of JSON, CSV and the page");
    let ids: Vec<String> =
        sqlx::query_scalar("SELECT external_id FROM items WHERE campaign_id = $1 ORDER BY external_id")
            .bind(vton.parse::<uuid::Uuid>().expect("uuid"))
            .fetch_all(&app.pool)
            .await
            .expect("ids");
    assert_eq!(ids, ["c1", "j1", "u1"], "the first column's name and values carry no mark");

    let vsd = new_campaign(&app, &token, "vsd", "VSD with a BOM").await;
    let rankings = format!("{BOM}model,query,candidate,rank\r\nm,q1,c1,0\r\n");
    let (status, body) =
        post(&app, &token, &format!("/api/v1/admin/campaigns/{vsd}/vsd/rankings"), "text/csv", rankings).await;
    assert_eq!(status, StatusCode::CREATED, "{body}");

    // The command line reads JSON files with the mark too.
    let dir = tempfile::tempdir().expect("tempdir");
    let gt = write(
        &dir,
        "gt.json",
        &format!("{BOM}{}", r#"[{"key": ["q1", "a"], "value": 1}, {"key": ["q1", "b"], "value": 0}]"#),
    );
    let scores = write(&dir, "scores.csv", &format!("{BOM}query,candidate,score\r\nq1,a,0.9\r\nq1,b,0.1\r\n"));
    let (ok, out, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--json"]);
    assert!(ok, "{err}");
    let report: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(report["roc_auc_micro"], 1.0);
}
