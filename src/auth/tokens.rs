//! API tokens for scripts.

use super::users::User;
use super::Role;
use crate::db::Time;
use crate::error::Code;
use crate::error::Result;
use crate::random::random_code;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

/// Prefix that makes Atelier tokens recognisable in logs and secret scanners.
const PREFIX: &str = "atl_";

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The longest a token lives unless `ATELIER_TOKEN_MAX_DAYS` says
/// otherwise: a stolen token stops working by itself within a year.
pub const DEFAULT_MAX_DAYS: u32 = 365;

/// The longest lifetime a token may be given (`ATELIER_TOKEN_MAX_DAYS`, 1
/// to 3650, read once; [`DEFAULT_MAX_DAYS`] otherwise). Tokens asked for
/// without a lifetime get this one: no new token lives for ever.
pub fn max_days() -> u32 {
    static MAX: std::sync::OnceLock<u32> = std::sync::OnceLock::new();
    *MAX.get_or_init(|| {
        std::env::var("ATELIER_TOKEN_MAX_DAYS")
            .ok()
            .and_then(|v| v.trim().parse::<u32>().ok())
            .filter(|d| (1..=3650).contains(d))
            .unwrap_or(DEFAULT_MAX_DAYS)
    })
}

/// What made a token, shown to its owner beside it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// `POST /api/v1/login` with the account's password.
    Login,
    /// An admin, on the tokens page or through the API.
    Admin,
    /// `atelier token create`.
    CommandLine,
}

impl Origin {
    fn name(self) -> &'static str {
        match self {
            Self::Login => "login (POST /api/v1/login)",
            Self::Admin => "made by an admin",
            Self::CommandLine => "atelier token create",
        }
    }
}

/// Creates a token for a user that lives [`max_days`]; the token is
/// returned once and only its hash is stored.
pub async fn create(pool: &PgPool, user_id: Uuid) -> Result<String> {
    Ok(create_expiring(pool, user_id, None, Origin::CommandLine).await?.1)
}

/// Creates a token that stops working after `days` days (at most
/// [`max_days`], which is also what `None` gives); returns its id (for
/// listing and revoking) and the token, shown once.
pub async fn create_expiring(
    pool: &PgPool,
    user_id: Uuid,
    days: Option<u32>,
    origin: Origin,
) -> Result<(Uuid, String)> {
    let max = max_days();
    if days.is_some_and(|d| d == 0 || d > max) {
        return Err(crate::error::Error::invalid(
            Code::InvalidExpiry,
            format!("a token expires after 1 to {max} days"),
        ));
    }
    let id = Uuid::new_v4();
    let token = format!("{PREFIX}{}", random_code(40));
    sqlx::query!(
        "INSERT INTO api_tokens (id, user_id, token_hash, expires_at, name)
         VALUES ($1, $2, $3, now() + make_interval(days => $4), $5)",
        id,
        user_id,
        digest(&token),
        days.unwrap_or(max) as i32,
        origin.name(),
    )
    .execute(pool)
    .await?;
    Ok((id, token))
}

/// Revokes every token of an account that still works (its password was
/// changed or reset: a token got with the old one must not outlive it);
/// how many. Run in the same transaction as the password's change.
pub async fn revoke_all_of(conn: &mut sqlx::PgConnection, user_id: Uuid) -> Result<u64> {
    Ok(sqlx::query!("UPDATE api_tokens SET revoked_at = now() WHERE user_id = $1 AND revoked_at IS NULL", user_id)
        .execute(conn)
        .await?
        .rows_affected())
}

/// A person's own tokens, live ones first, newest first (never the token).
pub async fn own(pool: &PgPool, user_id: Uuid) -> Result<Vec<TokenInfo>> {
    Ok(sqlx::query_as!(
        TokenInfo,
        r#"SELECT t.id, coalesce(u.name, u.id::text) AS "user!", t.name, t.created_at AS "created_at: Time",
                  t.last_used_at AS "last_used_at: Time", t.expires_at AS "expires_at: Time",
                  t.revoked_at AS "revoked_at: Time"
           FROM api_tokens t JOIN users u ON u.id = t.user_id WHERE t.user_id = $1
           ORDER BY t.revoked_at IS NOT NULL OR coalesce(t.expires_at < now(), false), t.created_at DESC"#,
        user_id,
    )
    .fetch_all(pool)
    .await?)
}

/// Revokes one of a person's own tokens (another's is not found).
pub async fn revoke_own(pool: &PgPool, user_id: Uuid, id: Uuid) -> Result<()> {
    let found = sqlx::query!(
        "UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1 AND user_id = $2",
        id,
        user_id
    )
    .execute(pool)
    .await?
    .rows_affected();
    if found == 0 {
        return Err(crate::error::Error::NotFound("token"));
    }
    Ok(())
}

/// A token as listed (never the token itself).
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct TokenInfo {
    /// Token id.
    pub id: Uuid,
    /// The account it acts as.
    pub user: String,
    /// What made it (none for tokens made before names were kept).
    pub name: Option<String>,
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
        return Err(crate::error::Error::Forbidden("an admin cannot create a token for another admin".into()));
    }
    create_expiring(pool, user.id, days, Origin::Admin).await
}

/// Every token, newest first.
pub async fn list(pool: &PgPool) -> Result<Vec<TokenInfo>> {
    Ok(sqlx::query_as!(
        TokenInfo,
        r#"SELECT t.id, coalesce(u.name, u.id::text) AS "user!", t.name, t.created_at AS "created_at: Time",
                  t.last_used_at AS "last_used_at: Time", t.expires_at AS "expires_at: Time",
                  t.revoked_at AS "revoked_at: Time"
           FROM api_tokens t JOIN users u ON u.id = t.user_id ORDER BY t.created_at DESC"#,
    )
    .fetch_all(pool)
    .await?)
}

/// Revokes a token; it stops working at once. Revoking twice changes nothing.
pub async fn revoke(pool: &PgPool, id: Uuid) -> Result<TokenInfo> {
    sqlx::query!("UPDATE api_tokens SET revoked_at = coalesce(revoked_at, now()) WHERE id = $1", id)
        .execute(pool)
        .await?;
    list(pool).await?.into_iter().find(|t| t.id == id).ok_or(crate::error::Error::NotFound("token"))
}

/// The user a bearer token belongs to, if it is valid.
pub async fn authenticate(pool: &PgPool, token: &str) -> Result<Option<User>> {
    let user = sqlx::query_as!(
        User,
        r#"UPDATE api_tokens t SET last_used_at = now() FROM users u
           WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND (t.expires_at IS NULL OR t.expires_at > now())
             AND u.id = t.user_id AND u.disabled_at IS NULL
           RETURNING u.id, u.role AS "role: Role", u.name, u.external_id"#,
        digest(token),
    )
    .fetch_optional(pool)
    .await?;
    Ok(user)
}
