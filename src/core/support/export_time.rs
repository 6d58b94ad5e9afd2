//! How every export writes a moment.

use chrono::{DateTime, SecondsFormat, Utc};

/// A moment as every export writes it (RFC 3339, microseconds, `Z`).
pub fn time(t: DateTime<Utc>) -> String {
    t.to_rfc3339_opts(SecondsFormat::Micros, true)
}
