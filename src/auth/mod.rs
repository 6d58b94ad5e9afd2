//! Accounts and authentication: users and roles, password hashing, API
//! tokens, crowd-worker joins, and login rate limiting.

pub mod passwords;
pub mod rate_limit;
pub mod tokens;
pub mod users;

/// The three roles (stored as the `user_role` enum type).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema, sqlx::Type)]
#[serde(rename_all = "lowercase")]
#[sqlx(type_name = "user_role", rename_all = "lowercase")]
pub enum Role {
    /// Creates campaigns, watches quality, exports, scores models.
    Admin,
    /// Labels in expert campaigns; logs in with a password.
    Expert,
    /// Crowd worker; joins through an invitation link, no password.
    Worker,
}

impl std::fmt::Display for Role {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Role {
    /// The name stored in the database.
    pub fn as_str(self) -> &'static str {
        match self {
            Role::Admin => "admin",
            Role::Expert => "expert",
            Role::Worker => "worker",
        }
    }

    /// Parses a stored role name.
    pub fn parse(s: &str) -> Option<Self> {
        match s {
            "admin" => Some(Role::Admin),
            "expert" => Some(Role::Expert),
            "worker" => Some(Role::Worker),
            _ => None,
        }
    }
}
