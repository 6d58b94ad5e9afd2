//! Login, sessions, CSRF and rate limiting, through the real server.

use crate::fixtures::{admin_token, api, login_page, ADMIN_PASSWORD};
use crate::support::TestApp;
use reqwest::StatusCode;

#[tokio::test]
async fn admin_logs_in_with_a_session_cookie_and_logs_out() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = login_page(&app).await;

    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", "wrong-password")])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert!(resp.text().await.expect("html").contains("Wrong name or password"));

    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/admin");
    let cookie = resp
        .headers()
        .get_all("set-cookie")
        .iter()
        .map(|v| v.to_str().unwrap_or_default().to_owned())
        .collect::<Vec<_>>()
        .join(";");
    assert!(cookie.contains("atelier_session="), "{cookie}");
    assert!(cookie.contains("HttpOnly") && cookie.contains("SameSite=Lax"), "{cookie}");

    let page = client.get(app.at("/admin")).send().await.expect("admin page");
    assert_eq!(page.status(), StatusCode::OK);
    assert!(page.text().await.expect("html").contains("Campaigns"));

    // The session id changed at login and the CSRF token lives on.
    let me: serde_json::Value = client.get(app.at("/api/v1/me")).send().await.expect("me").json().await.expect("json");
    assert_eq!(me["user"]["role"], "admin");
    let csrf = me["csrf_token"].as_str().expect("csrf").to_owned();
    let resp = client.post(app.at("/logout")).form(&[("csrf_token", csrf.as_str())]).send().await.expect("logout");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let after = client.get(app.at("/admin")).send().await.expect("admin page");
    assert_eq!(after.status(), StatusCode::SEE_OTHER, "logged out visitors are sent to the login page");
    assert_eq!(after.headers()["location"], "/login");
}

#[tokio::test]
async fn state_changing_requests_without_csrf_token_are_rejected_and_change_nothing() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = login_page(&app).await;
    // Login itself needs the token.
    let resp = client
        .post(app.at("/login"))
        .form(&[("name", "root-admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);

    let count = || async {
        sqlx::query_scalar::<_, i64>("SELECT count(*) FROM campaigns").fetch_one(&app.pool).await.expect("count")
    };
    // A form without the token, and one with a forged token.
    for form in [vec![("name", "x"), ("kind", "vton")], vec![("name", "x"), ("kind", "vton"), ("csrf_token", "forged")]]
    {
        let resp = client.post(app.at("/admin")).form(&form).send().await.expect("post");
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
        let page = resp.text().await.expect("html");
        assert!(page.contains("CSRF token") && page.contains("<html"), "browsers get a page: {page}");
    }
    // A cookie-authenticated JSON call without the header.
    let resp = client
        .post(app.at("/api/v1/admin/campaigns"))
        .json(&serde_json::json!({"kind": "vton", "name": "x"}))
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    assert_eq!(count().await, 0);

    // With the token both work.
    let resp = client
        .post(app.at("/admin"))
        .form(&[("name", "Form campaign"), ("kind", "vton"), ("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let resp = client
        .post(app.at("/api/v1/admin/campaigns"))
        .header("x-csrf-token", &csrf)
        .json(&serde_json::json!({"kind": "vton", "name": "JSON campaign"}))
        .send()
        .await
        .expect("post");
    assert_eq!(resp.status(), StatusCode::CREATED);
    assert_eq!(count().await, 2);
}

#[tokio::test]
async fn login_attempts_are_rate_limited() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = login_page(&app).await;
    let mut statuses = Vec::new();
    for _ in 0..12 {
        let resp = client
            .post(app.at("/login"))
            .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", "guess-guess")])
            .send()
            .await
            .expect("login");
        statuses.push(resp.status());
    }
    assert!(statuses[..10].iter().all(|s| *s == StatusCode::UNAUTHORIZED), "{statuses:?}");
    assert_eq!(statuses[11], StatusCode::TOO_MANY_REQUESTS);
    // Even the right password is refused while limited.
    let resp = client
        .post(app.at("/login"))
        .form(&[("csrf_token", csrf.as_str()), ("name", "root-admin"), ("password", ADMIN_PASSWORD)])
        .send()
        .await
        .expect("login");
    assert_eq!(resp.status(), StatusCode::TOO_MANY_REQUESTS);
}

#[tokio::test]
async fn api_tokens_authenticate_scripts_and_bad_tokens_get_401() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let (status, body) = api(&app, &token, reqwest::Method::GET, "/api/v1/admin/campaigns", None).await;
    assert_eq!(status, StatusCode::OK, "{body}");
    let (status, body) = api(&app, "atl_not-a-token", reqwest::Method::GET, "/api/v1/admin/campaigns", None).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    assert_eq!(body["error"]["code"], "unauthenticated");
    // Tokens are stored hashed.
    let stored: String =
        sqlx::query_scalar("SELECT token_hash FROM api_tokens").fetch_one(&app.pool).await.expect("hash");
    assert!(!stored.contains(&token[4..]));
}

#[tokio::test]
async fn every_page_action_says_what_it_did() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let follow = |resp: reqwest::Response| {
        let client = client.clone();
        let app_url = app.url.clone();
        async move {
            let to = resp.headers()["location"].to_str().expect("location").to_owned();
            client.get(format!("{app_url}{to}")).send().await.expect("page").text().await.expect("html")
        }
    };
    let resp = client
        .post(app.at("/admin"))
        .form(&[("name", "Feedback"), ("kind", "vton"), ("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("create");
    let page = follow(resp).await;
    assert!(page.contains(r#"class="flash""#) && page.contains("Campaign “Feedback” created"), "{page}");
    let id: String = sqlx::query_scalar("SELECT id::text FROM campaigns").fetch_one(&app.pool).await.expect("id");
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{id}/invitations")))
        .form(&[("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("invite");
    let page = follow(resp).await;
    assert!(page.contains("Invitation link created"), "{page}");
    // Shown once: a reload has no message.
    let again =
        client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page").text().await.expect("html");
    assert!(!again.contains(r#"class="flash""#));
    let csv = "id,garment,person,tryon,reference,model,category,dataset,expected\na,/g,/p,/t,/r,m,tops,d,\nb,/g2,/p2,/t2,/r2,m,tops,d,\n";
    let resp = client
        .post(app.at(&format!("/admin/campaigns/{id}/import")))
        .form(&[("csrf_token", csrf.as_str()), ("content", csv)])
        .send()
        .await
        .expect("import");
    assert!(follow(resp).await.contains("2 item(s) imported."));
}

#[tokio::test]
async fn campaign_settings_are_edited_on_the_page_with_defaults_shown_and_validated_like_the_api() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &token, "vton", "page settings").await;
    let page = crate::fixtures::get_text(&app, &token, &format!("/admin/campaigns/{id}")).await;
    assert!(
        page.contains("name=\"cfg.sanity_per_questionnaire\"") && page.contains("Default: <code>5</code>"),
        "{page}"
    );
    assert!(page.contains("shared sanity tasks with known answers hidden in each questionnaire"), "{page}");
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let save = |fields: Vec<(&'static str, String)>| {
        let (client, csrf, url) = (client.clone(), csrf.clone(), app.at(&format!("/admin/campaigns/{id}/settings")));
        async move {
            let mut form = fields;
            form.push(("csrf_token", csrf));
            client.post(url).form(&form).send().await.expect("save")
        }
    };
    let resp = save(vec![
        ("cfg.tasks_per_questionnaire", "4".into()),
        ("cfg.sanity_per_questionnaire", "1".into()),
        ("cfg.stop_sanity_failures", "true".into()),
        ("cfg.background", "".into()),
    ])
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let (_, c) = api(&app, &token, reqwest::Method::GET, &format!("/api/v1/admin/campaigns/{id}"), None).await;
    let config = &c["campaign"]["config"];
    assert_eq!(
        (config["tasks_per_questionnaire"].as_i64(), config["sanity_per_questionnaire"].as_i64()),
        (Some(4), Some(1))
    );
    assert_eq!(config["stop_sanity_failures"], true);
    assert_eq!(config["background"], serde_json::json!([]));
    // Lists are lines, not JSON: background questions one per line, sanity positions by commas.
    let page = crate::fixtures::get_text(&app, &token, &format!("/admin/campaigns/{id}")).await;
    assert!(page.contains("One question per line: id: question | option | option"), "{page}");
    let resp = save(vec![
        ("cfg.background", "gender: Your gender? | female | male | other\nhand: Which hand? | left | right\n".into()),
        ("cfg.sanity_positions", "2".into()),
        ("cfg.tasks_per_questionnaire", "4".into()),
        ("cfg.sanity_per_questionnaire", "1".into()),
    ])
    .await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap_or_default());
    let (_, c) = api(&app, &token, reqwest::Method::GET, &format!("/api/v1/admin/campaigns/{id}"), None).await;
    let config = &c["campaign"]["config"];
    assert_eq!(
        config["background"],
        serde_json::json!([{"id": "gender", "question": "Your gender?", "options": ["female", "male", "other"]},
                           {"id": "hand", "question": "Which hand?", "options": ["left", "right"]}])
    );
    assert_eq!(config["sanity_positions"], serde_json::json!([2]));
    let page = crate::fixtures::get_text(&app, &token, &format!("/admin/campaigns/{id}")).await;
    assert!(
        page.contains("gender: Your gender? | female | male | other\nhand: Which hand? | left | right</textarea>"),
        "{page}"
    );
    // A line that is not a question is refused, naming the line and the setting, the text kept.
    let resp = save(vec![("cfg.background", "gender: Your gender? | female | male\nage: How old?".into())]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let html = resp.text().await.expect("html");
    assert!(html.contains("background: line 2: expected an id, a question and at least two options"), "{html}");
    assert!(html.contains("age: How old?</textarea>"), "{html}");
    // The same rules as the API: refused with a page, nothing changed.
    let resp =
        save(vec![("cfg.tasks_per_questionnaire", "1".into()), ("cfg.sanity_per_questionnaire", "1".into())]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    assert!(resp.text().await.expect("html").contains("tasks_per_questionnaire must exceed"));
    let resp = save(vec![("cfg.appearances", "many".into())]).await;
    assert_eq!(resp.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let (_, c) = api(&app, &token, reqwest::Method::GET, &format!("/api/v1/admin/campaigns/{id}"), None).await;
    assert_eq!(c["campaign"]["config"]["tasks_per_questionnaire"], 4);

    // The new-campaign address without a kind leads to the form that picks one.
    let resp = client.get(app.at("/admin/new")).send().await.expect("new");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    assert_eq!(resp.headers()["location"], "/admin#new-campaign");
    let list = client.get(app.at("/admin")).send().await.expect("list").text().await.expect("html");
    assert!(list.contains("id=\"new-campaign\"") && list.contains("<select name=\"kind\">"), "{list}");
    // The new-campaign form shows every setting with its default and creates with the ones given.
    let html =
        client.get(app.at("/admin/new?kind=vton&name=Second")).send().await.expect("new").text().await.expect("html");
    assert!(
        html.contains("New VTON quality rating campaign") && html.contains("name=\"cfg.annotators_per_questionnaire\""),
        "{html}"
    );
    let resp = client
        .post(app.at("/admin"))
        .form(&[
            ("csrf_token", csrf.as_str()),
            ("kind", "vton"),
            ("name", "Second"),
            ("cfg.sanity_per_questionnaire", "2"),
            ("cfg.tasks_per_questionnaire", "10"),
        ])
        .send()
        .await
        .expect("create");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let config: serde_json::Value = sqlx::query_scalar("SELECT config FROM campaigns WHERE name = 'Second'")
        .fetch_one(&app.pool)
        .await
        .expect("config");
    assert_eq!(
        (config["sanity_per_questionnaire"].as_i64(), config["tasks_per_questionnaire"].as_i64()),
        (Some(2), Some(10))
    );
    assert_eq!(config["annotators_per_questionnaire"], 7, "the rest keep their defaults");
}

#[tokio::test]
async fn the_campaign_page_takes_files_above_a_megabyte_and_image_uploads() {
    let app = TestApp::spawn().await;
    let token = admin_token(&app).await;
    let id = crate::fixtures::new_campaign(&app, &token, "vton", "uploads").await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    let mut csv = String::from("id,garment,person,tryon,reference,model,category,dataset,expected\n");
    for n in 0..14_000 {
        csv.push_str(&format!(
            "img-{n},/img/g/{n}.png,/img/p/{n}.png,/img/t/{n}.png,/img/r/{n}.png,model-a,tops,vitonhd,\n"
        ));
    }
    assert!(csv.len() > 1024 * 1024, "{} bytes", csv.len());
    let resp = crate::fixtures::upload_on_campaign_page(&app, &client, &csrf, &id, csv).await;
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "{}", resp.text().await.unwrap_or_default());
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("n");
    assert_eq!(items, 14_000);
    let page =
        client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page").text().await.expect("html");
    assert!(page.contains("14000 item(s) imported."), "the page says what it did");

    // Without the token as the upload's first field (or with a wrong one, or later), nothing happens.
    for form in [
        reqwest::multipart::Form::new().text("content", "id,garment\n"),
        reqwest::multipart::Form::new().text("csrf_token", "forged").text("content", "id,garment\n"),
        reqwest::multipart::Form::new().text("content", "id,garment\n").text("csrf_token", csrf.clone()),
    ] {
        let resp =
            client.post(app.at(&format!("/admin/campaigns/{id}/import"))).multipart(form).send().await.expect("upload");
        assert_eq!(resp.status(), StatusCode::FORBIDDEN);
    }
    // The page's forms carry no token in their addresses.
    assert!(!page.contains("csrf_token="), "no token in a URL: {page}");

    let png = crate::fixtures::png(4, 3, 10);
    let form = reqwest::multipart::Form::new()
        .text("csrf_token", csrf.clone())
        .part("image", reqwest::multipart::Part::bytes(png).file_name("a.png").mime_str("image/png").expect("mime"));
    let resp =
        client.post(app.at(&format!("/admin/images?campaign={id}"))).multipart(form).send().await.expect("image");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER);
    let page =
        client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page").text().await.expect("html");
    assert!(page.contains("Image uploaded: use /images/"), "{page}");

    // Several at once: all stored and listed; one bad file stores none.
    let part = |bytes: Vec<u8>, name: &str| {
        reqwest::multipart::Part::bytes(bytes).file_name(name.to_owned()).mime_str("image/png").expect("mime")
    };
    let upload = |form: reqwest::multipart::Form| {
        let (client, url) = (client.clone(), app.at(&format!("/admin/images?campaign={id}")));
        async move { client.post(url).multipart(form).send().await.expect("images") }
    };
    let files: i64 = std::fs::read_dir(std::env::temp_dir().join(format!("atelier-uploads-{}", app.database)))
        .map(|d| d.count() as i64)
        .unwrap_or(0);
    let bad = reqwest::multipart::Form::new()
        .text("csrf_token", csrf.clone())
        .part("image", part(crate::fixtures::png(2, 2, 90), "good.png"))
        .part("image", part(b"not a png".to_vec(), "broken.png"));
    let refused = upload(bad).await;
    assert_eq!(refused.status(), StatusCode::UNPROCESSABLE_ENTITY);
    let text = refused.text().await.expect("html");
    assert!(text.contains("broken.png") && text.contains("no image was stored"), "{text}");
    let after: i64 = std::fs::read_dir(std::env::temp_dir().join(format!("atelier-uploads-{}", app.database)))
        .map(|d| d.count() as i64)
        .unwrap_or(0);
    assert_eq!(after, files, "nothing stored");
    let two = reqwest::multipart::Form::new()
        .text("csrf_token", csrf.clone())
        .part("image", part(crate::fixtures::png(2, 2, 91), "a.png"))
        .part("image", part(crate::fixtures::png(2, 2, 92), "b.png"));
    assert_eq!(upload(two).await.status(), StatusCode::SEE_OTHER);
    let page =
        client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page").text().await.expect("html");
    assert!(page.contains("2 images uploaded: use /images/"), "{page}");
}

#[tokio::test]
async fn a_script_logs_in_with_json_and_gets_a_token_that_works_as_its_expert() {
    let app = TestApp::spawn().await;
    atelier::auth::users::create(&app.pool, atelier::auth::Role::Expert, "script-expert", "expert-password-1")
        .await
        .expect("expert");
    let client = reqwest::Client::new();
    let login = |password: &'static str| {
        let (client, app) = (client.clone(), &app);
        async move {
            let resp = client
                .post(app.at("/api/v1/login"))
                .json(&serde_json::json!({"name": "script-expert", "password": password}))
                .send()
                .await
                .expect("login");
            let status = resp.status();
            (status, resp.json::<serde_json::Value>().await.expect("json"))
        }
    };
    let (status, body) = login("wrong-password").await;
    assert_eq!((status.as_u16(), body["error"]["code"].as_str()), (401, Some("unauthenticated")), "{body}");
    let (status, body) = login("expert-password-1").await;
    assert_eq!(status.as_u16(), 201, "{body}");
    let token = body["token"].as_str().expect("token");
    let me: serde_json::Value =
        client.get(app.at("/api/v1/me")).bearer_auth(token).send().await.expect("me").json().await.expect("json");
    assert_eq!(me["user"]["name"], "script-expert", "{me}");
}

#[tokio::test]
async fn refused_admin_forms_show_the_error_beside_the_form_with_what_was_typed() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (client, csrf) = crate::fixtures::logged_in_admin(&app).await;
    client
        .post(app.at("/admin"))
        .form(&[("name", "Forms"), ("kind", "vton"), ("csrf_token", csrf.as_str())])
        .send()
        .await
        .expect("create");
    let id: String = sqlx::query_scalar("SELECT id::text FROM campaigns").fetch_one(&app.pool).await.expect("id");
    let config_before: serde_json::Value =
        sqlx::query_scalar("SELECT config FROM campaigns").fetch_one(&app.pool).await.expect("config");
    let post = |path: &'static str, fields: Vec<(&'static str, &'static str)>| {
        let (client, csrf, url) = (client.clone(), csrf.clone(), app.at(&format!("/admin/campaigns/{id}/{path}")));
        async move {
            let mut form = vec![("csrf_token", csrf.as_str())];
            form.extend(fields);
            let resp = client.post(url).form(&form).send().await.expect("post");
            (resp.status(), resp.text().await.expect("html"))
        }
    };
    // A pasted import with a broken row: nothing imported, the text kept.
    let (status, html) = post("import", vec![("content", "id,garment\nonly-two,columns & more\n")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains(r#"id="import-error">Nothing was imported: "#), "{html}");
    assert!(html.contains("only-two,columns &#38; more"), "the pasted text is kept: {html}");
    let items: i64 = sqlx::query_scalar("SELECT count(*) FROM items").fetch_one(&app.pool).await.expect("count");
    assert_eq!(items, 0);
    // A setting out of range: not saved, the typed value shown.
    let (status, html) = post("settings", vec![("cfg.tasks_per_questionnaire", "-3")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let settings = &html[html.find(r#"id="settings""#).expect("settings section")..];
    assert!(
        settings.contains(r#"<p class="error" role="alert">Not saved: `tasks_per_questionnaire`: invalid value: integer `-3`, expected a whole number, 0 or more</p>"#),
        "the refusal names the setting: {settings}"
    );
    assert!(settings.contains(r#"name="cfg.tasks_per_questionnaire" value="-3""#), "{settings}");
    let config_after: serde_json::Value =
        sqlx::query_scalar("SELECT config FROM campaigns").fetch_one(&app.pool).await.expect("config");
    assert_eq!(config_before, config_after, "nothing saved");
    // A link with unreadable places; an introduction with an unreadable time.
    let (status, html) = post("invitations", vec![("places", "many"), ("id_param", "PROLIFIC_PID")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("No link was created: places must be a whole number"), "{html}");
    assert!(html.contains(r#"value="many""#) && html.contains(r#"value="PROLIFIC_PID""#), "{html}");
    let (status, html) =
        post("intro", vec![("text", "Rate each try-on."), ("estimated_minutes", "soon"), ("pay", "£2")]).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    assert!(html.contains("Not saved: the estimated time is a whole number"), "{html}");
    assert!(html.contains(">Rate each try-on.</textarea>") && html.contains(r#"value="soon""#), "{html}");
    // Before any batch, the page says what is missing; core settings are in words,
    // and a crowd campaign is not offered a second expert's review.
    let page = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page");
    let page = page.text().await.expect("html");
    assert!(page.contains(r#"<p class="notice not-ready">Not ready to open: import items first.</p>"#), "{page}");
    assert!(page.contains("Who annotates: crowd workers or experts"), "{page}");
    // The kind's settings too: a label, the unit beside the input, the paper the default comes from.
    let tasks = &page[page.find(r#"<label for="cfg-tasks_per_questionnaire">"#).expect("the setting")..];
    let tasks = &tasks[..tasks.find("</div>").expect("its end")];
    assert!(
        tasks.contains("Tasks per questionnaire <span class=\"hint\">(<code>tasks_per_questionnaire</code>)"),
        "{tasks}"
    );
    assert!(tasks.contains(r#"<span id="cfg-tasks_per_questionnaire-unit" class="unit">tasks</span>"#), "{tasks}");
    assert!(tasks.contains("Default: <code>50</code> tasks (VTON-QBench paper, §3.2 and §3.3)."), "{tasks}");
    assert!(!page.contains(r#"name="set.review""#), "no review on a crowd campaign: {page}");
    let csv = "id,garment,person,tryon,reference,model,category,dataset,expected\na,/g,/p,/t,/r,m,tops,d,\nb,/g2,/p2,/t2,/r2,m,tops,d,\n";
    let (status, _) = post("import", vec![("content", csv)]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let page = client.get(app.at(&format!("/admin/campaigns/{id}"))).send().await.expect("page");
    let page = page.text().await.expect("html");
    assert!(page.contains("Not ready to open: 5 sanity task(s) per questionnaire"), "the kind's reason: {page}");
    assert!(page.contains("but the campaign has 0."), "{page}");

    // Opening without batches is refused beside the actions, the campaign unchanged.
    let (status, html) = post("state", vec![("state", "open")]).await;
    assert!(status.is_client_error(), "{status}");
    let actions = &html[html.find(r#"id="actions""#).expect("actions")..];
    assert!(actions[..600].contains(r#"<p class="error" role="alert">"#), "{actions}");
    let state: String =
        sqlx::query_scalar("SELECT state::text FROM campaigns").fetch_one(&app.pool).await.expect("state");
    assert_eq!(state, "draft");
    // Nothing puts the CSRF token in an address.
    assert!(!html.contains("csrf_token="), "{html}");
}
