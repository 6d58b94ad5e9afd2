//! A command that ran and failed in a way the exit code tells.

/// A command that ran and found a problem it has already reported: the
/// process exits with `code`.
#[derive(Debug, thiserror::Error)]
#[error("{message}")]
pub struct Failed {
    /// Exit code.
    pub code: u8,
    /// Summary for standard error.
    pub message: String,
}
