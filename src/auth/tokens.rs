//! API tokens for scripts, and random codes (invitations, completion codes).

use super::users::User;
use crate::core::Result;
use rand::distr::{Alphanumeric, SampleString};
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

/// Prefix that makes Atelier tokens recognisable in logs and secret scanners.
const PREFIX: &str = "atl_";

/// A random alphanumeric string of `len` characters from the OS RNG.
pub fn random_code(len: usize) -> String {
    Alphanumeric.sample_string(&mut rand::rng(), len)
}

fn digest(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// Creates a token for a user; the token is returned once and only its hash is stored.
pub async fn create(pool: &PgPool, user_id: Uuid) -> Result<String> {
    let token = format!("{PREFIX}{}", random_code(40));
    sqlx::query("INSERT INTO api_tokens (id, user_id, token_hash) VALUES ($1, $2, $3)")
        .bind(Uuid::new_v4())
        .bind(user_id)
        .bind(digest(&token))
        .execute(pool)
        .await?;
    Ok(token)
}

/// The user a bearer token belongs to, if it is valid.
pub async fn authenticate(pool: &PgPool, token: &str) -> Result<Option<User>> {
    let user = sqlx::query_as::<_, User>(
        "UPDATE api_tokens t SET last_used_at = now() FROM users u
         WHERE t.token_hash = $1 AND t.revoked_at IS NULL AND u.id = t.user_id
         RETURNING u.id, u.role, u.name, u.external_id",
    )
    .bind(digest(token))
    .fetch_optional(pool)
    .await?;
    Ok(user)
}
