//! The domain layer's error: what went wrong in terms a client can act on.

/// Errors of the annotation core and accounts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// Input failed validation; nothing was changed.
    #[error("{message}")]
    Invalid {
        /// Stable machine-readable code.
        code: &'static str,
        /// Human explanation.
        message: String,
    },
    /// The thing does not exist (or the caller may not know it exists).
    #[error("{0} not found")]
    NotFound(&'static str),
    /// The request conflicts with the current state.
    #[error("{message}")]
    Conflict {
        /// Stable machine-readable code.
        code: &'static str,
        /// Human explanation.
        message: String,
    },
    /// Authenticated, but not allowed.
    #[error("{0}")]
    Forbidden(String),
    /// Not authenticated.
    #[error("authentication required")]
    Unauthenticated,
    /// Too many attempts.
    #[error("too many attempts; try again in a minute")]
    RateLimited,
    /// Too much of a bounded resource is in use right now (e.g. the password
    /// hasher during a burst of logins); a retry shortly may succeed.
    #[error("the service is busy; try again shortly")]
    Busy,
    /// The database failed (constraint violations become `Invalid` or
    /// `Conflict` instead, see [`super::constraints`]).
    #[error("database error: {0}")]
    Database(sqlx::Error),
    /// Something unexpected (hashing, serialisation).
    #[error("internal error: {0}")]
    Internal(String),
}

/// Result with the core's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Shorthand for a validation error.
    pub fn invalid(code: &'static str, message: impl Into<String>) -> Self {
        Self::Invalid { code, message: message.into() }
    }

    /// Shorthand for a conflict.
    pub fn conflict(code: &'static str, message: impl Into<String>) -> Self {
        Self::Conflict { code, message: message.into() }
    }
}
