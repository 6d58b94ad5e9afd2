//! Accounts and authentication: users and roles, password hashing, API
//! tokens, crowd-worker joins, and login rate limiting.

pub mod invitations;
pub mod passwords;
pub mod rate_limit;
pub mod tokens;
pub mod users;

/// The three roles.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum Role {
    /// Creates campaigns, watches quality, exports, scores models.
    Admin,
    /// Labels in expert campaigns; logs in with a password.
    Expert,
    /// Crowd worker; joins through an invitation link, no password.
    Worker,
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
