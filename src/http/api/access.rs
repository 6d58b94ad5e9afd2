//! Who can get in: API tokens and invitation links, listed and revoked.

use crate::auth::invitations::{self, InvitationInfo};
use crate::auth::tokens::{self, TokenInfo};
use crate::core::campaigns;
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

/// Revoke an invitation link: nobody new can join through it, at once.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/invitations/{token}/revoke", tag = "admin",
    params(("id" = Uuid, Path), ("token" = String, Path)),
    responses((status = 200, body = Vec<InvitationInfo>), (status = 404, body = ErrorBody)))]
pub async fn revoke_invitation(
    _: Admin,
    State(s): State<AppState>,
    Path((id, token)): Path<(Uuid, String)>,
) -> AppResult<axum::Json<Vec<InvitationInfo>>> {
    invitations::revoke(&s.pool, id, &token).await?;
    Ok(axum::Json(invitations::list(&s.pool, id).await?))
}
