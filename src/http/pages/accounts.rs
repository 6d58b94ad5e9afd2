//! Accounts in the page: admins and experts listed, created, disabled and
//! enabled, passwords reset, and API tokens created (shown once) and revoked.
//! Workers have no accounts here: they join through invitation links.

use super::{render, OnPage, PageResult};
use crate::auth::users::{self, Account};
use crate::auth::{tokens, Role};
use crate::error::Error;
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, flash, session_store, AppState};
use askama::Template;
use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Redirect, Response};
use axum::routing::{get, post};
use axum::{Form, Router};
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/users", get(users_page).post(create_account))
        .route("/admin/users/{id}/disable", post(disable))
        .route("/admin/users/{id}/enable", post(enable))
        .route("/admin/users/{id}/password", post(reset_password))
        .route("/admin/users/{id}/tokens", post(create_token))
        .route("/admin/tokens", get(tokens_page))
        .route("/admin/tokens/{id}/revoke", post(revoke_token))
}

/// The new-account form as the admin filled it (never the password).
#[derive(Debug, Default, serde::Deserialize)]
struct NewAccountForm {
    #[serde(default)]
    name: String,
    #[serde(default)]
    role: String,
    #[serde(default)]
    password: String,
}

#[derive(Template)]
#[template(path = "admin_users.html")]
struct UsersPage {
    /// The admin looking at the page (they cannot disable themselves).
    me: Uuid,
    accounts: Vec<Account>,
    csrf_token: String,
    /// A refused action on one account: (account, message), shown in its row.
    refused: Option<(Uuid, String)>,
    /// A refused new account: the message, and the name and role typed.
    create_error: Option<String>,
    form: NewAccountForm,
    /// A token just created: (whose, the token), shown this once.
    new_token: Option<(String, String)>,
}

/// What the page shows beyond the list.
#[derive(Default)]
struct Shown {
    refused: Option<(Uuid, String)>,
    create_error: Option<String>,
    form: NewAccountForm,
    new_token: Option<(String, String)>,
}

async fn show(s: &AppState, session: &Session, me: Uuid, shown: Shown) -> PageResult {
    let mut response = render(&UsersPage {
        me,
        accounts: users::accounts(&s.pool).await?,
        csrf_token: csrf::token(session).await?,
        refused: shown.refused,
        create_error: shown.create_error,
        form: NewAccountForm { password: String::new(), ..shown.form },
        new_token: shown.new_token,
    })?;
    // A page with a token on it must not be kept by the browser or a proxy.
    response.headers_mut().insert(header::CACHE_CONTROL, header::HeaderValue::from_static("no-store"));
    Ok(response)
}

/// Every admin and expert account with its actions.
async fn users_page(OnPage(Admin(admin)): OnPage<Admin>, State(s): State<AppState>, session: Session) -> PageResult {
    show(&s, &session, admin.id, Shown::default()).await
}

fn back() -> Response {
    Redirect::to("/admin/users").into_response()
}

/// Shows a refusal beside the form it came from; other errors as pages.
async fn refused_or(s: &AppState, session: &Session, me: Uuid, id: Uuid, e: Error) -> PageResult {
    match e {
        Error::Rejected { message, .. } | Error::Forbidden(message) => {
            show(s, session, me, Shown { refused: Some((id, message)), ..Shown::default() }).await
        }
        e => Err(e.into()),
    }
}

async fn create_account(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Form(form): Form<NewAccountForm>,
) -> PageResult {
    let role = match form.role.as_str() {
        "admin" => Some(Role::Admin),
        "expert" => Some(Role::Expert),
        _ => None,
    };
    let result = match role {
        Some(role) => users::create(&s.pool, role, &form.name, &form.password).await,
        None => {
            let message = "choose a role: expert or admin".to_owned();
            return show(&s, &session, admin.id, Shown { create_error: Some(message), form, ..Shown::default() }).await;
        }
    };
    match result {
        Ok(user) => {
            flash::set(&session, format!("Account {} created; give them the password you chose.", user.display_name()))
                .await;
            Ok(back())
        }
        Err(Error::Rejected { message, .. }) => {
            show(&s, &session, admin.id, Shown { create_error: Some(message), form, ..Shown::default() }).await
        }
        Err(e) => Err(e.into()),
    }
}

async fn set_disabled(s: AppState, session: Session, admin: Uuid, id: Uuid, disabled: bool) -> PageResult {
    match users::set_disabled(&s.pool, admin, id, disabled).await {
        Ok(account) => {
            let ended = if disabled {
                s.users.forget(id);
                session_store::end_sessions_of(&s.pool, &s.sessions, &[id]).await.map_err(Error::from)?
            } else {
                0
            };
            let what = if disabled {
                format!(
                    "{} disabled: they cannot log in, {ended} session(s) ended, their API tokens stop working.",
                    account.name
                )
            } else {
                format!("{} enabled: they can log in again; tokens not revoked work again.", account.name)
            };
            flash::set(&session, what).await;
            Ok(back())
        }
        Err(e) => refused_or(&s, &session, admin, id, e).await,
    }
}

async fn disable(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    set_disabled(s, session, admin.id, id, true).await
}

async fn enable(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    set_disabled(s, session, admin.id, id, false).await
}

#[derive(serde::Deserialize)]
struct PasswordForm {
    #[serde(default)]
    password: String,
}

/// Sets a new password and ends the account's sessions (whoever held the
/// old one is signed out).
async fn reset_password(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<PasswordForm>,
) -> PageResult {
    match users::reset_password(&s.pool, admin.id, id, &form.password).await {
        Ok(set) => {
            s.users.forget(id);
            let ended = session_store::end_sessions_of(&s.pool, &s.sessions, &[id]).await.map_err(Error::from)?;
            let message = format!(
                "New password set for {}; {ended} session(s) of theirs ended and {} API token(s) revoked.",
                set.name, set.tokens_revoked
            );
            flash::set(&session, message).await;
            Ok(back())
        }
        Err(e) => refused_or(&s, &session, admin.id, id, e).await,
    }
}

#[derive(serde::Deserialize)]
struct TokenForm {
    /// Days until it stops working; empty for the longest allowed.
    #[serde(default)]
    expires_in_days: String,
}

/// Creates an API token acting as the account and shows it once.
async fn create_token(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<TokenForm>,
) -> PageResult {
    let days = match form.expires_in_days.trim() {
        "" => None,
        d => match d.parse::<u32>().ok().filter(|d| (1..=tokens::max_days()).contains(d)) {
            Some(d) => Some(d),
            None => {
                let message = format!(
                    "days until it expires: a whole number from 1 to {0}, or empty for the longest ({0})",
                    tokens::max_days()
                );
                return show(&s, &session, admin.id, Shown { refused: Some((id, message)), ..Shown::default() }).await;
            }
        },
    };
    let Some(user) = users::get(&s.pool, id).await? else {
        let message = "a disabled account gets no token; enable it first".to_owned();
        return show(&s, &session, admin.id, Shown { refused: Some((id, message)), ..Shown::default() }).await;
    };
    match tokens::create_for(&s.pool, &admin, &user, days).await {
        Ok((_, token)) => {
            let shown = Shown { new_token: Some((user.display_name(), token)), ..Shown::default() };
            show(&s, &session, admin.id, shown).await
        }
        Err(e) => refused_or(&s, &session, admin.id, id, e).await,
    }
}

#[derive(Template)]
#[template(path = "admin_tokens.html")]
struct TokensPage {
    tokens: Vec<tokens::TokenInfo>,
    csrf_token: String,
}

/// Every API token, with a button to revoke it.
async fn tokens_page(_: OnPage<Admin>, State(s): State<AppState>, session: Session) -> PageResult {
    render(&TokensPage { tokens: tokens::list(&s.pool).await?, csrf_token: csrf::token(&session).await? })
}

async fn revoke_token(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    let t = tokens::revoke(&s.pool, id).await?;
    Ok(flash::redirect(&session, format!("Token of {} revoked: it stops working at once.", t.user), "/admin/tokens")
        .await)
}
