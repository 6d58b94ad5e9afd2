//! Users and tokens in the page: an admin creates an expert, hands them a
//! token (shown once), disables them (signed out, token dead, no login),
//! enables them again, resets their password; refusals stay beside the form.
//! An expert changes their own password on their account page.

use crate::fixtures::{admin_token, logged_in, logged_in_admin, ADMIN_PASSWORD};
use crate::support::TestApp;
use reqwest::{Client, StatusCode};
use uuid::Uuid;

/// Posts a page form with the CSRF token; returns the status, where it
/// redirects (if it does) and the body.
async fn post(
    app: &TestApp,
    client: &Client,
    csrf: &str,
    path: &str,
    fields: &[(&str, &str)],
) -> (StatusCode, String, String) {
    let mut form: Vec<(&str, &str)> = vec![("csrf_token", csrf)];
    form.extend_from_slice(fields);
    let resp = client.post(app.at(path)).form(&form).send().await.expect("post");
    let status = resp.status();
    let to = resp.headers().get("location").and_then(|l| l.to_str().ok()).unwrap_or_default().to_owned();
    (status, to, resp.text().await.expect("body"))
}

async fn page(app: &TestApp, client: &Client, path: &str) -> (StatusCode, String) {
    let resp = client.get(app.at(path)).send().await.expect("get");
    (resp.status(), resp.text().await.expect("html"))
}

async fn me_with_token(app: &TestApp, token: &str) -> StatusCode {
    Client::new().get(app.at("/api/v1/me")).bearer_auth(token).send().await.expect("me").status()
}

async fn id_of(app: &TestApp, name: &str) -> Uuid {
    sqlx::query_scalar("SELECT id FROM users WHERE name = $1").bind(name).fetch_one(&app.pool).await.expect("user")
}

#[tokio::test]
async fn an_admin_manages_experts_and_their_tokens_in_the_page() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let (admin, csrf) = logged_in_admin(&app).await;
    let (status, html) = page(&app, &admin, "/admin/users").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("root-admin (you)"), "{html}");
    assert!(page(&app, &admin, "/admin").await.1.contains(r#"<a href="/admin/users">Users</a>"#));

    // Refusals stay beside the form with what was typed (never the password).
    let (status, _, html) = post(
        &app,
        &admin,
        &csrf,
        "/admin/users",
        &[("name", "bad name!"), ("role", "expert"), ("password", "long enough")],
    )
    .await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains(r#"id="new-error">names are 1-64"#) && html.contains(r#"value="bad name!""#), "{html}");
    assert!(!html.contains("long enough"), "the password is not sent back");
    let (_, _, html) =
        post(&app, &admin, &csrf, "/admin/users", &[("name", "ines"), ("role", "admin"), ("password", "short")]).await;
    assert!(html.contains("at least 8 characters") && html.contains(r#"value="admin" checked"#), "{html}");
    let accounts: i64 = sqlx::query_scalar("SELECT count(*) FROM users").fetch_one(&app.pool).await.expect("count");
    assert_eq!(accounts, 1, "nothing created");

    let (status, to, _) = post(
        &app,
        &admin,
        &csrf,
        "/admin/users",
        &[("name", "ines"), ("role", "expert"), ("password", "first-password")],
    )
    .await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/admin/users"));
    let ines = id_of(&app, "ines").await;
    let (expert, _) = logged_in(&app, "ines", "first-password").await;
    assert_eq!(page(&app, &expert, "/expert").await.0, StatusCode::OK);
    assert_eq!(page(&app, &expert, "/admin/users").await.0, StatusCode::FORBIDDEN, "experts do not see accounts");

    // A token for the expert, shown once, that works.
    let (status, _, html) =
        post(&app, &admin, &csrf, &format!("/admin/users/{ines}/tokens"), &[("expires_in_days", "30")]).await;
    assert_eq!(status, StatusCode::OK);
    let marker = r#"readonly value=""#;
    let start = html.find(marker).expect("the token on the page") + marker.len();
    let token = html[start..].split('"').next().expect("token").to_owned();
    assert_eq!(me_with_token(&app, &token).await, StatusCode::OK);
    assert!(!page(&app, &admin, "/admin/users").await.1.contains(&token), "shown once");
    let (_, _, html) =
        post(&app, &admin, &csrf, &format!("/admin/users/{ines}/tokens"), &[("expires_in_days", "0")]).await;
    assert!(html.contains("a whole number from 1 to 365"), "{html}");

    // Disabled: signed out at once, no login, the token refused.
    let (status, _, _) = post(&app, &admin, &csrf, &format!("/admin/users/{ines}/disable"), &[]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&app, &admin, "/admin/users").await;
    assert!(html.contains("<b>disabled</b>") && html.contains("ines disabled"), "{html}");
    let resp = expert.get(app.at("/expert")).send().await.expect("expert page");
    assert_eq!(resp.headers().get("location").map(|l| l.to_str().ok()), Some(Some("/login")), "signed out");
    assert_eq!(me_with_token(&app, &token).await, StatusCode::UNAUTHORIZED);
    let (login, login_csrf) = crate::fixtures::login_page(&app).await;
    let resp = login
        .post(app.at("/login"))
        .form(&[("csrf_token", login_csrf.as_str()), ("name", "ines"), ("password", "first-password")])
        .send()
        .await
        .expect("login");
    assert_ne!(resp.status(), StatusCode::SEE_OTHER, "a disabled account cannot log in");

    // Enabled again: the same password and token work.
    post(&app, &admin, &csrf, &format!("/admin/users/{ines}/enable"), &[]).await;
    assert_eq!(me_with_token(&app, &token).await, StatusCode::OK);
    let (expert, _) = logged_in(&app, "ines", "first-password").await;

    // A reset password signs the holder of the old one out.
    let (_, _, html) =
        post(&app, &admin, &csrf, &format!("/admin/users/{ines}/password"), &[("password", "short")]).await;
    assert!(html.contains(r#"role="alert">passwords need at least 8 characters"#), "{html}");
    let (status, _, _) =
        post(&app, &admin, &csrf, &format!("/admin/users/{ines}/password"), &[("password", "second-password")]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let resp = expert.get(app.at("/expert")).send().await.expect("expert page");
    assert_eq!(resp.status(), StatusCode::SEE_OTHER, "the old session ended");
    logged_in(&app, "ines", "second-password").await;

    // Never your own account; never another admin's token.
    let me = id_of(&app, "root-admin").await;
    let (status, _, html) = post(&app, &admin, &csrf, &format!("/admin/users/{me}/disable"), &[]).await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("you cannot disable or enable your own account"), "{html}");
    post(
        &app,
        &admin,
        &csrf,
        "/admin/users",
        &[("name", "other-admin"), ("role", "admin"), ("password", ADMIN_PASSWORD)],
    )
    .await;
    let other = id_of(&app, "other-admin").await;
    let (_, _, html) = post(&app, &admin, &csrf, &format!("/admin/users/{other}/tokens"), &[]).await;
    assert!(html.contains("cannot create a token for another admin"), "{html}");
    let live: i64 = sqlx::query_scalar("SELECT count(*) FROM api_tokens WHERE user_id = $1")
        .bind(other)
        .fetch_one(&app.pool)
        .await
        .expect("tokens");
    assert_eq!(live, 0);
}

#[tokio::test]
async fn two_admins_disabling_each_other_leave_one_enabled() {
    let app = TestApp::spawn().await;
    admin_token(&app).await;
    let me = id_of(&app, "root-admin").await;
    let other = atelier::auth::users::create(&app.pool, atelier::auth::Role::Admin, "other", "a-long-password")
        .await
        .expect("admin")
        .id;
    let (a, b) = tokio::join!(
        atelier::auth::users::set_disabled(&app.pool, me, other, true),
        atelier::auth::users::set_disabled(&app.pool, other, me, true),
    );
    assert!(a.is_ok() != b.is_ok(), "exactly one succeeds: {a:?} {b:?}");
    let refused = if a.is_err() { a } else { b };
    assert!(
        matches!(refused, Err(atelier::error::Error::Rejected { code: atelier::error::Code::LastAdmin, .. })),
        "{refused:?}"
    );
    let enabled: i64 = sqlx::query_scalar("SELECT count(*) FROM users WHERE role = 'admin' AND disabled_at IS NULL")
        .fetch_one(&app.pool)
        .await
        .expect("count");
    assert_eq!(enabled, 1);
}

#[tokio::test]
async fn an_expert_changes_their_own_password_and_their_other_browsers_are_signed_out() {
    let app = TestApp::spawn().await;
    crate::fixtures::expert_token(&app, "self-changer").await;
    let old = crate::fixtures::EXPERT_PASSWORD;
    let (laptop, csrf) = logged_in(&app, "self-changer", old).await;
    let (phone, _) = logged_in(&app, "self-changer", old).await;
    let (status, home) = page(&app, &laptop, "/expert").await;
    assert_eq!(status, StatusCode::OK);
    assert!(home.contains("<a href=\"/account\">Your account</a>"), "{home}");
    let (status, html) = page(&app, &laptop, "/account").await;
    assert_eq!(status, StatusCode::OK);
    assert!(html.contains("Signed in as <strong>self-changer</strong> (expert)"), "{html}");
    assert!(html.contains("autocomplete=\"current-password\"") && html.contains("autocomplete=\"new-password\""));

    // Refusals beside the form; the passwords typed are never sent back; nothing changes.
    let new = "a-brand-new-passphrase";
    let refusals: [(&[(&str, &str)], &str); 3] = [
        (
            &[("current", "not-my-password"), ("new", new), ("repeat", new)],
            "your current password is not the one typed",
        ),
        (
            &[("current", old), ("new", new), ("repeat", "a-brand-new-passphrasE")],
            "the new password and its repetition differ",
        ),
        (&[("current", old), ("new", "short"), ("repeat", "short")], "passwords need at least 8 characters"),
    ];
    for (fields, says) in refusals {
        let (status, _, body) = post(&app, &laptop, &csrf, "/account/password", fields).await;
        assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY, "{body}");
        assert!(body.contains(&format!("role=\"alert\">{says}")), "{says}: {body}");
        assert!(!body.contains(new) && !body.contains(old) && !body.contains("not-my-password"), "{body}");
    }
    let (third, _) = logged_in(&app, "self-changer", old).await;

    // The change: this browser stays signed in, the two others are signed out.
    let (status, to, _) =
        post(&app, &laptop, &csrf, "/account/password", &[("current", old), ("new", new), ("repeat", new)]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/account"));
    let (status, html) = page(&app, &laptop, "/account").await;
    assert_eq!(status, StatusCode::OK);
    assert!(
        html.contains("Your password is changed; 2 other session(s) of yours ended and 1 API token(s) revoked."),
        "{html}"
    );
    for other in [&phone, &third] {
        let (status, _) = page(&app, other, "/expert").await;
        assert_ne!(status, StatusCode::OK, "another browser is signed out");
    }
    // The new password logs in, the old one no longer.
    let (client, login_csrf) = crate::fixtures::login_page(&app).await;
    let (status, _, _) =
        post(&app, &client, &login_csrf, "/login", &[("name", "self-changer"), ("password", old)]).await;
    assert_eq!(status, StatusCode::UNAUTHORIZED);
    logged_in(&app, "self-changer", new).await;

    // Without the form's token nothing changes; a crowd worker has no account page.
    let resp = laptop.post(app.at("/account/password")).form(&[("current", new), ("new", old), ("repeat", old)]).send();
    assert_eq!(resp.await.expect("post").status(), StatusCode::FORBIDDEN);
    let admin = admin_token(&app).await;
    let (_, invitation) = crate::fixtures::open_vton_campaign(
        &app,
        &admin,
        2,
        1,
        serde_json::json!({"tasks_per_questionnaire": 3, "sanity_per_questionnaire": 1}),
    )
    .await;
    let worker = crate::fixtures::join(&app, &invitation, "no-account").await;
    let (status, _) = page(&app, &worker.client, "/account").await;
    assert_eq!(status, StatusCode::FORBIDDEN);
}

/// `POST /api/v1/login` as a script does it; the status and the token.
async fn script_login(app: &TestApp, name: &str, password: &str, days: u32) -> (StatusCode, Option<String>) {
    let resp = Client::new()
        .post(app.at("/api/v1/login"))
        .json(&serde_json::json!({"name": name, "password": password, "expires_in_days": days}))
        .send()
        .await
        .expect("login");
    let status = resp.status();
    let body: serde_json::Value = resp.json().await.expect("json");
    (status, body["token"].as_str().map(str::to_owned))
}

#[tokio::test]
async fn tokens_got_with_a_password_end_with_it_and_their_owner_sees_and_revokes_them() {
    let app = TestApp::spawn().await;
    let first = crate::fixtures::expert_token(&app, "thief-target").await;
    let old = crate::fixtures::EXPERT_PASSWORD;
    // No token lives longer than the maximum (365 days unless configured).
    let (status, _) = script_login(&app, "thief-target", old, 3650).await;
    assert_eq!(status, StatusCode::UNPROCESSABLE_ENTITY);
    let (status, stolen) = script_login(&app, "thief-target", old, 365).await;
    assert_eq!(status, StatusCode::CREATED);
    let stolen = stolen.expect("token");
    assert_eq!(me_with_token(&app, &stolen).await, StatusCode::OK);
    let expiry: chrono::DateTime<chrono::Utc> =
        sqlx::query_scalar("SELECT max(expires_at) FROM api_tokens").fetch_one(&app.pool).await.expect("expiry");
    assert!(expiry < chrono::Utc::now() + chrono::Duration::days(366), "{expiry}");

    // The owner sees both tokens on their account page, with what made them.
    let (laptop, csrf) = logged_in(&app, "thief-target", old).await;
    let (_, html) = page(&app, &laptop, "/account").await;
    let section = &html[html.find("id=\"tokens\"").expect("tokens section")..];
    assert!(section.contains("login (POST /api/v1/login)") && section.contains("atelier token create"), "{section}");
    assert_eq!(section.matches("/revoke\"").count(), 2, "{section}");

    // Changing the password revokes both, and says so.
    let new = "a-fresh-passphrase-1";
    let (status, _, _) =
        post(&app, &laptop, &csrf, "/account/password", &[("current", old), ("new", new), ("repeat", new)]).await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&app, &laptop, "/account").await;
    assert!(html.contains("and 2 API token(s) revoked."), "{html}");
    assert_eq!(me_with_token(&app, &stolen).await, StatusCode::UNAUTHORIZED);
    assert_eq!(me_with_token(&app, &first).await, StatusCode::UNAUTHORIZED);

    // A reset by an admin does the same.
    let (_, again) = script_login(&app, "thief-target", new, 30).await;
    let again = again.expect("token");
    assert_eq!(me_with_token(&app, &again).await, StatusCode::OK);
    admin_token(&app).await;
    let (admin, admin_csrf) = logged_in_admin(&app).await;
    let id = id_of(&app, "thief-target").await;
    let (status, _, _) =
        post(&app, &admin, &admin_csrf, &format!("/admin/users/{id}/password"), &[("password", "reset-by-admin")])
            .await;
    assert_eq!(status, StatusCode::SEE_OTHER);
    let (_, html) = page(&app, &admin, "/admin/users").await;
    assert!(html.contains("and 1 API token(s) revoked."), "{html}");
    assert_eq!(me_with_token(&app, &again).await, StatusCode::UNAUTHORIZED);

    // The owner revokes one token themselves; another person's token is not theirs to revoke.
    let (_, mine) = script_login(&app, "thief-target", "reset-by-admin", 1).await;
    let mine = mine.expect("token");
    let (owner, owner_csrf) = logged_in(&app, "thief-target", "reset-by-admin").await;
    let mine_id: Uuid = sqlx::query_scalar("SELECT id FROM api_tokens WHERE revoked_at IS NULL AND user_id = $1")
        .bind(id)
        .fetch_one(&app.pool)
        .await
        .expect("live token");
    let admins: Uuid = sqlx::query_scalar(
        "SELECT t.id FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE u.name = 'root-admin'",
    )
    .fetch_one(&app.pool)
    .await
    .expect("admin token");
    let (status, _, _) = post(&app, &owner, &owner_csrf, &format!("/account/tokens/{admins}/revoke"), &[]).await;
    assert_eq!(status, StatusCode::NOT_FOUND);
    let (status, to, _) = post(&app, &owner, &owner_csrf, &format!("/account/tokens/{mine_id}/revoke"), &[]).await;
    assert_eq!((status, to.as_str()), (StatusCode::SEE_OTHER, "/account#tokens"));
    assert_eq!(me_with_token(&app, &mine).await, StatusCode::UNAUTHORIZED);
}
