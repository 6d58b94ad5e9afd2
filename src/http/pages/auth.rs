//! Login and logout for admins and experts.

use super::{render, PageResult};
use crate::auth::users;
use crate::core::Error;
use crate::http::extract::{current_user, USER_KEY};
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::{ConnectInfo, FromRequestParts, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Form, Router};
use std::net::SocketAddr;
use tower_sessions::Session;

pub fn router() -> Router<AppState> {
    Router::new().route("/", get(home)).route("/login", get(login_page).post(login)).route("/logout", post(logout))
}

#[derive(Template)]
#[template(path = "login.html")]
struct LoginPage {
    csrf_token: String,
    error: Option<String>,
    name: String,
}

/// The caller's role, if logged in.
struct MaybeRole(Option<String>);

impl FromRequestParts<AppState> for MaybeRole {
    type Rejection = super::PageError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        Ok(MaybeRole(current_user(parts, state).await.ok().flatten().map(|u| u.role)))
    }
}

async fn home(MaybeRole(role): MaybeRole) -> impl IntoResponse {
    match role.as_deref() {
        Some("admin") => Redirect::to("/admin"),
        Some("expert") => Redirect::to("/expert"),
        _ => Redirect::to("/login"),
    }
}

async fn login_page(session: Session) -> PageResult {
    render(&LoginPage { csrf_token: csrf::token(&session).await?, error: None, name: String::new() })
}

#[derive(serde::Deserialize)]
struct LoginForm {
    name: String,
    password: String,
}

async fn login(
    State(s): State<AppState>,
    ConnectInfo(addr): ConnectInfo<SocketAddr>,
    session: Session,
    Form(form): Form<LoginForm>,
) -> PageResult {
    let csrf_token = csrf::token(&session).await?;
    if !s.limiter.allow(&addr.ip().to_string(), &form.name) {
        let page = LoginPage { csrf_token, error: Some(Error::RateLimited.to_string()), name: form.name };
        let mut response = render(&page)?;
        *response.status_mut() = axum::http::StatusCode::TOO_MANY_REQUESTS;
        return Ok(response);
    }
    match users::login(&s.pool, &form.name, &form.password).await? {
        Some(user) => {
            // A new session id at login defeats session fixation.
            session.cycle_id().await?;
            session.insert(USER_KEY, user.id).await?;
            let to = if user.role == "admin" { "/admin" } else { "/expert" };
            Ok(Redirect::to(to).into_response())
        }
        None => {
            let page = LoginPage { csrf_token, error: Some("Wrong name or password.".into()), name: form.name };
            let mut response = render(&page)?;
            *response.status_mut() = axum::http::StatusCode::UNAUTHORIZED;
            Ok(response)
        }
    }
}

async fn logout(session: Session) -> PageResult {
    session.flush().await?;
    Ok(Redirect::to("/login").into_response())
}
