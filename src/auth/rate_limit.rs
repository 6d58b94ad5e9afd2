//! Login limiting, kept in the database so that every service instance
//! shares it and memory stays bounded.
//!
//! Only failures count. Per account name, the first failures are free, then
//! each further attempt waits out an exponential backoff; per client
//! address, the same with a larger allowance (colleagues behind one NAT log
//! in successfully and cost nothing). A browser that has logged in as the
//! account before (a "known device" cookie) is not held back by the name's
//! backoff, so nobody can lock an account owner out by failing on purpose
//! from many addresses; the address limit still applies to it.

use crate::error::Code;
use crate::error::{Error, Result};
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use uuid::Uuid;

/// Failures per account name before backoff.
pub const NAME_FREE: i32 = 10;
/// Failures per client address before backoff.
pub const ADDRESS_FREE: i32 = 50;
/// First backoff once the free failures are used, in seconds; it doubles
/// with each further failure.
const FIRST_BACKOFF_SECS: i32 = 30;
/// Longest backoff, in seconds.
const MAX_BACKOFF_SECS: i32 = 15 * 60;
/// Longest login name accepted (names are at most 100 characters).
pub const MAX_NAME: usize = 200;
/// Longest password accepted (argon2 of megabytes is a denial of service).
pub const MAX_PASSWORD: usize = 1024;
/// The cookie marking a browser that logged in before.
pub const DEVICE_COOKIE: &str = "atelier_device";

fn name_key(name: &str) -> String {
    format!("name:{}", name.trim().to_lowercase())
}

fn address_key(address: &str) -> String {
    format!("ip:{address}")
}

fn hash(token: &str) -> String {
    hex::encode(Sha256::digest(token.as_bytes()))
}

/// The login limiter (state lives in the database).
#[derive(Clone, Debug, Default)]
pub struct LoginLimiter;

impl LoginLimiter {
    /// Whether a login attempt may go ahead: refused when the address is in
    /// backoff, or the name is and the browser is not a known device of that
    /// account. Over-long names and passwords are refused outright.
    pub async fn allow(
        &self,
        pool: &PgPool,
        address: &str,
        name: &str,
        password: &str,
        device: Option<&str>,
    ) -> Result<bool> {
        if name.len() > MAX_NAME || password.len() > MAX_PASSWORD {
            return Err(Error::invalid(Code::TooLong, "the name or password is too long"));
        }
        let blocked: Vec<String> = sqlx::query_scalar!(
            "SELECT key FROM login_failures WHERE key = ANY($1) AND blocked_until > now()",
            &[address_key(address), name_key(name)] as &[String],
        )
        .fetch_all(pool)
        .await?;
        if blocked.is_empty() {
            return Ok(true);
        }
        // A device this account logged in from before passes both limits: a
        // flood of guesses from one address (or at one name) must not lock
        // out the person whose browser holds the device cookie.
        Ok(match device {
            Some(token) => Self::is_known_device(pool, name, token).await?,
            None => false,
        })
    }

    async fn is_known_device(pool: &PgPool, name: &str, token: &str) -> Result<bool> {
        let known = sqlx::query_scalar!(
            "SELECT 1 AS known FROM known_devices d JOIN users u ON u.id = d.user_id
             WHERE d.token_hash = $1 AND lower(u.name) = lower($2)",
            hash(token),
            name.trim(),
        )
        .fetch_optional(pool)
        .await?;
        Ok(known.is_some())
    }

    /// Records a failed attempt against the name and the address.
    pub async fn failed(&self, pool: &PgPool, address: &str, name: &str) -> Result<()> {
        for (key, free) in [(name_key(name), NAME_FREE), (address_key(address), ADDRESS_FREE)] {
            // Failures older than an hour are forgotten; past the free ones
            // each further failure doubles the wait, up to the maximum.
            sqlx::query!(
                "INSERT INTO login_failures (key, failures, last_failure) VALUES ($1, 1, now())
                 ON CONFLICT (key) DO UPDATE SET
                     failures = CASE WHEN login_failures.last_failure < now() - interval '1 hour' THEN 1
                                     ELSE login_failures.failures + 1 END,
                     last_failure = now()",
                key,
            )
            .execute(pool)
            .await?;
            sqlx::query!(
                "UPDATE login_failures SET blocked_until = now() + make_interval(secs =>
                     LEAST($3::int, $4::int * power(2, LEAST(failures - $2, 16))::int))
                 WHERE key = $1 AND failures >= $2",
                key,
                free,
                MAX_BACKOFF_SECS,
                FIRST_BACKOFF_SECS,
            )
            .execute(pool)
            .await?;
        }
        Ok(())
    }

    /// A successful login: the name's failures are forgiven, and the browser
    /// becomes a known device of the account (returns the new device token
    /// to set as a cookie, unless the browser already is one).
    pub async fn succeeded(
        &self,
        pool: &PgPool,
        user: Uuid,
        name: &str,
        device: Option<&str>,
    ) -> Result<Option<String>> {
        sqlx::query!("DELETE FROM login_failures WHERE key = $1", name_key(name)).execute(pool).await?;
        if let Some(token) = device {
            if Self::is_known_device(pool, name, token).await? {
                return Ok(None);
            }
        }
        let token = crate::random::random_code(32);
        sqlx::query!("INSERT INTO known_devices (token_hash, user_id) VALUES ($1, $2)", hash(&token), user)
            .execute(pool)
            .await?;
        Ok(Some(token))
    }

    /// Forgets failures older than a day (run periodically).
    pub async fn prune(pool: &PgPool) -> Result<u64> {
        Ok(sqlx::query!("DELETE FROM login_failures WHERE last_failure < now() - interval '1 day'")
            .execute(pool)
            .await?
            .rows_affected())
    }
}
