//! The domain layer's error: what went wrong in terms a client can act on.

use crate::error::Code;

/// Errors of the annotation core and accounts.
#[derive(Debug, thiserror::Error)]
pub enum Error {
    /// The request was refused for a reason the client can act on (invalid
    /// input, a conflict with the current state); nothing was changed. The
    /// code says which, and its status.
    #[error("{message}")]
    Rejected {
        /// Stable machine-readable code.
        code: Code,
        /// Human explanation.
        message: String,
    },
    /// The thing does not exist (or the caller may not know it exists).
    #[error("{0} not found")]
    NotFound(&'static str),
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
    /// The database failed (constraint violations become `Rejected`
    /// instead, see [`crate::error::constraints`]).
    #[error("database error")]
    Database(#[source] sqlx::Error),
    /// The object store failed or holds no such object (a store that cannot
    /// be reached is a 503 with `Retry-After`).
    #[error(transparent)]
    Storage(#[from] crate::storage::StorageError),
    /// Something unexpected (hashing, serialisation, files): what was being
    /// done, and the error that stopped it, kept for the log line.
    #[error("internal error: {context}")]
    Internal {
        /// What was being done.
        context: String,
        /// What failed, when an error says it.
        #[source]
        source: Option<Box<dyn std::error::Error + Send + Sync>>,
    },
}

/// Result with the core's error.
pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    /// Invalid input: `code` says what was wrong (its status is usually 422).
    pub fn invalid(code: Code, message: impl Into<String>) -> Self {
        Self::Rejected { code, message: message.into() }
    }

    /// A conflict with the current state: `code` says which (usually 409).
    pub fn conflict(code: Code, message: impl Into<String>) -> Self {
        Self::Rejected { code, message: message.into() }
    }

    /// The assignment's lease ran out: it takes no more answers (one
    /// message for every path that finds it).
    pub fn lease_expired() -> Self {
        Self::conflict(Code::LeaseExpired, "the time for this batch ran out; ask for a new one")
    }

    /// An unexpected failure while doing `context`, keeping `source` (an
    /// error, or a message that stands for one) for the log.
    pub fn internal(context: impl Into<String>, source: impl Into<Box<dyn std::error::Error + Send + Sync>>) -> Self {
        Self::Internal { context: context.into(), source: Some(source.into()) }
    }

    /// A state that should not happen, with no error behind it.
    pub fn unexpected(context: impl Into<String>) -> Self {
        Self::Internal { context: context.into(), source: None }
    }

    /// The code a client receives for this error.
    pub fn code(&self) -> Code {
        match self {
            Self::Rejected { code, .. } => *code,
            Self::NotFound(_) => Code::NotFound,
            Self::Forbidden(_) => Code::Forbidden,
            Self::Unauthenticated => Code::Unauthenticated,
            Self::RateLimited => Code::RateLimited,
            Self::Busy => Code::Busy,
            Self::Database(e) if is_unavailable(e) => Code::Unavailable,
            Self::Database(_) | Self::Internal { .. } => Code::Internal,
            Self::Storage(e) => match e {
                crate::storage::StorageError::NotFound(_) => Code::NotFound,
                crate::storage::StorageError::Unavailable(_) => Code::Unavailable,
                crate::storage::StorageError::Invalid(_) => Code::InvalidImage,
                crate::storage::StorageError::TooLarge { .. } => Code::ImageTooLarge,
            },
        }
    }
}

/// The database cannot be reached right now (a retry may succeed): 503 with
/// `Retry-After`, never 500.
fn is_unavailable(e: &sqlx::Error) -> bool {
    matches!(e, sqlx::Error::PoolTimedOut | sqlx::Error::PoolClosed | sqlx::Error::Io(_) | sqlx::Error::Tls(_))
        || matches!(e, sqlx::Error::Database(d) if d.code().is_some_and(|c| c.starts_with("57P") || c.starts_with("08")))
}
