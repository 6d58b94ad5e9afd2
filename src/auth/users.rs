//! Users: admins and experts with passwords, crowd workers by external id.

use super::{passwords, Role};
use crate::db::Time;
use crate::error::Code;
use crate::error::{Error, Result};
use sqlx::PgPool;
use uuid::Uuid;

/// A user as the rest of the application sees it (never the hash).
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct User {
    /// User id.
    pub id: Uuid,
    /// Admin, expert or worker.
    pub role: Role,
    /// Login name (admins and experts).
    pub name: Option<String>,
    /// Crowd platform id (workers).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub external_id: Option<String>,
}

impl User {
    /// A name to show.
    pub fn display_name(&self) -> String {
        self.name.clone().or_else(|| self.external_id.as_ref().map(|e| format!("worker {e}"))).unwrap_or_default()
    }
}

fn valid_name(name: &str) -> Result<&str> {
    let name = name.trim();
    let ok = (1..=64).contains(&name.len()) && name.chars().all(|c| c.is_alphanumeric() || "._-@".contains(c));
    if !ok {
        return Err(Error::invalid(Code::InvalidName, "names are 1-64 letters, digits, or . _ - @"));
    }
    Ok(name)
}

/// Creates an admin or expert with a password.
pub async fn create(pool: &PgPool, role: Role, name: &str, password: &str) -> Result<User> {
    if role == Role::Worker {
        return Err(Error::invalid(Code::InvalidRole, "workers join through invitation links, not accounts"));
    }
    let name = valid_name(name)?;
    let hash = passwords::hash(password).await?;
    let user = sqlx::query_as!(
        User,
        r#"INSERT INTO users (id, role, name, password_hash) VALUES ($1, $2, $3, $4)
           ON CONFLICT (name) DO NOTHING RETURNING id, role AS "role: Role", name, external_id"#,
        Uuid::new_v4(),
        role as Role,
        name,
        hash,
    )
    .fetch_optional(pool)
    .await?;
    user.ok_or_else(|| Error::conflict(Code::NameTaken, format!("a user named `{name}` already exists")))
}

/// Checks a name and password in the caller's turn at the password hasher;
/// `None` for any mismatch (no hint which).
pub async fn login(pool: &PgPool, turn: passwords::Turn, name: &str, password: &str) -> Result<Option<User>> {
    let row = sqlx::query!(
        r#"SELECT id, role AS "role: Role", name, external_id, password_hash FROM users
           WHERE name = $1 AND role <> 'worker' AND disabled_at IS NULL"#,
        name.trim(),
    )
    .fetch_optional(pool)
    .await?;
    let stored = row.as_ref().and_then(|r| r.password_hash.clone());
    let ok = passwords::verify(turn, password, stored).await?;
    Ok(row.filter(|_| ok).map(|r| User { id: r.id, role: r.role, name: r.name, external_id: r.external_id }))
}

/// The id's skeleton under Unicode's confusable rule (UTS #39): two ids
/// with the same skeleton look alike (`demo‐worker` with U+2010 and
/// `demo-worker`, a Cyrillic `о` for a Latin `o`), so an admin is warned.
pub fn skeleton(id: &str) -> String {
    unicode_security::skeleton(id).collect()
}

/// A crowd-platform worker id as stored: NFKC-normalised (a fullwidth `Ａ`
/// is `A`), trimmed; refused when it holds a control, format (zero-width,
/// bidi overrides), separator or unassigned character: such ids look like
/// another worker's on admin pages and in payout files.
pub fn normalize_worker_id(given: &str) -> Result<String> {
    use unicode_normalization::UnicodeNormalization;
    use unicode_properties::{GeneralCategoryGroup, UnicodeGeneralCategory};
    let id: String = given.nfkc().collect::<String>().trim().to_owned();
    if id.is_empty() || id.len() > 128 {
        return Err(Error::invalid(Code::InvalidWorkerId, "worker_id must be 1 to 128 characters"));
    }
    let invisible = |c: &char| {
        *c != ' ' && matches!(c.general_category_group(), GeneralCategoryGroup::Other | GeneralCategoryGroup::Separator)
    };
    if let Some(c) = id.chars().find(invisible) {
        return Err(Error::invalid(
            Code::InvalidWorkerId,
            format!(
                "worker_id holds an invisible or control character (U+{:04X}): copy it again from the platform",
                u32::from(c)
            ),
        ));
    }
    Ok(id)
}

/// Finds or creates the worker with this crowd-platform id (normalised, see
/// [`normalize_worker_id`]).
pub async fn worker<'e>(db: impl sqlx::PgExecutor<'e>, external_id: &str) -> Result<User> {
    let external_id = normalize_worker_id(external_id)?;
    Ok(sqlx::query_as!(
        User,
        r#"INSERT INTO users (id, role, external_id) VALUES ($1, 'worker', $2)
           ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
           RETURNING id, role AS "role: Role", name, external_id"#,
        Uuid::new_v4(),
        external_id,
    )
    .fetch_one(db)
    .await?)
}

/// Loads a user by id; a disabled account is no one (its sessions end with it).
pub async fn get<'e>(db: impl sqlx::PgExecutor<'e>, id: Uuid) -> Result<Option<User>> {
    Ok(sqlx::query_as!(
        User,
        r#"SELECT id, role AS "role: Role", name, external_id FROM users WHERE id = $1 AND disabled_at IS NULL"#,
        id,
    )
    .fetch_optional(db)
    .await?)
}

/// Loads an enabled user by login name.
pub async fn by_name(pool: &PgPool, name: &str) -> Result<Option<User>> {
    Ok(sqlx::query_as!(
        User,
        r#"SELECT id, role AS "role: Role", name, external_id FROM users WHERE name = $1 AND disabled_at IS NULL"#,
        name.trim(),
    )
    .fetch_optional(pool)
    .await?)
}

/// An admin's or expert's account as the users page lists it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Account {
    /// User id.
    pub id: Uuid,
    /// Admin or expert.
    pub role: Role,
    /// Login name.
    pub name: String,
    /// When it was created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was disabled, if it is.
    pub disabled_at: Option<chrono::DateTime<chrono::Utc>>,
    /// API tokens acting as it that still work.
    pub live_tokens: i64,
}

/// Every admin and expert account, admins first, then by name.
pub async fn accounts(pool: &PgPool) -> Result<Vec<Account>> {
    // Staff accounts always have a name (a check on the table).
    Ok(sqlx::query_as!(
        Account,
        r#"SELECT u.id, u.role AS "role: Role", u.name AS "name!", u.created_at AS "created_at: Time",
                  u.disabled_at AS "disabled_at: Time",
                  (SELECT count(*) FROM api_tokens t WHERE t.user_id = u.id AND t.revoked_at IS NULL
                     AND (t.expires_at IS NULL OR t.expires_at > now())) AS "live_tokens!"
           FROM users u WHERE u.role <> 'worker' ORDER BY u.role = 'expert', u.name"#,
    )
    .fetch_all(pool)
    .await?)
}

/// Disables (or enables again) an admin's or expert's account, by an admin
/// other than its owner; the last enabled admin stays (nobody could undo it).
/// The caller ends the account's sessions.
pub async fn set_disabled(pool: &PgPool, by: Uuid, id: Uuid, disabled: bool) -> Result<Account> {
    if by == id {
        return Err(Error::Forbidden("you cannot disable or enable your own account".into()));
    }
    let mut tx = pool.begin().await?;
    // Locks the enabled admins: two admins disabling each other at once
    // must not both succeed.
    let admins: Vec<Uuid> =
        sqlx::query_scalar!("SELECT id FROM users WHERE role = 'admin' AND disabled_at IS NULL FOR UPDATE")
            .fetch_all(&mut *tx)
            .await?;
    if disabled && admins.iter().all(|a| *a == id) {
        return Err(Error::conflict(Code::LastAdmin, "the last enabled admin cannot be disabled"));
    }
    let account = sqlx::query_as!(
        Account,
        r#"UPDATE users u SET disabled_at = CASE WHEN $2 THEN coalesce(u.disabled_at, now()) END
           WHERE u.id = $1 AND u.role <> 'worker'
           RETURNING u.id, u.role AS "role: Role", u.name AS "name!", u.created_at AS "created_at: Time",
                     u.disabled_at AS "disabled_at: Time", 0::bigint AS "live_tokens!""#,
        id,
        disabled,
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(Error::NotFound("account"))?;
    tx.commit().await?;
    Ok(account)
}

/// A password set: the account's name and how many of its API tokens were
/// revoked with the old password.
#[derive(Debug, Clone)]
pub struct PasswordSet {
    /// The account's login name.
    pub name: String,
    /// Its API tokens that stopped working.
    pub tokens_revoked: u64,
}

/// Stores a new password hash and revokes every token of the account, in
/// one transaction: a token got with the old password (a stolen one) must
/// not outlive it. `None` when there is no such staff account.
async fn set_password_hash(pool: &PgPool, id: Uuid, hash: String) -> Result<Option<PasswordSet>> {
    let mut tx = pool.begin().await?;
    let name: Option<Option<String>> = sqlx::query_scalar!(
        "UPDATE users SET password_hash = $2 WHERE id = $1 AND role <> 'worker' RETURNING name",
        id,
        hash
    )
    .fetch_optional(&mut *tx)
    .await?;
    let Some(name) = name else { return Ok(None) };
    let tokens_revoked = super::tokens::revoke_all_of(&mut tx, id).await?;
    tx.commit().await?;
    Ok(Some(PasswordSet { name: name.unwrap_or_default(), tokens_revoked }))
}

/// Sets a new password on another admin's or expert's account (an admin
/// resetting it) and revokes its API tokens; the caller ends the
/// account's sessions.
pub async fn reset_password(pool: &PgPool, by: Uuid, id: Uuid, password: &str) -> Result<PasswordSet> {
    if by == id {
        return Err(Error::Forbidden(
            "reset another account's password; change your own on Your account (/account), with the current one".into(),
        ));
    }
    let hash = passwords::hash(password).await?;
    set_password_hash(pool, id, hash).await?.ok_or(Error::NotFound("account"))
}

/// Changes an admin's or expert's own password: `current` must be the one
/// stored (checked in the caller's turn at the hasher, as a login is) and
/// `new` follows the rules of every password. `Ok(None)`, and nothing
/// changed, when `current` does not match; after a change the account's
/// API tokens are revoked (how many is returned) and the caller ends its
/// other sessions.
pub async fn change_own_password(
    pool: &PgPool,
    turn: passwords::Turn,
    id: Uuid,
    current: &str,
    new: &str,
) -> Result<Option<u64>> {
    // The new password's rules first: the current one is not checked for a
    // change that would be refused anyway.
    passwords::check_rules(new)?;
    let stored: Option<Option<String>> = sqlx::query_scalar!(
        "SELECT password_hash FROM users WHERE id = $1 AND role <> 'worker' AND disabled_at IS NULL",
        id,
    )
    .fetch_optional(pool)
    .await?;
    if !passwords::verify(turn, current, stored.flatten()).await? {
        return Ok(None);
    }
    let hash = passwords::hash(new).await?;
    Ok(set_password_hash(pool, id, hash).await?.map(|set| set.tokens_revoked))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn worker_ids_are_normalised_and_invisible_characters_refused() {
        assert_eq!(normalize_worker_id(" demo-worker-1 ").expect("plain"), "demo-worker-1");
        assert_eq!(normalize_worker_id("demo-worker-\u{FF11}").expect("fullwidth digit"), "demo-worker-1");
        for sneaky in ["demo-worker-1\u{200B}", "demo-worker-1\u{202E}", "demo\u{0007}worker", "demo\u{2028}worker"] {
            let e = normalize_worker_id(sneaky).expect_err("refused");
            assert!(e.to_string().contains("invisible or control character"), "{e}");
        }
        assert!(normalize_worker_id("").is_err() && normalize_worker_id(&"x".repeat(129)).is_err());
    }
}
