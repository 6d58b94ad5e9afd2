//! Login and logout for admins and experts.

use super::{render_with, PageResult};
use crate::auth::rate_limit::DEVICE_COOKIE;
use crate::auth::{passwords, users};
use crate::error::Error;
use crate::http::extract::{current_user, USER_KEY};
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::{ConnectInfo, DefaultBodyLimit, FromRequestParts, State};
use axum::http::request::Parts;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Form, Router};
use std::net::SocketAddr;
use tower_sessions::Session;

/// The login and logout routes, and the home page that sends each role on.
pub fn router() -> Router<AppState> {
    Router::new()
        .route("/", get(home))
        .route("/login", get(login_page).post(login).layer(DefaultBodyLimit::max(csrf::MAX_LOGIN_FORM)))
        .route("/logout", post(logout))
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
        Ok(MaybeRole(current_user(parts, state).await.ok().flatten().map(|u| u.role.to_string())))
    }
}

/// Where "the start" is for whoever asks: staff's home pages; for a crowd
/// worker the campaign they joined last (never the staff login).
async fn home(MaybeRole(role): MaybeRole, session: Session) -> impl IntoResponse {
    match role.as_deref() {
        Some("admin") => Redirect::to("/admin"),
        Some("expert") => Redirect::to("/expert"),
        Some("worker") => {
            let joined: Vec<uuid::Uuid> =
                session.get(crate::http::api::annotate::JOINED_KEY).await.ok().flatten().unwrap_or_default();
            match joined.last() {
                Some(campaign) => Redirect::to(&format!("/work/{campaign}")),
                None => Redirect::to("/login"),
            }
        }
        _ => Redirect::to("/login"),
    }
}

/// The login page with a fresh double-submitted token; nothing is stored
/// for an anonymous visitor.
/// `existing` is the token the browser already holds (a failed attempt
/// keeps it, so an open login form stays valid).
fn login_form(
    s: &AppState,
    existing: Option<String>,
    error: Option<String>,
    name: String,
    status: axum::http::StatusCode,
) -> PageResult {
    let (csrf_token, cookie) = match existing {
        Some(token) => (token, None),
        None => {
            let (token, cookie) = csrf::login_token(s.config.secure_cookies);
            (token, Some(cookie))
        }
    };
    let mut response = render_with(status, &LoginPage { csrf_token, error, name })?;
    if let Some(v) = cookie.and_then(|c| axum::http::HeaderValue::from_str(&c).ok()) {
        response.headers_mut().append(axum::http::header::SET_COOKIE, v);
    }
    Ok(response)
}

async fn login_page(State(s): State<AppState>) -> PageResult {
    login_form(&s, None, None, String::new(), axum::http::StatusCode::OK)
}

#[derive(serde::Deserialize)]
struct LoginForm {
    name: String,
    password: String,
}

async fn login(
    State(s): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: axum::http::HeaderMap,
    session: Session,
    Form(form): Form<LoginForm>,
) -> PageResult {
    let address = crate::http::client_ip(peer.ip(), &headers, &s.config.trusted_proxies).to_string();
    let device = crate::http::cookie(&headers, DEVICE_COOKIE);
    let token = crate::http::cookie(&headers, csrf::LOGIN_COOKIE);
    // The turn first: an attempt that waited behind a flood then meets the
    // limiter as the flood left it.
    let turn = passwords::turn().await?;
    if !s.limiter.allow(&s.pool, &address, &form.name, &form.password, device.as_deref()).await? {
        let status = axum::http::StatusCode::TOO_MANY_REQUESTS;
        return login_form(&s, token, Some(Error::RateLimited.to_string()), form.name, status);
    }
    match users::login(&s.pool, turn, &form.name, &form.password).await? {
        Some(user) => {
            // A new session id at login defeats session fixation.
            session.cycle_id().await?;
            session.insert(USER_KEY, user.id).await?;
            // A worker's campaigns do not follow the browser into a staff session.
            session.remove_value(crate::http::api::annotate::JOINED_KEY).await?;
            if let Some(t) = &token {
                csrf::adopt(&session, t).await?;
            }
            let new_device = s.limiter.succeeded(&s.pool, user.id, &form.name, device.as_deref()).await?;
            let to = if user.role == crate::auth::Role::Admin { "/admin" } else { "/expert" };
            let mut response = Redirect::to(to).into_response();
            if let Some(token) = new_device {
                let cookie = format!(
                    "{DEVICE_COOKIE}={token}; Path=/login; HttpOnly; SameSite=Lax; Max-Age=31536000{}",
                    if s.config.secure_cookies { "; Secure" } else { "" }
                );
                if let Ok(v) = axum::http::HeaderValue::from_str(&cookie) {
                    response.headers_mut().append(axum::http::header::SET_COOKIE, v);
                }
            }
            Ok(response)
        }
        None => {
            s.limiter.failed(&s.pool, &address, &form.name).await?;
            let status = axum::http::StatusCode::UNAUTHORIZED;
            login_form(&s, token, Some("Wrong name or password.".into()), form.name, status)
        }
    }
}

async fn logout(session: Session) -> PageResult {
    session.flush().await?;
    Ok(Redirect::to("/login").into_response())
}
