//! Database constraint violations as the client's errors, in one place:
//! the database enforces the core's invariants, and a violation says which
//! one in words a client can act on (409 for state conflicts, 422 for bad
//! input), instead of each caller checking first with a SELECT.
//!
//! Two rules are held by triggers, not foreign keys, and raise under the
//! foreign keys' old names (migration 0022): a response belongs to its
//! assignment's campaign and annotator (`responses_match_assignment`), and
//! its item to that campaign (`responses_item_in_campaign`), checked for all
//! of a statement's rows at once by the answer counter. They rest on these
//! invariants, each enforced by the database too, and each write path is
//! tried against them in `tests/it/db_answer_integrity.rs`:
//! - an assignment that holds answers is never deleted
//!   (`assignments_keep_answered`);
//! - items are deleted only from a campaign without assignments, with the
//!   campaign's row locked (`items_delete_unassigned`);
//! - the keys the rules compare never change (`assignments_keys_stay`,
//!   `items_keys_stay`, `responses_keys_stay`);
//! - an assignment gaining answers is locked by the count's UPDATE, so it
//!   cannot be deleted under an answer being stored.
//!
//! The foreign keys were measured again (`VOTE_BENCH_SQL` adding them,
//! `cargo bench --bench vote_ingest`): their key-share locks write
//! full-page images on every vote, and the rate lost was over the 10 % the
//! triggers had to beat, so the triggers stay (figures in
//! `docs/benchmarks-history.md`).

use crate::error::{Code, Error};

/// Known constraints: name, the client's code (which carries its status:
/// 409 for state conflicts, 422 for bad input), and message.
const KNOWN: &[(&str, Code, &str)] = &[
    (
        "assignments_one_active_per_annotator",
        Code::AssignmentInProgress,
        "you already have a batch in progress in this campaign; finish it first",
    ),
    ("assignments_batch_id_annotator_id_key", Code::BatchTaken, "you already took this batch"),
    (
        "items_campaign_id_external_id_key",
        Code::DuplicateItem,
        "an item with this external_id already exists in the campaign",
    ),
    ("users_name_key", Code::NameTaken, "that name is taken"),
    ("campaigns_review_needs_experts", Code::ReviewNeedsExperts, "review is for expert campaigns only"),
    ("campaigns_lease_minutes_check", Code::InvalidSettings, "lease_minutes must be from 1 to 10080"),
    (
        "responses_match_assignment",
        Code::InvalidResponse,
        "a response must belong to its assignment's campaign and annotator",
    ),
    ("responses_item_in_campaign", Code::ItemNotInCampaign, "that item is not part of this campaign"),
    ("responses_time_on_task_not_negative", Code::InvalidTime, "time_on_task_ms must not be negative"),
    ("assignments_batch_in_campaign", Code::InvalidAssignment, "an assignment's batch must belong to its campaign"),
];

/// The client's error for a database error, if it is a constraint
/// violation or a value the database refused; `None` for anything else
/// (which stays a database failure).
pub fn client_error(e: &sqlx::Error) -> Option<Error> {
    let db = e.as_database_error()?;
    let code = db.code()?;
    if let Some(name) = db.constraint() {
        if let Some((_, code, message)) = KNOWN.iter().find(|(n, ..)| *n == name) {
            return Some(Error::invalid(*code, *message));
        }
    }
    match code.as_ref() {
        // unique_violation: the thing exists already.
        "23505" => Some(Error::conflict(Code::AlreadyExists, "this already exists")),
        // foreign_key_violation, check_violation, not_null_violation.
        // PostgreSQL's own text names tables and values: clients get the rule's name only.
        "23503" | "23514" | "23502" => Some(Error::invalid(
            Code::ConstraintViolated,
            format!("the change breaks one of the data's rules ({})", db.constraint().unwrap_or("a required value")),
        )),
        // Text PostgreSQL cannot store: a NUL character (22021 in text, 22P05 in JSON).
        "22021" | "22P05" => {
            Some(Error::invalid(Code::InvalidText, "the input holds a character that cannot be stored (a NUL byte)"))
        }
        // Values it cannot parse or hold (a bad enum value, a number out of range).
        "22P02" | "22003" => {
            Some(Error::invalid(Code::InvalidValue, "a value is not of the kind expected or is out of range"))
        }
        _ => None,
    }
}

impl From<sqlx::Error> for Error {
    fn from(e: sqlx::Error) -> Self {
        client_error(&e).unwrap_or(Error::Database(e))
    }
}
