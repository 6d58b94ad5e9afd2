//! What the database itself guarantees about stored answers, whatever
//! writes them: an answer belongs to its assignment's campaign and
//! annotator and names an item of that campaign; what answers name is never
//! deleted or re-keyed under them. (Checked per statement by the answer
//! counter's trigger, migration 0022, in place of two foreign keys.)

use crate::fixtures::{admin_token, join, open_vton_campaign, WorkerSession};
use crate::support::TestApp;
use serde_json::json;
use sqlx::PgPool;
use uuid::Uuid;

async fn count(pool: &PgPool, sql: &str) -> i64 {
    sqlx::query_scalar(sql).fetch_one(pool).await.expect("count")
}

/// The constraint a refused statement names.
async fn refused(pool: &PgPool, sql: &str, binds: &[Uuid]) -> String {
    let mut query = sqlx::query(sql);
    for b in binds {
        query = query.bind(*b);
    }
    match query.execute(pool).await {
        Ok(done) => panic!("`{sql}` was accepted ({} rows)", done.rows_affected()),
        Err(e) => {
            let db = e.as_database_error().unwrap_or_else(|| panic!("not a database error: {e}"));
            db.constraint().map(str::to_owned).unwrap_or_else(|| db.code().unwrap_or_default().into_owned())
        }
    }
}

const INSERT: &str = "INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer)
                      VALUES (gen_random_uuid(), $1, $2, $3, $4, '{\"rating\": 2}')";

/// Two open VTON campaigns and a worker holding a questionnaire of the first.
struct Started {
    app: TestApp,
    campaign: String,
    other_campaign: String,
    other_invitation: String,
    worker: WorkerSession,
    assignment: Uuid,
    items: Vec<Uuid>,
}

async fn started(tasks: usize) -> Started {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let config = json!({"tasks_per_questionnaire": tasks, "sanity_per_questionnaire": 1});
    let (campaign, invitation) = open_vton_campaign(&app, &admin, tasks + 1, 1, config.clone()).await;
    let (other_campaign, other_invitation) = open_vton_campaign(&app, &admin, tasks + 1, 1, config).await;
    let worker = join(&app, &invitation, "w").await;
    let (_, view) = worker.next(&app, &campaign).await;
    let assignment: Uuid = view["assignment"]["id"].as_str().and_then(|s| s.parse().ok()).expect("assignment");
    let handles: Vec<Uuid> =
        view["items"].as_array().expect("items").iter().filter_map(|i| i["id"].as_str()?.parse().ok()).collect();
    // The worker knows items by their handles; the database by their ids.
    let items = crate::fixtures::items_of_handles(&app, assignment, &handles).await;
    Started { app, campaign, other_campaign, other_invitation, worker, assignment, items }
}

#[tokio::test]
async fn answers_outside_their_assignment_or_campaign_are_refused_and_what_they_name_stays() {
    let Started { app, campaign, other_campaign, other_invitation, worker: w, assignment, items, .. } =
        started(3).await;
    let (status, _) = w
        .post(
            &app,
            &format!("/api/v1/work/assignments/{assignment}/responses"),
            json!({"item_id": items[0], "answer": {"rating": 2}}),
        )
        .await;
    assert_eq!(status, reqwest::StatusCode::OK);
    let other = join(&app, &other_invitation, "o").await;
    other.next(&app, &other_campaign).await;
    let pool = &app.pool;
    let (campaign, other_campaign): (Uuid, Uuid) =
        (campaign.parse().expect("uuid"), other_campaign.parse().expect("uuid"));
    let worker: Uuid = w.user_id.parse().expect("uuid");
    let stranger: Uuid = other.user_id.parse().expect("uuid");
    let foreign_item: Uuid = sqlx::query_scalar("SELECT id FROM items WHERE campaign_id = $1 LIMIT 1")
        .bind(other_campaign)
        .fetch_one(pool)
        .await
        .expect("item");

    // Inserted directly, past the service: each broken rule is refused.
    for (binds, constraint, what) in [
        ([assignment, other_campaign, items[1], worker], "responses_match_assignment", "another campaign"),
        ([assignment, campaign, items[1], stranger], "responses_match_assignment", "another annotator"),
        ([Uuid::new_v4(), campaign, items[1], worker], "responses_match_assignment", "no such assignment"),
        ([assignment, campaign, foreign_item, worker], "responses_item_in_campaign", "another campaign's item"),
        ([assignment, campaign, Uuid::new_v4(), worker], "responses_item_in_campaign", "no such item"),
    ] {
        assert_eq!(refused(pool, INSERT, &binds).await, constraint, "an answer naming {what}");
    }
    // One bad row refuses the whole statement.
    let two_rows = "INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer)
                    VALUES (gen_random_uuid(), $1, $2, $3, $4, '{\"rating\": 1}'),
                           (gen_random_uuid(), $1, $2, $5, $4, '{\"rating\": 1}')";
    assert_eq!(
        refused(pool, two_rows, &[assignment, campaign, items[1], worker, foreign_item]).await,
        "responses_item_in_campaign"
    );
    assert_eq!(count(pool, "SELECT count(*) FROM responses").await, 1, "nothing refused was stored");
    // A good row inserted directly is counted like any other.
    sqlx::query(INSERT).bind(assignment).bind(campaign).bind(items[1]).bind(worker).execute(pool).await.expect("ok");
    let answered: i32 = sqlx::query_scalar("SELECT answered FROM assignments WHERE id = $1")
        .bind(assignment)
        .fetch_one(pool)
        .await
        .expect("answered");
    assert_eq!(answered, 2);

    // What answers name stays as it is.
    assert_eq!(
        refused(pool, "DELETE FROM assignments WHERE id = $1", &[assignment]).await,
        "responses_match_assignment",
        "an assignment holding answers"
    );
    // (Batches name their items too: those go first, in the same transaction.)
    let mut tx = pool.begin().await.expect("begin");
    sqlx::query("DELETE FROM batch_items WHERE item_id IN (SELECT id FROM items WHERE campaign_id = $1)")
        .bind(campaign)
        .execute(&mut *tx)
        .await
        .expect("batch items");
    let items_gone = sqlx::query("DELETE FROM items WHERE campaign_id = $1").bind(campaign).execute(&mut *tx).await;
    let constraint = items_gone.err().and_then(|e| e.as_database_error()?.constraint().map(str::to_owned));
    assert_eq!(constraint.as_deref(), Some("responses_item_in_campaign"), "the items of a campaign with assignments");
    tx.rollback().await.expect("rollback");
    for (sql, binds) in [
        ("UPDATE assignments SET annotator_id = $2 WHERE id = $1", [assignment, stranger]),
        ("UPDATE assignments SET campaign_id = $2 WHERE id = $1", [assignment, other_campaign]),
        ("UPDATE items SET campaign_id = $2 WHERE id = $1", [items[0], other_campaign]),
        ("UPDATE responses SET item_id = $2 WHERE assignment_id = $1", [assignment, items[2]]),
        ("UPDATE responses SET annotator_id = $2 WHERE assignment_id = $1", [assignment, stranger]),
    ] {
        assert_eq!(refused(pool, sql, &binds).await, "23000", "{sql}");
    }
    let kept = count(
        pool,
        "SELECT count(*) FROM responses r JOIN assignments a ON a.id = r.assignment_id
             AND a.campaign_id = r.campaign_id AND a.annotator_id = r.annotator_id
         JOIN items i ON i.id = r.item_id AND i.campaign_id = r.campaign_id",
    )
    .await;
    assert_eq!(kept, 2, "both answers still name their assignment and item");
}

#[tokio::test]
async fn a_campaign_without_answers_is_still_deleted_with_its_items_and_empty_assignments() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 4, 1, json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}))
            .await;
    let w = join(&app, &invitation, "w").await;
    w.next(&app, &campaign).await;
    assert_eq!(count(&app.pool, "SELECT count(*) FROM assignments").await, 1);
    let (status, body) = crate::fixtures::api(
        &app,
        &admin,
        reqwest::Method::DELETE,
        &format!("/api/v1/admin/campaigns/{campaign}"),
        None,
    )
    .await;
    assert!(status.is_success(), "{status}: {body}");
    assert_eq!(count(&app.pool, "SELECT count(*) FROM items").await, 0);
    assert_eq!(count(&app.pool, "SELECT count(*) FROM assignments").await, 0);
}

#[tokio::test]
async fn an_item_of_another_campaign_put_into_a_batch_is_refused_and_the_rest_counted_once() {
    let Started { app, other_campaign, worker: w, assignment, items, .. } = started(4).await;
    let path = format!("/api/v1/work/assignments/{assignment}/responses");
    // The first answer (its kind then answers without reading the item).
    let (status, body) = w.post(&app, &path, json!({"item_id": items[0], "answer": {"rating": 2}})).await;
    assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    // An item of another campaign put into this batch behind the service's back.
    let pool = &app.pool;
    let foreign_item: Uuid = sqlx::query_scalar("SELECT id FROM items WHERE campaign_id = $1::uuid LIMIT 1")
        .bind(&other_campaign)
        .fetch_one(pool)
        .await
        .expect("item");
    sqlx::query(
        "INSERT INTO batch_items (batch_id, position, item_id)
         SELECT batch_id, 1000, $2 FROM assignments WHERE id = $1",
    )
    .bind(assignment)
    .bind(foreign_item)
    .execute(pool)
    .await
    .expect("smuggled");
    let (status, body) = w.post(&app, &path, json!({"item_id": foreign_item, "answer": {"rating": 2}})).await;
    assert_eq!(status, reqwest::StatusCode::UNPROCESSABLE_ENTITY, "{body}");
    assert_eq!(body["error"]["code"], "item_not_in_campaign", "{body}");
    let stored: i64 = sqlx::query_scalar("SELECT count(*) FROM responses WHERE item_id = $1")
        .bind(foreign_item)
        .fetch_one(pool)
        .await
        .expect("count");
    assert_eq!(stored, 0, "the other campaign's item was not answered");
    // The rest of the batch, all at once: each answer counted once.
    let answers = items[1..].iter().map(|item| {
        let (w, app, path) = (&w, &app, &path);
        async move { w.post(app, path, json!({"item_id": item, "answer": {"rating": 1}})).await }
    });
    for (status, body) in futures_util::future::join_all(answers).await {
        assert_eq!(status, reqwest::StatusCode::OK, "{body}");
    }
    let answered: i32 = sqlx::query_scalar("SELECT answered FROM assignments WHERE id = $1")
        .bind(assignment)
        .fetch_one(pool)
        .await
        .expect("answered");
    assert_eq!(answered as usize, items.len());
    assert_eq!(count(pool, "SELECT count(*) FROM responses").await, items.len() as i64);
}
