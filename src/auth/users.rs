//! Users: admins and experts with passwords, crowd workers by external id.

use super::{passwords, Role};
use crate::core::Code;
use crate::core::{Error, Result};
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
    let user = sqlx::query_as::<_, User>(
        "INSERT INTO users (id, role, name, password_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (name) DO NOTHING RETURNING id, role, name, external_id",
    )
    .bind(Uuid::new_v4())
    .bind(role)
    .bind(name)
    .bind(hash)
    .fetch_optional(pool)
    .await?;
    user.ok_or_else(|| Error::conflict(Code::NameTaken, format!("a user named `{name}` already exists")))
}

/// Checks a name and password in the caller's turn at the password hasher;
/// `None` for any mismatch (no hint which).
pub async fn login(pool: &PgPool, turn: passwords::Turn, name: &str, password: &str) -> Result<Option<User>> {
    #[derive(sqlx::FromRow)]
    struct Row {
        #[sqlx(flatten)]
        user: User,
        password_hash: Option<String>,
    }
    let row: Option<Row> = sqlx::query_as(
        "SELECT id, role, name, external_id, password_hash FROM users WHERE name = $1 AND role <> 'worker'",
    )
    .bind(name.trim())
    .fetch_optional(pool)
    .await?;
    let stored = row.as_ref().and_then(|r| r.password_hash.clone());
    let ok = passwords::verify(turn, password, stored).await?;
    Ok(row.filter(|_| ok).map(|r| r.user))
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
    Ok(sqlx::query_as::<_, User>(
        "INSERT INTO users (id, role, external_id) VALUES ($1, 'worker', $2)
         ON CONFLICT (external_id) DO UPDATE SET external_id = EXCLUDED.external_id
         RETURNING id, role, name, external_id",
    )
    .bind(Uuid::new_v4())
    .bind(&external_id)
    .fetch_one(db)
    .await?)
}

/// Loads a user by id.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Option<User>> {
    Ok(sqlx::query_as::<_, User>("SELECT id, role, name, external_id FROM users WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await?)
}

/// Loads a user by login name.
pub async fn by_name(pool: &PgPool, name: &str) -> Result<Option<User>> {
    Ok(sqlx::query_as::<_, User>("SELECT id, role, name, external_id FROM users WHERE name = $1")
        .bind(name.trim())
        .fetch_optional(pool)
        .await?)
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
