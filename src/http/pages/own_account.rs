//! An admin's or expert's own account: who they are, their API tokens
//! (with revoke), and changing their password (the current one required;
//! their other sessions end and their tokens are revoked, so a browser left
//! signed in elsewhere, or a token got with a stolen password, stops).

use super::{render_with, OnPage, PageResult, Refusal};
use crate::auth::{passwords, tokens, users, Role};
use crate::error::{Code, Error};
use crate::http::extract::{CurrentUser, USER_KEY};
use crate::http::{csrf, flash, session_store, AppState};
use askama::Template;
use axum::extract::{ConnectInfo, State};
use axum::routing::{get, post};
use axum::{Form, Router};
use std::net::SocketAddr;
use tower_sessions::Session;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/account", get(account_page))
        .route("/account/password", post(change_password))
        .route("/account/tokens/{id}/revoke", post(revoke_token))
}

/// The page's password form (its section id).
const PASSWORD_FORM: &str = "password";

#[derive(Template)]
#[template(path = "own_account.html")]
struct AccountPage {
    user: users::User,
    csrf_token: String,
    /// Their own API tokens, live ones first.
    tokens: Vec<tokens::TokenInfo>,
    /// The password form refused: why (the passwords typed are never shown
    /// again).
    refused: Option<Refusal>,
}

impl AccountPage {
    /// Where the header's way back leads: the admin's or the expert's home.
    fn home(&self) -> &'static str {
        match self.user.role {
            Role::Admin => "/admin",
            _ => "/expert",
        }
    }

    /// The password form's refusal, in words.
    fn refusal(&self) -> Option<String> {
        Refusal::of_form(&self.refused, PASSWORD_FORM)
    }
}

/// Admins and experts have a password; workers join through links.
fn staff(user: CurrentUser) -> Result<users::User, crate::http::error::AppError> {
    user.require(&[Role::Admin, Role::Expert])
}

async fn show(s: &AppState, session: &Session, user: users::User, refused: Option<Refusal>) -> PageResult {
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    let tokens = tokens::own(&s.pool, user.id).await?;
    render_with(status, &AccountPage { user, csrf_token: csrf::token(session).await?, tokens, refused })
}

async fn account_page(OnPage(user): OnPage<CurrentUser>, State(s): State<AppState>, session: Session) -> PageResult {
    show(&s, &session, staff(user)?, None).await
}

/// Revokes one of the signed-in person's own tokens (another's is not found).
async fn revoke_token(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    crate::http::extract::Path(id): crate::http::extract::Path<uuid::Uuid>,
) -> PageResult {
    let user = staff(user)?;
    tokens::revoke_own(&s.pool, user.id, id).await?;
    Ok(flash::redirect(&session, "The token is revoked: it stops working at once.", "/account#tokens").await)
}

#[derive(serde::Deserialize)]
struct PasswordForm {
    #[serde(default)]
    current: String,
    #[serde(default)]
    new: String,
    #[serde(default)]
    repeat: String,
}

/// Changes the signed-in person's password. The current password is checked
/// as a login checks it (a turn at the hasher, the login limiter: a stolen
/// session cannot guess it faster than the login page allows); then every
/// session of theirs ends and this browser's goes on under a new id.
async fn change_password(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    ConnectInfo(peer): ConnectInfo<SocketAddr>,
    headers: axum::http::HeaderMap,
    session: Session,
    Form(form): Form<PasswordForm>,
) -> PageResult {
    let user = staff(user)?;
    let refuse = |e: Error| Refusal::of(PASSWORD_FORM, Vec::new(), e);
    if form.new != form.repeat {
        let e = Error::invalid(Code::PasswordsDiffer, "the new password and its repetition differ");
        return show(&s, &session, user, Some(refuse(e)?)).await;
    }
    let name = user.name.clone().unwrap_or_default();
    let address = crate::http::client_ip(peer.ip(), &headers, &s.config.trusted_proxies).to_string();
    let turn = passwords::turn().await?;
    if !s.limiter.allow(&s.pool, &address, &name, &form.current, None).await? {
        let status = axum::http::StatusCode::TOO_MANY_REQUESTS;
        let limited =
            Refusal { form: PASSWORD_FORM, message: Error::RateLimited.to_string(), status, kept: Vec::new() };
        return show(&s, &session, user, Some(limited)).await;
    }
    match users::change_own_password(&s.pool, turn, user.id, &form.current, &form.new).await {
        Ok(Some(tokens_revoked)) => {
            s.users.forget(user.id);
            let ended = session_store::end_sessions_of(&s.pool, &s.sessions, &[user.id]).await.map_err(Error::from)?;
            // This browser stays signed in, under a new session id.
            session.cycle_id().await?;
            session.insert(USER_KEY, user.id).await?;
            let others = ended.saturating_sub(1);
            Ok(flash::redirect(
                &session,
                format!(
                    "Your password is changed; {others} other session(s) of yours ended and {tokens_revoked} API \
                     token(s) revoked."
                ),
                "/account",
            )
            .await)
        }
        Ok(None) => {
            s.limiter.failed(&s.pool, &address, &name).await?;
            let e = Error::invalid(Code::WrongPassword, "your current password is not the one typed");
            show(&s, &session, user, Some(refuse(e)?)).await
        }
        Err(e) => show(&s, &session, user, Some(refuse(e)?)).await,
    }
}
