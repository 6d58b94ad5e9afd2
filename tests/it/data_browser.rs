//! The data browser: an admin pages through a campaign's items with
//! filters, and opens one item to see every answer and its ground truth.
//! Every filter is checked against the database read independently.

use crate::fixtures::{admin_token, api, join, logged_in_admin, open_vton_campaign};
use crate::support::TestApp;
use reqwest::{Client, Method, StatusCode};
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// The external ids a page of the browser lists, in order.
fn listed(html: &str) -> Vec<String> {
    let row = regex::Regex::new(r#"/data/[0-9a-f-]{36}"><code>([^<]+)</code>"#).expect("pattern");
    row.captures_iter(html).map(|c| c[1].to_owned()).collect()
}

/// The campaign's answers that count.
async fn counted_answers(app: &TestApp, campaign: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM responses WHERE campaign_id = $1::uuid AND excluded_reason IS NULL")
        .bind(campaign)
        .fetch_one(&app.pool)
        .await
        .expect("count")
}

/// The campaign's batches.
async fn batch_count(app: &TestApp, campaign: &str) -> i64 {
    sqlx::query_scalar("SELECT count(*) FROM batches WHERE campaign_id = $1::uuid")
        .bind(campaign)
        .fetch_one(&app.pool)
        .await
        .expect("batches")
}

async fn page(client: &Client, app: &TestApp, campaign: &str, query: &str) -> (StatusCode, String) {
    let resp = client.get(app.at(&format!("/admin/campaigns/{campaign}/data?{query}"))).send().await.expect("page");
    (resp.status(), resp.text().await.expect("html"))
}

/// Every item the filter `query` matches, over all its pages.
async fn all_listed(client: &Client, app: &TestApp, campaign: &str, query: &str) -> BTreeSet<String> {
    let mut all = BTreeSet::new();
    for n in 1.. {
        let (status, html) = page(client, app, campaign, &format!("{query}&page={n}")).await;
        assert_eq!(status, StatusCode::OK, "{query}: {html}");
        let ids = listed(&html);
        all.extend(ids);
        if !html.contains("rel=\"next\"") {
            break;
        }
    }
    all
}

/// The id of the campaign's item with this external id.
async fn item_id(app: &TestApp, campaign: &str, external_id: &str) -> Uuid {
    sqlx::query_scalar("SELECT id FROM items WHERE external_id = $1 AND campaign_id = $2::uuid")
        .bind(external_id)
        .bind(campaign)
        .fetch_one(&app.pool)
        .await
        .expect("item id")
}

/// The browser's page of one item.
async fn item_page(client: &Client, app: &TestApp, campaign: &str, item: Uuid) -> String {
    let resp = client.get(app.at(&format!("/admin/campaigns/{campaign}/data/{item}"))).send().await.expect("item");
    assert_eq!(resp.status(), StatusCode::OK);
    resp.text().await.expect("html")
}

/// Items whose responses satisfy `condition` (SQL over `r`, grouped by item).
async fn items_where(app: &TestApp, campaign: &str, having: &str) -> BTreeSet<String> {
    let sql = format!(
        "SELECT i.external_id FROM items i LEFT JOIN responses r ON r.item_id = i.id
          WHERE i.campaign_id = $1::uuid GROUP BY i.id HAVING {having}"
    );
    sqlx::query_scalar::<_, String>(&sql)
        .bind(campaign)
        .fetch_all(&app.pool)
        .await
        .expect("items")
        .into_iter()
        .collect()
}

#[tokio::test]
async fn an_admin_filters_the_items_and_opens_one_with_its_answers() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 120, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    // Two workers agree (the sanity task right, the images 2 or 3 by their
    // number), the third rates everything 2: the ground truth keeps the two.
    let by_number = |item: &Value| {
        let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
        let n: u64 = tryon.trim_start_matches("/img/t/").trim_end_matches(".png").parse().unwrap_or(0);
        json!({"rating": if n >= 1000 { 1 } else { 2 + n % 2 }})
    };
    for worker in ["data-w1", "data-w2", "data-w3"] {
        let session = join(&app, &invitation, worker).await;
        let (status, view) = session.next(&app, &campaign).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        if worker == "data-w3" {
            session.finish(&app, &view, 2).await;
        } else {
            session.finish_with(&app, &view, by_number).await;
        }
    }
    // One answer of the third worker excluded by hand.
    let excluded: String = sqlx::query_scalar(
        "UPDATE responses r SET excluded_reason = 'marked in the test', excluded_at = now()
           FROM users u, items i
          WHERE u.id = r.annotator_id AND u.external_id = 'data-w3' AND i.id = r.item_id AND i.gold IS NULL
            AND r.id = (SELECT r2.id FROM responses r2 JOIN users u2 ON u2.id = r2.annotator_id
                         JOIN items i2 ON i2.id = r2.item_id
                         WHERE u2.external_id = 'data-w3' AND i2.gold IS NULL ORDER BY i2.external_id LIMIT 1)
         RETURNING i.external_id",
    )
    .fetch_one(&app.pool)
    .await
    .expect("exclude one");
    let (client, csrf) = logged_in_admin(&app).await;
    let kind_page = client.get(app.at(&format!("/admin/campaigns/{campaign}/vton"))).send().await.expect("page");
    let kind_page = kind_page.text().await.expect("html");
    assert!(kind_page.contains(&format!(r#"<a href="/admin/campaigns/{campaign}/data">Browse the items</a>"#)));

    // Unfiltered: every item, 100 to a page, with its images.
    let (status, first) = page(&client, &app, &campaign, "").await;
    assert_eq!(status, StatusCode::OK, "{first}");
    assert!(first.contains("121 item(s)") && first.contains("Rows 1–100 of 121"), "{first}");
    assert_eq!(listed(&first).len(), 100);
    assert!(first.contains(r#"<img src="/img/t/0.png" alt="tryon""#), "the try-on as a thumbnail");
    let (_, last) = page(&client, &app, &campaign, "page=99").await;
    assert!(last.contains("Rows 101–121 of 121"), "a page past the end shows the last one");
    assert_eq!(listed(&last).len(), 21);
    let everything = all_listed(&client, &app, &campaign, "").await;
    assert_eq!(everything.len(), 121);

    // The id search, literally.
    let search = all_listed(&client, &app, &campaign, "q=img-11").await;
    let expected: BTreeSet<String> =
        std::iter::once("img-11".to_owned()).chain((110..120).map(|n| format!("img-{n}"))).collect();
    assert_eq!(search, expected);
    assert!(all_listed(&client, &app, &campaign, "q=img_1").await.is_empty(), "_ is not a wildcard");

    // Each filter against the database.
    assert_eq!(all_listed(&client, &app, &campaign, "known=yes").await, BTreeSet::from(["sanity-1000".to_owned()]));
    assert_eq!(all_listed(&client, &app, &campaign, "known=no").await.len(), 120);
    let answered = items_where(&app, &campaign, "count(r.id) FILTER (WHERE r.excluded_reason IS NULL) > 0").await;
    assert!(answered.len() >= 4, "a questionnaire of three images and the sanity task was answered: {answered:?}");
    assert_eq!(all_listed(&client, &app, &campaign, "status=answered").await, answered);
    assert_eq!(
        all_listed(&client, &app, &campaign, "status=unanswered").await,
        everything.difference(&answered).cloned().collect()
    );
    assert!(all_listed(&client, &app, &campaign, "status=unbatched").await.is_empty(), "every item is batched");
    assert_eq!(all_listed(&client, &app, &campaign, "excluded=yes").await, BTreeSet::from([excluded.clone()]));
    // Read from the excluded answers alone, and with an answer count beside it.
    let not_excluded: BTreeSet<String> = everything.iter().filter(|i| **i != excluded).cloned().collect();
    assert_eq!(all_listed(&client, &app, &campaign, "excluded=no").await, not_excluded);
    let both: BTreeSet<String> = answered.iter().filter(|i| **i == excluded).cloned().collect();
    assert_eq!(all_listed(&client, &app, &campaign, "excluded=yes&status=answered").await, both);
    let unanimous = items_where(
        &app,
        &campaign,
        "count(r.id) FILTER (WHERE r.excluded_reason IS NULL) >= 2
         AND count(DISTINCT r.answer) FILTER (WHERE r.excluded_reason IS NULL) = 1",
    )
    .await;
    let split =
        items_where(&app, &campaign, "count(DISTINCT r.answer) FILTER (WHERE r.excluded_reason IS NULL) > 1").await;
    assert!(split.contains("sanity-1000"), "the sanity task was rated 1, 1 and 2: {split:?}");
    assert_eq!(all_listed(&client, &app, &campaign, "agreement=unanimous").await, unanimous);
    assert_eq!(all_listed(&client, &app, &campaign, "agreement=split").await, split);
    assert_eq!(
        all_listed(&client, &app, &campaign, "agreement=split&known=no").await,
        split.iter().filter(|i| i.as_str() != "sanity-1000").cloned().collect()
    );
    // Sorted by answers: the most counted first, ties in id order, against the database.
    let counted: std::collections::HashMap<String, i64> = sqlx::query_as::<_, (String, i64)>(
        "SELECT i.external_id, count(r.id) FILTER (WHERE r.excluded_reason IS NULL)
           FROM items i LEFT JOIN responses r ON r.item_id = i.id WHERE i.campaign_id = $1::uuid GROUP BY i.id",
    )
    .bind(&campaign)
    .fetch_all(&app.pool)
    .await
    .expect("counts")
    .into_iter()
    .collect();
    let (status, most) = page(&client, &app, &campaign, "sort=most-answers").await;
    assert_eq!(status, StatusCode::OK, "{most}");
    let order = listed(&most);
    assert_eq!(order.len(), 100);
    let keys: Vec<(i64, &str)> = order.iter().map(|id| (-counted[id], id.as_str())).collect();
    assert!(keys.windows(2).all(|w| w[0] <= w[1]), "most answers first, then by id: {keys:?}");
    assert!(counted[&order[0]] >= 3, "the most answered item leads: {keys:?}");
    let (_, fewest) = page(&client, &app, &campaign, "sort=fewest-answers").await;
    assert_eq!(counted[&listed(&fewest)[0]], 0, "an unanswered item leads");
    let latest: String = sqlx::query_scalar(
        "SELECT i.external_id FROM responses r JOIN items i ON i.id = r.item_id WHERE r.campaign_id = $1::uuid
          GROUP BY i.id ORDER BY max(r.updated_at) DESC, i.external_id LIMIT 1",
    )
    .bind(&campaign)
    .fetch_one(&app.pool)
    .await
    .expect("latest");
    let (_, recent) = page(&client, &app, &campaign, "sort=last-answer").await;
    assert_eq!(listed(&recent)[0], latest, "the most recently answered item leads");
    // Least agreement first: a split item leads; the choice is kept in the form and the pager.
    let (_, least) = page(&client, &app, &campaign, "sort=least-agreement").await;
    assert!(split.contains(&listed(&least)[0]), "{:?}", &listed(&least)[..3]);
    assert!(least.contains(r#"<option value="least-agreement" selected>"#), "the form keeps the order");
    assert!(
        least.contains(r#"<input type="hidden" name="sort" value="least-agreement">"#),
        "the pager keeps the order"
    );
    let (status, refused) = page(&client, &app, &campaign, "sort=sideways").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.contains("Sort by must be one of the listed orders"), "{refused}");

    // A bulk action on what a filter matches: the split items' answers
    // excluded with one reason, all in one step, then counted again.
    let before = counted_answers(&app, &campaign).await;
    let (_, filtered) = page(&client, &app, &campaign, "agreement=split&known=no").await;
    assert!(
        filtered.contains(r#"<input type="hidden" name="agreement" value="split">"#),
        "the bulk form keeps the filter"
    );
    let bulk = |action: &'static str, reason: &'static str| {
        let (client, app, campaign, csrf) = (&client, &app, campaign.clone(), csrf.clone());
        async move {
            client
                .post(app.at(&format!("/admin/campaigns/{campaign}/data/bulk")))
                .form(&[
                    ("csrf_token", csrf.as_str()),
                    ("agreement", "split"),
                    ("known", "no"),
                    ("action", action),
                    ("reason", reason),
                ])
                .send()
                .await
                .expect("bulk")
        }
    };
    // Refused beside the form, as typed, nothing changed.
    let refused = bulk("exclude", "curation: mine").await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = refused.text().await.expect("html");
    assert!(html.contains(r#"id="bulk-error""#) && html.contains(r#"value="curation: mine""#), "{html}");
    assert_eq!(counted_answers(&app, &campaign).await, before);
    let done = bulk("exclude", "bad lighting").await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    let split_known_no: Vec<String> = split.iter().filter(|i| i.as_str() != "sanity-1000").cloned().collect();
    let excluded_now: i64 = sqlx::query_scalar(
        "SELECT count(*) FROM responses r JOIN items i ON i.id = r.item_id
          WHERE r.campaign_id = $1::uuid AND r.excluded_reason = 'bad lighting' AND i.external_id = ANY($2)",
    )
    .bind(&campaign)
    .bind(&split_known_no)
    .fetch_one(&app.pool)
    .await
    .expect("excluded");
    assert!(excluded_now > 0);
    assert_eq!(counted_answers(&app, &campaign).await, before - excluded_now, "only the matching items' answers");
    let followed = client.get(app.at(done.headers()["location"].to_str().expect("to"))).send().await.expect("list");
    let html = followed.text().await.expect("html");
    assert!(html.contains(&format!("{excluded_now} answer(s) of")), "the page says what changed");
    // The same items no longer match "split" (no counted answers): count
    // them again through the filter that finds them.
    let undo = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/data/bulk")))
        .form(&[("csrf_token", csrf.as_str()), ("excluded", "yes"), ("action", "include"), ("reason", "bad lighting")])
        .send()
        .await
        .expect("undo");
    assert_eq!(undo.status(), StatusCode::SEE_OTHER);
    assert_eq!(
        counted_answers(&app, &campaign).await,
        before,
        "counted again; the hand exclusion for another reason stays"
    );
    let first_batch: BTreeSet<String> = sqlx::query_scalar(
        "SELECT i.external_id FROM batches b JOIN batch_items bi ON bi.batch_id = b.id JOIN items i ON i.id = bi.item_id
          WHERE b.campaign_id = $1::uuid AND b.position = 0",
    )
    .bind(&campaign)
    .fetch_all(&app.pool)
    .await
    .expect("batch")
    .into_iter()
    .collect();
    assert_eq!(all_listed(&client, &app, &campaign, "batch=1").await, first_batch);

    // A filter that cannot be read is refused beside the form, as typed.
    let (status, refused) = page(&client, &app, &campaign, "batch=first&q=img").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(refused.contains("Batch must be a batch") && refused.contains(r#"value="first""#), "{refused}");
    assert!(listed(&refused).is_empty(), "a refused filter lists nothing rather than everything");

    // One item: its known answer, each answer with who gave it, the exclusion, the ground truth.
    let sanity = item_id(&app, &campaign, "sanity-1000").await;
    let html = item_page(&client, &app, &campaign, sanity).await;
    assert!(html.contains("Known answer") && html.contains("&#34;rating&#34;: 1"), "{html}");
    assert!(["data-w1", "data-w2", "data-w3"].iter().all(|w| html.contains(w)), "{html}");
    assert!(html.contains("3 answer(s)"), "{html}");
    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    let means: BTreeMap<String, f64> = gt["images"]
        .as_array()
        .expect("images")
        .iter()
        .filter_map(|i| Some((i["image"].as_str()?.to_owned(), i["mean"].as_f64()?)))
        .collect();
    let rated = answered.iter().find(|i| means.contains_key(*i)).unwrap_or_else(|| panic!("a rated image: {gt}"));
    let html = item_page(&client, &app, &campaign, item_id(&app, &campaign, rated).await).await;
    assert!(html.contains(&format!("{:.6}", means[rated])), "the item's ground truth: {html}");
    assert!(!html.contains("Known answer"), "no known answer on a regular item");
    let html = item_page(&client, &app, &campaign, item_id(&app, &campaign, &excluded).await).await;
    assert!(html.contains("excluded: marked in the test"), "{html}");
    // The list's ground-truth column says the same as the item page.
    let (_, listed_rated) = page(&client, &app, &campaign, &format!("q={rated}")).await;
    assert!(listed_rated.contains(&format!("{:.6}", means[rated])), "{listed_rated}");

    // Another campaign's address does not show this campaign's item.
    let (_, other) = api(
        &app,
        &admin,
        Method::POST,
        "/api/v1/admin/campaigns",
        Some(json!({"kind": "vton", "name": "other", "config": {"background": []}})),
    )
    .await;
    let other = other["id"].as_str().expect("id");
    let resp = client.get(app.at(&format!("/admin/campaigns/{other}/data/{sanity}"))).send().await.expect("other");
    assert_eq!(resp.status(), StatusCode::NOT_FOUND);
}

#[tokio::test]
async fn only_admins_browse_the_data() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 2, "sanity_per_questionnaire": 1}))
            .await;
    let worker = join(&app, &invitation, "curious-worker").await;
    let item: Uuid = sqlx::query_scalar("SELECT id FROM items WHERE campaign_id = $1::uuid LIMIT 1")
        .bind(&campaign)
        .fetch_one(&app.pool)
        .await
        .expect("item");
    crate::fixtures::expert_token(&app, "data-expert").await;
    let (expert, _) = crate::fixtures::logged_in(&app, "data-expert", crate::fixtures::EXPERT_PASSWORD).await;
    for (who, client) in [("worker", &worker.client), ("expert", &expert), ("anonymous", &app.client())] {
        for path in [format!("/admin/campaigns/{campaign}/data"), format!("/admin/campaigns/{campaign}/data/{item}")] {
            let resp = client.get(app.at(&path)).send().await.expect("page");
            let status = resp.status();
            let html = resp.text().await.expect("html");
            assert!(!status.is_success() || html.contains("Log in"), "{who} {path}: {status}");
            assert!(!html.contains("sanity-1000") && !html.contains("Known answer"), "{who} sees nothing: {html}");
        }
    }
}

#[tokio::test]
async fn a_sanity_task_in_every_questionnaire_pages_its_answers_and_cuts_its_batch_list_short() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 120, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    for n in 0..105 {
        let worker = join(&app, &invitation, &format!("many-{n:03}")).await;
        let (status, view) = worker.next(&app, &campaign).await;
        assert_eq!(status, StatusCode::OK, "{view}");
        worker.finish(&app, &view, 1).await;
    }
    let (client, _) = logged_in_admin(&app).await;
    let sanity = item_id(&app, &campaign, "sanity-1000").await;
    let html = item_page(&client, &app, &campaign, sanity).await;
    assert!(html.contains("105 answer(s)") && html.contains("105 of the 105 counted agree"), "{html}");
    assert!(html.contains("Rows 1–100 of 105"), "a page of answers");
    assert_eq!(html.matches("<code>many-").count(), 100);
    let batches: i64 = sqlx::query_scalar("SELECT count(*) FROM batches WHERE campaign_id = $1::uuid")
        .bind(&campaign)
        .fetch_one(&app.pool)
        .await
        .expect("batches");
    assert!(html.contains(&format!("1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and {} more", batches - 10)), "{html}");
    let resp = client
        .get(app.at(&format!("/admin/campaigns/{campaign}/data/{sanity}?answers=2")))
        .send()
        .await
        .expect("page 2");
    let second = resp.text().await.expect("html");
    assert!(second.contains("Rows 101–105 of 105"), "{second}");
    let names = |html: &str| -> BTreeSet<String> {
        let code = regex::Regex::new(r"<code>(many-\d+)</code>").expect("pattern");
        code.captures_iter(html).map(|c| c[1].to_owned()).collect()
    };
    let (one, two) = (names(&html), names(&second));
    assert_eq!(two.len(), 5);
    assert!(one.is_disjoint(&two), "no answer on both pages");
    assert_eq!(one.union(&two).count(), 105, "every answer on one page or the other");
    // The list shows the batch numbers cut short too.
    let (_, list) = page(&client, &app, &campaign, "known=yes").await;
    assert!(list.contains(&format!("and {} more", batches - 10)), "{list}");
}

#[tokio::test]
async fn an_admin_excludes_an_answer_counts_it_again_and_takes_an_item_out_of_the_ground_truth() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let (campaign, invitation) =
        open_vton_campaign(&app, &admin, 3, 1, json!({"tasks_per_questionnaire": 4, "sanity_per_questionnaire": 1}))
            .await;
    let rate = |item: &Value| {
        let tryon = item["payload"]["tryon"].as_str().unwrap_or_default();
        json!({"rating": if tryon.contains("/1000.") { 1 } else if tryon.contains("/0.") { 3 } else { 2 }})
    };
    for worker in ["act-w1", "act-w2"] {
        let session = join(&app, &invitation, worker).await;
        let (_, view) = session.next(&app, &campaign).await;
        session.finish_with(&app, &view, rate).await;
    }
    let (client, csrf) = logged_in_admin(&app).await;
    let image = item_id(&app, &campaign, "img-0").await;
    let answers: Vec<Uuid> = sqlx::query_scalar("SELECT id FROM responses WHERE item_id = $1 ORDER BY created_at")
        .bind(image)
        .fetch_all(&app.pool)
        .await
        .expect("answers");
    assert_eq!(answers.len(), 2);
    let excluded = || async {
        sqlx::query_scalar::<_, Option<String>>(
            "SELECT excluded_reason FROM responses WHERE item_id = $1 ORDER BY created_at",
        )
        .bind(image)
        .fetch_all(&app.pool)
        .await
        .expect("reasons")
    };
    let post = |action: &'static str, fields: Vec<(&'static str, String)>| {
        let (client, csrf) = (client.clone(), csrf.clone());
        let url = app.at(&format!("/admin/campaigns/{campaign}/data/{image}/{action}"));
        async move {
            let mut form = vec![("csrf_token", csrf)];
            form.extend(fields);
            let resp = client.post(url).form(&form).send().await.expect("post");
            let status = resp.status();
            (status, resp.text().await.expect("body"))
        }
    };

    // No reason: refused beside that answer's form, nothing changed.
    let (status, html) = post("exclude", vec![("response", answers[0].to_string()), ("reason", "  ".into())]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(&format!("id=\"refusal-{}\"", answers[0])) && html.contains("needs a reason"), "{html}");
    let (status, html) =
        post("exclude", vec![("response", answers[0].to_string()), ("reason", "curation:run".into())]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(r#"value="curation:run""#), "the reason as typed: {html}");
    assert_eq!(excluded().await, vec![None, None]);

    // One answer out, with the reason; the page says so; then back in.
    let (status, _) =
        post("exclude", vec![("response", answers[0].to_string()), ("reason", "rated too fast".into())]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(excluded().await, vec![Some("rated too fast".to_owned()), None]);
    let html = item_page(&client, &app, &campaign, image).await;
    assert!(html.contains("The answer is excluded: rated too fast.") && html.contains("excluded: rated too fast"));
    assert!(html.contains("1 count, 1 excluded"), "{html}");
    let (status, _) = post("include", vec![("response", answers[0].to_string())]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(excluded().await, vec![None, None]);
    assert!(item_page(&client, &app, &campaign, image).await.contains("The answer counts again."));

    // The whole item out of the ground truth.
    let gt_images = || async {
        let (_, gt) =
            api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
        gt["images"]
            .as_array()
            .expect("images")
            .iter()
            .filter_map(|i| i["image"].as_str().map(str::to_owned))
            .collect::<BTreeSet<_>>()
    };
    assert!(gt_images().await.contains("img-0"), "rated by both, kept by curation");
    let (status, _) = post("exclude", vec![("response", String::new()), ("reason", "broken image".into())]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(excluded().await, vec![Some("broken image".to_owned()), Some("broken image".to_owned())]);
    assert!(item_page(&client, &app, &campaign, image)
        .await
        .contains("2 answer(s) of this item excluded: broken image."));
    assert!(!gt_images().await.contains("img-0"), "out of the ground truth");

    // Another item's answer, a foreign campaign, no CSRF token: refused, nothing changed.
    let other = item_id(&app, &campaign, "img-1").await;
    let other_answer: Uuid = sqlx::query_scalar("SELECT id FROM responses WHERE item_id = $1 LIMIT 1")
        .bind(other)
        .fetch_one(&app.pool)
        .await
        .expect("answer");
    let (status, _) = post("include", vec![("response", other_answer.to_string())]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/data/{image}/include")))
        .form(&[("response", answers[0].to_string())])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN, "a form without the CSRF token");
    assert_eq!(excluded().await, vec![Some("broken image".to_owned()), Some("broken image".to_owned())]);
}

/// An open VSD campaign (k = 2) of these rankings whose `pairs` pairs two
/// experts have labelled "1": the admin's token, the campaign, the experts'
/// tokens.
async fn labelled_by_two_experts(
    app: &TestApp,
    name: &str,
    rankings: &str,
    pairs: usize,
) -> (String, String, [String; 2]) {
    let admin = admin_token(app).await;
    let config = json!({"kind": "vsd", "name": name, "config": {"k": 2}});
    let campaign = crate::fixtures::open_vsd_campaign(app, &admin, config, rankings).await;
    let slug = name.replace(' ', "-");
    let experts = [
        crate::fixtures::expert_token(app, &format!("{slug}-e1")).await,
        crate::fixtures::expert_token(app, &format!("{slug}-e2")).await,
    ];
    for e in &experts {
        assert_eq!(crate::vsd_service::label_all(app, e, &campaign, |_| "1").await, pairs);
    }
    (admin, campaign, experts)
}

#[tokio::test]
async fn an_admin_sends_a_pair_back_to_the_experts_and_their_new_answers_make_its_label() {
    use crate::vsd_service::label_all;
    let app = TestApp::spawn().await;
    let (admin, campaign, experts) =
        labelled_by_two_experts(&app, "send back", "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\n", 2).await;
    let labels = || async {
        let (_, gt) =
            api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
        gt["pairs"]
            .as_array()
            .expect("pairs")
            .iter()
            .map(|p| {
                let other = if p["query"] == "q1" { &p["candidate"] } else { &p["query"] };
                (other.as_str().unwrap_or_default().to_owned(), p["label"].as_u64())
            })
            .collect::<BTreeMap<_, _>>()
    };
    assert_eq!(labels().await, BTreeMap::from([("a".to_owned(), Some(1)), ("b".to_owned(), Some(1))]));
    let pair: Uuid =
        sqlx::query_scalar("SELECT id FROM items WHERE campaign_id = $1::uuid AND external_id IN ('q1 | a', 'a | q1')")
            .bind(&campaign)
            .fetch_one(&app.pool)
            .await
            .expect("the pair with a");
    let (client, csrf) = logged_in_admin(&app).await;
    let send_back = |reason: &'static str| {
        let (client, csrf) = (client.clone(), csrf.clone());
        let url = app.at(&format!("/admin/campaigns/{campaign}/data/{pair}/send-back"));
        async move {
            let resp =
                client.post(url).form(&[("csrf_token", csrf.as_str()), ("reason", reason)]).send().await.expect("post");
            let status = resp.status();
            (status, resp.text().await.expect("body"))
        }
    };
    let before = batch_count(&app, &campaign).await;
    let html = item_page(&client, &app, &campaign, pair).await;
    assert!(html.contains("Send it back to the experts"), "offered on an expert campaign");
    let (status, html) = send_back(" ").await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("id=\"refusal-send-back\"") && html.contains("needs a reason"), "{html}");
    assert_eq!(batch_count(&app, &campaign).await, before, "a refusal changes nothing");

    let (status, _) = send_back("the images were swapped").await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    assert_eq!(batch_count(&app, &campaign).await, before + 1, "a batch of the pair alone");
    let reasons: Vec<Option<String>> = sqlx::query_scalar("SELECT excluded_reason FROM responses WHERE item_id = $1")
        .bind(pair)
        .fetch_all(&app.pool)
        .await
        .expect("reasons");
    assert_eq!(reasons, vec![Some("sent back to experts: the images were swapped".to_owned()); 2]);
    let html = item_page(&client, &app, &campaign, pair).await;
    assert!(html.contains("Sent back to the experts: 2 answer(s) no longer count"), "{html}");
    assert_eq!(labels().await.get("a"), Some(&None), "no counted answer until the experts answer again");

    // Each expert is offered the pair again, alone, and answers it anew.
    for e in &experts {
        assert_eq!(label_all(&app, e, &campaign, |_| "0").await, 1);
    }
    assert_eq!(labels().await, BTreeMap::from([("a".to_owned(), Some(0)), ("b".to_owned(), Some(1))]));
    let html = item_page(&client, &app, &campaign, pair).await;
    assert!(html.contains("4 answer(s)") && html.contains("2 count, 2 excluded"), "{html}");

    // A crowd campaign's item is not sent back: curation re-queues questionnaires.
    let (crowd, _) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 2, "sanity_per_questionnaire": 1}))
            .await;
    let image = item_id(&app, &crowd, "img-0").await;
    assert!(!item_page(&client, &app, &crowd, image).await.contains("Send it back"), "not offered");
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{crowd}/data/{image}/send-back")))
        .form(&[("csrf_token", csrf.as_str()), ("reason", "why not")])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.text().await.expect("html").contains("only an expert campaign sends an item back"));
}

#[tokio::test]
async fn an_admin_sends_a_filtered_selection_back_to_the_experts_at_once() {
    use crate::vsd_service::label_all;
    let app = TestApp::spawn().await;
    let rankings = "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\nm1,q2,c,0\nm1,q2,d,1\n";
    let (admin, campaign, experts) = labelled_by_two_experts(&app, "bulk send back", rankings, 4).await;
    let (client, csrf) = logged_in_admin(&app).await;
    let (_, html) = page(&client, &app, &campaign, "q=q1").await;
    assert!(html.contains("Send them back to the experts"), "offered on an expert campaign");
    let (before, batches_before) = (counted_answers(&app, &campaign).await, batch_count(&app, &campaign).await);
    let bulk = |q: &'static str, reason: &'static str| {
        let (client, app, campaign, csrf) = (&client, &app, campaign.clone(), csrf.clone());
        async move {
            client
                .post(app.at(&format!("/admin/campaigns/{campaign}/data/bulk")))
                .form(&[("csrf_token", csrf.as_str()), ("q", q), ("action", "send_back"), ("reason", reason)])
                .send()
                .await
                .expect("bulk")
        }
    };
    // Refused beside the form, the reason kept, nothing changed.
    let refused = bulk("q1", "curation: mine").await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = refused.text().await.expect("html");
    assert!(html.contains(r#"id="bulk-error""#) && html.contains(r#"value="curation: mine""#), "{html}");
    assert_eq!((counted_answers(&app, &campaign).await, batch_count(&app, &campaign).await), (before, batches_before));
    let none = bulk("no-such-query", "swapped images").await;
    assert_eq!(none.status(), StatusCode::UNPROCESSABLE_ENTITY, "a filter matching nothing sends nothing back");
    assert!(none.text().await.expect("html").contains("no item matches: nothing was sent back"));
    assert_eq!(batch_count(&app, &campaign).await, batches_before);

    let done = bulk("q1", "swapped images").await;
    assert_eq!(done.status(), StatusCode::SEE_OTHER);
    assert_eq!(counted_answers(&app, &campaign).await, before - 4, "both experts' answers to q1's two pairs");
    assert_eq!(batch_count(&app, &campaign).await, batches_before + 1, "q1's pairs come back together, in one batch");
    let followed = client.get(app.at(done.headers()["location"].to_str().expect("to"))).send().await.expect("list");
    let html = followed.text().await.expect("html");
    assert!(html.contains("2 item(s) sent back to the experts: 4 answer(s) no longer count"), "{html}");
    let reasons: Vec<String> = sqlx::query_scalar(
        "SELECT DISTINCT excluded_reason FROM responses WHERE campaign_id = $1::uuid AND excluded_reason IS NOT NULL",
    )
    .bind(&campaign)
    .fetch_all(&app.pool)
    .await
    .expect("reasons");
    assert_eq!(reasons, vec!["sent back to experts: swapped images".to_owned()]);
    // Each expert gets q1's two pairs again, and nothing of q2.
    for e in &experts {
        assert_eq!(label_all(&app, e, &campaign, |_| "0").await, 2);
    }
    let (_, gt) =
        api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}/ground-truth"), None).await;
    let labels: BTreeMap<String, Option<u64>> = gt["pairs"]
        .as_array()
        .expect("pairs")
        .iter()
        .map(|p| {
            (
                format!("{}{}", p["query"].as_str().unwrap_or(""), p["candidate"].as_str().unwrap_or("")),
                p["label"].as_u64(),
            )
        })
        .collect();
    assert_eq!(labels.values().filter(|l| **l == Some(0)).count(), 2, "{labels:?}");
    assert_eq!(labels.values().filter(|l| **l == Some(1)).count(), 2, "{labels:?}");

    // A crowd campaign's list offers no send-back, and refuses one posted.
    let (crowd, _) =
        open_vton_campaign(&app, &admin, 2, 1, json!({"tasks_per_questionnaire": 2, "sanity_per_questionnaire": 1}))
            .await;
    let (_, html) = page(&client, &app, &crowd, "").await;
    assert!(!html.contains("Send them back"), "not offered");
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{crowd}/data/bulk")))
        .form(&[("csrf_token", csrf.as_str()), ("action", "send_back"), ("reason", "why not")])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.text().await.expect("html").contains("only an expert campaign sends an item back"));
}

#[tokio::test]
async fn a_dismissed_flag_leaves_the_flagged_list_until_someone_flags_the_item_again() {
    use crate::vsd_service::label_all;
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let campaign = crate::fixtures::open_vsd_campaign(
        &app,
        &admin,
        json!({"kind": "vsd", "name": "flags", "config": {"k": 2, "image_base_url": "https://img.example/"}}),
        "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\n",
    )
    .await;
    let broken_a = |image: &str| if image.ends_with('a') { "broken" } else { "1" };
    let e1 = crate::fixtures::expert_token(&app, "flag-e1").await;
    assert_eq!(label_all(&app, &e1, &campaign, broken_a).await, 2);
    let (client, csrf) = logged_in_admin(&app).await;
    let flagged = all_listed(&client, &app, &campaign, "flagged=yes").await;
    assert_eq!(flagged.len(), 1, "{flagged:?}");
    let pair = flagged.iter().next().expect("the pair").clone();
    assert!(pair.contains('a'), "{pair}");
    assert_eq!(all_listed(&client, &app, &campaign, "flagged=no").await.len(), 1);
    let (_, list) = page(&client, &app, &campaign, "flagged=yes").await;
    assert!(list.contains(r#"<img src="https://img.example/q1""#), "the kind's thumbnails: both images of the pair");
    assert!(list.contains(r#"<span class="tag flag">1 flagged</span>"#), "{list}");
    let id = item_id(&app, &campaign, &pair).await;
    let html = item_page(&client, &app, &campaign, id).await;
    assert!(html.contains("1 raise a flag") && html.contains("Dismiss the 1 flag(s)"), "{html}");

    let resp = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/data/{id}/dismiss-flags")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("dismiss");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let html = item_page(&client, &app, &campaign, id).await;
    assert!(html.contains("1 flag(s) dismissed") && html.contains("Flags dismissed by root-admin"), "{html}");
    assert!(!html.contains("raise a flag"), "no open flag: {html}");
    assert!(all_listed(&client, &app, &campaign, "flagged=yes").await.is_empty());
    let reasons: Vec<Option<String>> = sqlx::query_scalar("SELECT excluded_reason FROM responses WHERE item_id = $1")
        .bind(id)
        .fetch_all(&app.pool)
        .await
        .expect("answers");
    assert_eq!(reasons, vec![None], "dismissing changes no answer");

    // A second expert flags it too: open again.
    let e2 = crate::fixtures::expert_token(&app, "flag-e2").await;
    assert_eq!(label_all(&app, &e2, &campaign, broken_a).await, 2);
    assert_eq!(all_listed(&client, &app, &campaign, "flagged=yes").await, BTreeSet::from([pair]));
    let html = item_page(&client, &app, &campaign, id).await;
    assert!(html.contains("1 raise a flag") && html.contains("raised again since"), "{html}");
}
