//! Database constraint violations as the client's errors, in one place:
//! the database enforces the core's invariants, and a violation says which
//! one in words a client can act on (409 for state conflicts, 422 for bad
//! input), instead of each caller checking first with a SELECT.

use super::Error;

/// Known constraints: name, whether it is a conflict (409) rather than
/// invalid input (422), code, and message.
const KNOWN: &[(&str, bool, &str, &str)] = &[
    (
        "assignments_one_active_per_annotator",
        true,
        "assignment_in_progress",
        "you already have a batch in progress in this campaign; finish it first",
    ),
    ("assignments_batch_id_annotator_id_key", true, "batch_taken", "you already took this batch"),
    (
        "items_campaign_id_external_id_key",
        true,
        "duplicate_item",
        "an item with this external_id already exists in the campaign",
    ),
    ("users_name_key", true, "name_taken", "that name is taken"),
    ("campaigns_review_needs_experts", false, "review_needs_experts", "review is for expert campaigns only"),
    ("campaigns_lease_minutes_check", false, "invalid_settings", "lease_minutes must be from 1 to 10080"),
    (
        "responses_match_assignment",
        false,
        "invalid_response",
        "a response must belong to its assignment's campaign and annotator",
    ),
    ("responses_item_in_campaign", false, "item_not_in_campaign", "that item is not part of this campaign"),
    ("responses_time_on_task_not_negative", false, "invalid_time", "time_on_task_ms must not be negative"),
    ("assignments_batch_in_campaign", false, "invalid_assignment", "an assignment's batch must belong to its campaign"),
];

/// The client's error for a database error, if it is a constraint
/// violation or a value the database refused; `None` for anything else
/// (which stays a database failure).
pub fn client_error(e: &sqlx::Error) -> Option<Error> {
    let db = e.as_database_error()?;
    let code = db.code()?;
    if let Some(name) = db.constraint() {
        if let Some((_, conflict, code, message)) = KNOWN.iter().find(|(n, ..)| *n == name) {
            return Some(if *conflict { Error::conflict(code, *message) } else { Error::invalid(code, *message) });
        }
    }
    match code.as_ref() {
        // unique_violation: the thing exists already.
        "23505" => Some(Error::conflict("already_exists", "this already exists")),
        // foreign_key_violation, check_violation, not_null_violation.
        "23503" | "23514" | "23502" => Some(Error::invalid("constraint_violated", db.message().to_owned())),
        // Text PostgreSQL cannot store: a NUL character (22021 in text, 22P05 in JSON).
        "22021" | "22P05" => {
            Some(Error::invalid("invalid_text", "the input holds a character that cannot be stored (a NUL byte)"))
        }
        // Values it cannot parse or hold (a bad enum value, a number out of range).
        "22P02" | "22003" => Some(Error::invalid("invalid_value", db.message().to_owned())),
        _ => None,
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        client_error(&e).unwrap_or(Error::Database(e))
    }
}
