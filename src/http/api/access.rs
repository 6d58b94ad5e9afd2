//! Who can get in: API tokens and invitation links, listed and revoked.

use crate::auth::tokens::{self, TokenInfo};
use crate::core::campaign::campaigns;
use crate::core::crowd::invitations::{self, InvitationInfo};
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Path};
use crate::http::AppState;
use axum::extract::State;
use uuid::Uuid;

/// Every API token (never the token itself), newest first.
#[utoipa::path(get, path = "/api/v1/admin/tokens", tag = "admin", responses((status = 200, body = Vec<TokenInfo>)))]
pub async fn list_tokens(_: Admin, State(s): State<AppState>) -> AppResult<axum::Json<Vec<TokenInfo>>> {
    Ok(axum::Json(tokens::list(&s.pool).await?))
}

/// Revoke an API token; it stops working at once.
#[utoipa::path(post, path = "/api/v1/admin/tokens/{id}/revoke", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = TokenInfo), (status = 404, body = ErrorBody)))]
pub async fn revoke_token(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<TokenInfo>> {
    Ok(axum::Json(tokens::revoke(&s.pool, id).await?))
}

/// A campaign's invitation links, revoked ones included.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/invitations", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<InvitationInfo>), (status = 404, body = ErrorBody)))]
pub async fn list_invitations(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<InvitationInfo>>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(invitations::list(&s.pool, id).await?))
}

/// How a link is revoked.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
pub struct RevokeQuery {
    /// Also end, at once, every session of the workers who joined through
    /// the link, and let none of them back in through it (a leaked link's
    /// bots); without it they may finish what they hold.
    #[serde(default)]
    pub end_sessions: bool,
}

/// Revoke an invitation link: nobody new can join through it, at once, and
/// those who joined through it start no new questionnaire; one they hold they
/// may finish, and they always see a code they earned. With
/// `?end_sessions=true` their sessions end at once and nobody gets back in.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/invitations/{token}/revoke", tag = "admin",
    params(("id" = Uuid, Path), ("token" = String, Path), RevokeQuery),
    responses((status = 200, body = Vec<InvitationInfo>), (status = 404, body = ErrorBody)))]
pub async fn revoke_invitation(
    _: Admin,
    State(s): State<AppState>,
    Path((id, token)): Path<(Uuid, String)>,
    crate::http::extract::Query(q): crate::http::extract::Query<RevokeQuery>,
) -> AppResult<axum::Json<Vec<InvitationInfo>>> {
    if q.end_sessions {
        let workers = invitations::revoke_and_end(&s.pool, id, &token).await?;
        crate::http::session_store::end_sessions_of(&s.pool, &s.sessions, &workers).await?;
    } else {
        invitations::revoke(&s.pool, id, &token).await?;
    }
    Ok(axum::Json(invitations::list(&s.pool, id).await?))
}

/// Workers whose sessions were ended in the campaign (through "end
/// sessions" on one of its links): kept out through every link.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/ended-workers", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<invitations::EndedWorker>), (status = 404, body = ErrorBody)))]
pub async fn list_ended_workers(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<invitations::EndedWorker>>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(invitations::ended_workers(&s.pool, id).await?))
}

/// Let a worker whose sessions were ended back in (through a link of the
/// campaign that is still open).
#[utoipa::path(delete, path = "/api/v1/admin/campaigns/{id}/ended-workers/{worker_id}", tag = "admin",
    params(("id" = Uuid, Path), ("worker_id" = String, Path)),
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn readmit_worker(
    _: Admin,
    State(s): State<AppState>,
    Path((id, worker_id)): Path<(Uuid, String)>,
) -> AppResult<axum::http::StatusCode> {
    campaigns::ensure_writable(&s.pool, id).await?;
    invitations::readmit(&s.pool, id, &worker_id).await?;
    Ok(axum::http::StatusCode::NO_CONTENT)
}

/// A script's login: an account name and password.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct ScriptLogin {
    /// The account name (an expert or an admin).
    pub name: String,
    /// Its password.
    pub password: String,
    /// Days the token works (1 by default; at most 365, or `ATELIER_TOKEN_MAX_DAYS`).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 365)]
    pub expires_in_days: Option<u32>,
}

/// Log in from a script: the same password check and login limits as the
/// login page, answered with a personal API token (`Authorization: Bearer`)
/// instead of a session cookie, so an expert can script their labelling
/// without the page's CSRF cookie. The token is listed and revocable as any.
#[utoipa::path(post, path = "/api/v1/login", tag = "meta", request_body = ScriptLogin, security(()),
    responses((status = 201, body = crate::http::api::admin::NewToken), (status = 401, body = ErrorBody),
              (status = 429, body = ErrorBody)))]
pub async fn script_login(
    State(s): State<AppState>,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    headers: axum::http::HeaderMap,
    crate::http::extract::Json(body): crate::http::extract::Json<ScriptLogin>,
) -> AppResult<(axum::http::StatusCode, axum::Json<crate::http::api::admin::NewToken>)> {
    use crate::auth::{passwords, users};
    use crate::error::Error;
    let address = crate::http::client_ip(peer.ip(), &headers, &s.config.trusted_proxies).to_string();
    // The turn first, as the login page: an attempt behind a flood meets the limiter as the flood left it.
    let turn = passwords::turn().await?;
    if !s.limiter.allow(&s.pool, &address, &body.name, &body.password, None).await? {
        return Err(Error::RateLimited.into());
    }
    let Some(user) = users::login(&s.pool, turn, &body.name, &body.password).await? else {
        s.limiter.failed(&s.pool, &address, &body.name).await?;
        return Err(Error::Unauthenticated.into());
    };
    s.limiter.succeeded(&s.pool, user.id, &body.name, None).await?;
    let (id, token) =
        tokens::create_expiring(&s.pool, user.id, Some(body.expires_in_days.unwrap_or(1)), tokens::Origin::Login)
            .await?;
    Ok((axum::http::StatusCode::CREATED, axum::Json(crate::http::api::admin::NewToken { id, token })))
}
