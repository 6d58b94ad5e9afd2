//! Refused admin forms come back to their own form: the reason beside it,
//! what was typed kept, nothing changed (not the generic error page).

use crate::fixtures::{admin_token, api, logged_in_admin, new_campaign};
use crate::support::TestApp;
use reqwest::{Method, StatusCode};

/// The part of `html` from the element with this id to the end of its form.
fn section<'a>(html: &'a str, id: &str) -> &'a str {
    let start = html.find(&format!("id=\"{id}\"")).unwrap_or_else(|| panic!("section {id}: {html}"));
    let rest = &html[start..];
    &rest[..rest.find("</form>").unwrap_or(rest.len())]
}

#[tokio::test]
async fn an_image_in_an_import_box_is_refused_beside_the_import_form() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let campaign = new_campaign(&app, &admin, "vton", "png by mistake").await;
    let (client, csrf) = logged_in_admin(&app).await;
    let png = crate::fixtures::png(4, 4, 200);
    let file = reqwest::multipart::Part::bytes(png).file_name("tryon.png").mime_str("image/png").expect("mime");
    let form = reqwest::multipart::Form::new().text("csrf_token", csrf.clone()).part("file", file);
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{campaign}/import")))
        .multipart(form)
        .send()
        .await
        .expect("upload");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    let import = section(&html, "import");
    assert!(import.contains("the file “tryon.png” is not text (UTF-8)"), "{import}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("n");
    assert_eq!(items, 0);
}

#[tokio::test]
async fn a_refused_new_campaign_comes_back_as_typed_with_the_reason() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = logged_in_admin(&app).await;
    // The list page's name field carries the limit the service checks.
    let list = client.get(app.at("/admin")).send().await.expect("list").text().await.expect("html");
    assert!(section(&list, "new-campaign").contains("name=\"name\" required maxlength=\"200\""), "{list}");
    let long = "n".repeat(5000);
    let resp = client
        .post(app.at("/admin"))
        .form(&[
            ("csrf_token", csrf.as_str()),
            ("kind", "vton"),
            ("name", long.as_str()),
            ("cfg.tasks_per_questionnaire", "12"),
        ])
        .send()
        .await
        .expect("create");
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    let form = section(&html, "new");
    assert!(form.contains("Not created: name must be 1 to 200 characters"), "{form}");
    assert!(form.contains(&format!("value=\"{long}\"")), "the name as typed");
    assert!(form.contains("value=\"12\""), "the settings as typed: {form}");
    let campaigns: i64 = sqlx::query_scalar("SELECT count(*) FROM campaigns").fetch_one(&app.pool).await.expect("n");
    assert_eq!(campaigns, 0);
}

#[tokio::test]
async fn comparing_releases_by_a_bad_number_says_so_beside_the_compare_form() {
    let app = TestApp::spawn().await;
    let admin = admin_token(&app).await;
    let campaign = new_campaign(&app, &admin, "vton", "compare").await;
    let (client, _) = logged_in_admin(&app).await;
    for (query, said) in [
        ("from=9&to=x", "`x` is not a release number"),
        ("from=2&to=2", "choose two different releases"),
        ("from=1&to=2", "no such release"),
    ] {
        let url = app.at(&format!("/admin/campaigns/{campaign}/releases/diff?{query}"));
        let resp = client.get(url).send().await.expect("diff");
        assert!(resp.status().is_client_error(), "{query}: {}", resp.status());
        let html = resp.text().await.expect("html");
        let releases = &html[html.find("id=\"releases\"").unwrap_or_else(|| panic!("{query}: {html}"))
            ..html.find("id=\"invitations\"").expect("next")];
        assert!(releases.contains("Not compared: ") && releases.contains(said), "{query}: {releases}");
    }
    let (status, _) = api(&app, &admin, Method::GET, &format!("/api/v1/admin/campaigns/{campaign}"), None).await;
    assert_eq!(status, StatusCode::OK);
}
