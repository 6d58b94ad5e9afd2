//! API tokens for scripts.

use super::users::User;
use crate::core::Code;
use crate::core::Result;
use crate::random::random_code;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

/// Prefix that makes Atelier tokens recognisable in logs and secret scanners.
const PREFIX: &str = "atl_";

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Creates a token for a user; the token is returned once and only its hash is stored.
pub async fn create(pool: &PgPool, user_id: Uuid) -> Result<String> {
    Ok(create_expiring(pool, user_id, None).await?.1)
}

/// Creates a token that stops working after `days` days (never, for `None`);
/// returns its id (for listing and revoking) and the token, shown once.
pub async fn create_expiring(pool: &PgPool, user_id: Uuid, days: Option<u32>) -> Result<(Uuid, String)> {
    if days.is_some_and(|d| d == 0 || d > 3650) {
        return Err(crate::core::Error::invalid(Code::InvalidExpiry, "a token expires after 1 to 3650 days"));
    }
    let id = Uuid::new_v4();
    let token = format!("{PREFIX}{}", random_code(40));
    sqlx::query(
        "INSERT INTO api_tokens (id, user_id, token_hash, expires_at)
         VALUES ($1, $2, $3, now() + make_interval(days => $4))",
    )
    .bind(id)
    .bind(user_id)
    .bind(digest(&token))
    .bind(days.map(|d| d as i32))
    .execute(pool)
    .await?;
    Ok((id, token))
}

/// A token as listed (never the token itself).
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct TokenInfo {
    /// Token id.
    pub id: Uuid,
    /// The account it acts as.
    pub user: String,
    /// Created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// Last used.
    pub last_used_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When it stops working by itself.
    pub expires_at: Option<chrono::DateTime<chrono::Utc>>,
    /// When it was revoked.
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Creates a token acting as `user` at `caller`'s request: their own, or an
/// expert's; never another admin's (a token acts as its user: minting one
/// for another admin would be taking their identity).
pub async fn create_for(pool: &PgPool, caller: &User, user: &User, days: Option<u32>) -> Result<(Uuid, String)> {
    if user.role == crate::auth::Role::Admin && user.id != caller.id {
        return Err(crate::core::Error::Forbidden("an admin cannot create a token for another admin".into()));
    }
    create_expiring(pool, user.id, days).await
}

/// Every token, newest first.
pub async fn list(pool: &PgPool) -> Result<Vec<TokenInfo>> {
    Ok(sqlx::query_as::<_, TokenInfo>(
        "SELECT t.id, coalesce(u.name, u.id::text) AS user, t.created_at, t.last_used_at, t.expires_at, t.revoked_at
         FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.created_at DESC",
    )
    .fetch_all(pool)
    .await?)
}

/// Revokes a token; it stops working at once. Revoking twice changes nothing.
pub async fn revoke(pool: &PgPool, id: Uuid) -> Result<TokenInfo> {
    sqlx::query("UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1")
        .bind(id)
        .execute(pool)
        .await?;
    list(pool).await?.into_iter().find(|t| t.id == id).ok_or(crate::core::Error::NotFound("token"))
}

/// The user a bearer token belongs to, if it is valid.
pub async fn authenticate(pool: &PgPool, token: &str) -> Result<Option<User>> {
    let user = sqlx::query_as::<_, User>(
        "UPDATE api_tokens t SET last_used_at = now() FROM users u
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
           AND u.id = t.user_id AND u.disabled_at IS NULL
         RETURNING u.id, u.role, u.name, u.external_id",
    )
    .bind(digest(token))
    .fetch_optional(pool)
    .await?;
    Ok(user)
}
