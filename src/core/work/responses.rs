//! Responses: one annotator's answer to one item.
//!
//! A retry with the same answer is idempotent; a different answer to an
//! answered item needs an explicit change, which is audited. Nothing is
//! ever deleted: curation marks responses excluded with a reason.

use crate::core::campaign::campaigns;
use crate::core::campaign::states::AssignmentState;
use crate::core::work::assignments::Assignment;
use crate::db::Time;
use crate::error::Code;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// A response as stored.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Response {
    /// Response id.
    pub id: Uuid,
    /// The assignment it was given in.
    pub assignment_id: Uuid,
    /// The item.
    pub item_id: Uuid,
    /// The annotator.
    pub annotator_id: Uuid,
    /// The answer as validated by the kind.
    pub answer: Value,
    /// Milliseconds the annotator spent on the item, as reported by the client.
    pub time_on_task_ms: Option<i32>,
    /// First submission.
    pub created_at: DateTime<Utc>,
    /// Last change.
    pub updated_at: DateTime<Utc>,
    /// Why curation excluded it, if it did.
    pub excluded_reason: Option<String>,
}

/// An answer submitted by an annotator.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
pub struct Submission {
    /// The item answered.
    pub item_id: Uuid,
    /// The answer, in the campaign kind's format: each kind documents its
    /// own as a schema named `…Answer` in the OpenAPI document, with an example.
    pub answer: Value,
    /// Time on task in milliseconds.
    #[serde(default)]
    #[schema(minimum = 0)]
    pub time_on_task_ms: Option<i32>,
    /// Set to replace an earlier, different answer.
    #[serde(default)]
    pub change: bool,
}

/// What happened to a submission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
#[serde(rename_all = "snake_case")]
pub enum Outcome {
    /// Stored for the first time.
    Created,
    /// The same answer was already stored (a retry).
    Unchanged,
    /// An earlier answer was replaced (audited).
    Changed,
}

/// The answer as its kind stores it, or why it is refused: the one check
/// every answer passes, on the answer path ([`super::record::Recorder`])
/// and on the change and retry path ([`submit`]) alike. `payload` is the
/// item's, when read (kinds whose answers do not read their item never
/// get it, read or not).
pub fn checked_answer(
    kind: &dyn crate::core::kind::contract::TaskKind,
    payload: Option<&Value>,
    sub: &Submission,
) -> Result<Value> {
    if sub.time_on_task_ms.is_some_and(|t| t < 0) {
        return Err(Error::invalid(Code::InvalidTime, "time_on_task_ms must not be negative"));
    }
    let payload = payload.filter(|_| kind.about().answer_reads_item);
    Ok(kind.validate_answer(payload, &sub.answer)?)
}

/// The refusal of an answer to an item outside the assignment's batch.
pub fn not_in_batch() -> Error {
    Error::invalid(Code::ItemNotInBatch, "that item is not part of this assignment")
}

/// Stores an answer within the annotator's assignment.
pub async fn submit(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    assignment: &Assignment,
    sub: &Submission,
) -> Result<(Response, Outcome)> {
    if assignment.state == AssignmentState::Expired {
        return Err(Error::lease_expired());
    }
    if !assignment.item_order().contains(&sub.item_id) {
        return Err(not_in_batch());
    }
    let campaign = campaigns::get(pool, assignment.campaign_id).await?;
    let kind = kinds.of(&campaign)?;
    let payload: Value = sqlx::query_scalar!("SELECT payload FROM items WHERE id = $1", sub.item_id)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("item"))?;
    let answer = checked_answer(kind, Some(&payload), sub)?;
    let lease = campaign.settings.lease_minutes;

    let mut tx = pool.begin().await?;
    // Lock the assignment so a concurrent expiry or completion is seen.
    let state = sqlx::query_scalar!(
        r#"SELECT state AS "state: AssignmentState" FROM assignments WHERE id = $1 FOR UPDATE"#,
        assignment.id,
    )
    .fetch_one(&mut *tx)
    .await?;
    if state == AssignmentState::Expired {
        return Err(Error::lease_expired());
    }
    let inserted = sqlx::query_as!(
        Response,
        r#"INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer, time_on_task_ms)
           VALUES ($1, $2, $3, $4, $5, $6, $7)
           ON CONFLICT (assignment_id, item_id) DO NOTHING
           RETURNING id, assignment_id, item_id, annotator_id, answer, time_on_task_ms,
                  created_at AS "created_at: Time", updated_at AS "updated_at: Time", excluded_reason"#,
        Uuid::new_v4(),
        assignment.id,
        assignment.campaign_id,
        sub.item_id,
        assignment.annotator_id,
        answer,
        sub.time_on_task_ms,
    )
    .fetch_optional(&mut *tx)
    .await?;
    let result = match inserted {
        Some(r) => {
            if state == AssignmentState::Completed {
                return Err(Error::conflict(Code::AlreadySubmitted, "this batch was already submitted"));
            }
            metrics::counter!("atelier_responses_stored_total").increment(1);
            (r, Outcome::Created)
        }
        None => {
            let existing = sqlx::query_as!(
                Response,
                r#"SELECT id, assignment_id, item_id, annotator_id, answer, time_on_task_ms,
                  created_at AS "created_at: Time", updated_at AS "updated_at: Time", excluded_reason
                   FROM responses WHERE item_id = $1 AND assignment_id = $2 FOR UPDATE"#,
                sub.item_id,
                assignment.id,
            )
            .fetch_one(&mut *tx)
            .await?;
            if existing.answer == answer {
                (existing, Outcome::Unchanged)
            } else if !sub.change {
                return Err(Error::conflict(
                    Code::AlreadyAnswered,
                    "this item already has a different answer; resubmit with \"change\": true to replace it",
                ));
            } else if state == AssignmentState::Completed {
                return Err(Error::conflict(
                    Code::AlreadySubmitted,
                    "this batch was already submitted; answers are final",
                ));
            } else {
                sqlx::query!(
                    "INSERT INTO response_changes (id, response_id, old_answer, new_answer, changed_by) VALUES ($1, $2, $3, $4, $5)",
                    Uuid::new_v4(),
                    existing.id,
                    &existing.answer,
                    &answer,
                    assignment.annotator_id,
                )
                .execute(&mut *tx)
                .await?;
                let changed = sqlx::query_as!(
                    Response,
                    r#"UPDATE responses SET answer = $2, updated_at = now(),
                          time_on_task_ms = LEAST(COALESCE(time_on_task_ms, 0)::bigint + COALESCE($3::int, 0), 2147483647)::int
                       WHERE id = $1
                       RETURNING id, assignment_id, item_id, annotator_id, answer, time_on_task_ms,
                  created_at AS "created_at: Time", updated_at AS "updated_at: Time", excluded_reason"#,
                    existing.id,
                    answer,
                    sub.time_on_task_ms,
                )
                .fetch_one(&mut *tx)
                .await?;
                (changed, Outcome::Changed)
            }
        }
    };
    if state == AssignmentState::Active {
        // Never shortens a lease: "every annotator" work is leased forever.
        sqlx::query!(
            "UPDATE assignments SET leased_until = greatest(leased_until, now() + make_interval(mins => $2::int)) WHERE id = $1",
            assignment.id,
            lease,
        )
            .execute(&mut *tx)
            .await?;
    }
    tx.commit().await?;
    Ok(result)
}

/// All responses of a campaign (admin export).
pub async fn in_campaign(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<Response>> {
    Ok(sqlx::query_as!(
        Response,
        r#"SELECT id, assignment_id, item_id, annotator_id, answer, time_on_task_ms,
                  created_at AS "created_at: Time", updated_at AS "updated_at: Time", excluded_reason
           FROM responses WHERE campaign_id = $1 ORDER BY created_at, id"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?)
}

/// An admin's reason for an exclusion, trimmed: not empty, at most
/// [`MAX_REASON_CHARS`] characters, and not curation's own prefix (answers
/// marked `curation:` are curation's to set and clear).
pub fn admin_reason(reason: &str) -> Result<&str> {
    let reason = reason.trim();
    if reason.is_empty() {
        return Err(Error::invalid(Code::MissingReason, "an exclusion needs a reason"));
    }
    if reason.chars().count() > MAX_REASON_CHARS {
        return Err(Error::invalid(
            Code::Invalid,
            format!("the reason is {} characters long; at most {MAX_REASON_CHARS}", reason.chars().count()),
        ));
    }
    if reason.starts_with("curation:") {
        return Err(Error::invalid(Code::Invalid, "reasons starting with `curation:` are curation's own"));
    }
    if reason.starts_with(crate::core::campaign::marks::REASON_PREFIX) {
        return Err(Error::invalid(
            Code::Invalid,
            "reasons starting with `platform:` are the platform reconciliation's own",
        ));
    }
    Ok(reason)
}

/// The longest reason an admin may give for an exclusion.
pub const MAX_REASON_CHARS: usize = 500;

/// Which of an item's answers an admin's exclusion is about.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum AnswersOfItem {
    /// This one.
    One(Uuid),
    /// Every answer the item has now (it leaves the ground truth's input).
    All,
}

/// Excludes the item's answers with `reason`, or counts them again when
/// `reason` is `None` (curation may exclude them again on its next run);
/// how many answers changed. Never deletes; an item or answer of another
/// campaign is not found.
#[tracing::instrument(level = "debug", skip(pool))]
pub async fn set_item_exclusion(
    pool: &PgPool,
    campaign_id: Uuid,
    item_id: Uuid,
    which: AnswersOfItem,
    reason: Option<&str>,
) -> Result<u64> {
    let reason = reason.map(admin_reason).transpose()?;
    let one = match which {
        AnswersOfItem::One(id) => Some(id),
        AnswersOfItem::All => None,
    };
    crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    crate::core::item::items::ensure_in_campaign(pool, campaign_id, item_id).await?;
    if let Some(id) = one {
        let answer_of_item: bool = sqlx::query_scalar!(
            r#"SELECT EXISTS (SELECT 1 FROM responses WHERE id = $1 AND item_id = $2) AS "exists!""#,
            id,
            item_id
        )
        .fetch_one(pool)
        .await?;
        if !answer_of_item {
            return Err(Error::NotFound("answer"));
        }
    }
    let changed = sqlx::query!(
        "UPDATE responses SET excluded_reason = $4, excluded_at = CASE WHEN $4::text IS NULL THEN NULL ELSE now() END
          WHERE campaign_id = $1 AND item_id = $2 AND ($3::uuid IS NULL OR id = $3)
            AND excluded_reason IS DISTINCT FROM $4",
        campaign_id,
        item_id,
        one,
        reason,
    )
    .execute(pool)
    .await?;
    Ok(changed.rows_affected())
}

/// What a bulk action does to the answers of a set of items.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Bulk {
    /// Excludes every counted answer, with the reason.
    Exclude,
    /// Counts again every answer excluded for exactly the reason (a bulk
    /// exclusion undone; curation's and other rules' marks stay).
    Include,
}

/// Applies `action` with `reason` to the answers of these items of the
/// campaign, in one statement (all or nothing); how many answers changed.
pub async fn set_items_exclusion(
    pool: &PgPool,
    campaign_id: Uuid,
    items: &[Uuid],
    action: Bulk,
    reason: &str,
) -> Result<u64> {
    let reason = admin_reason(reason)?;
    crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    // Excluding marks the counted answers; including clears the marks of
    // exactly this reason: the mark set is $4's and the one cleared its
    // opposite.
    let exclude = action == Bulk::Exclude;
    let changed = sqlx::query!(
        "UPDATE responses
            SET excluded_reason = CASE WHEN $4 THEN $3 END, excluded_at = CASE WHEN $4 THEN now() END
          WHERE campaign_id = $1 AND item_id = ANY($2)
            AND excluded_reason IS NOT DISTINCT FROM CASE WHEN $4 THEN NULL ELSE $3 END",
        campaign_id,
        items,
        reason,
        exclude,
    )
    .execute(pool)
    .await?;
    Ok(changed.rows_affected())
}

/// Marks a response excluded with a reason (curation). Never deletes.
pub async fn exclude(pool: &PgPool, response_id: Uuid, reason: &str) -> Result<()> {
    let reason = admin_reason(reason)?;
    let done = sqlx::query!(
        "UPDATE responses SET excluded_reason = $2, excluded_at = now()
         WHERE id = $1 AND campaign_id IN (SELECT id FROM campaigns WHERE archived_at IS NULL)",
        response_id,
        reason,
    )
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("response"));
    }
    Ok(())
}

/// What [`set_curation_exclusions`] did.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct CurationMarks {
    /// Responses the curation excludes now.
    pub excluded: u64,
    /// Responses whose mark was added, removed or changed by this call (0
    /// when the curation decided as before: nothing is written then, so the
    /// cached ground truth stays valid).
    pub changed: u64,
}

/// Makes the campaign's curation exclusions exactly these: each (batch,
/// annotator) given has its responses in that batch marked
/// `curation:<rule>`, and earlier `curation:` marks not given any more are
/// cleared. Only the differences are written. Other exclusions (expired
/// leases, manual ones) are left alone.
pub async fn set_curation_exclusions(
    pool: &PgPool,
    campaign_id: Uuid,
    exclusions: &[(Uuid, Uuid, String)],
) -> Result<CurationMarks> {
    crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    let batches: Vec<Uuid> = exclusions.iter().map(|e| e.0).collect();
    let annotators: Vec<Uuid> = exclusions.iter().map(|e| e.1).collect();
    let reasons: Vec<String> = exclusions.iter().map(|e| format!("curation:{}", e.2)).collect();
    let mut tx = pool.begin().await?;
    // The marks wanted and the marks there, compared here: as one statement
    // the comparison's plan depended on estimates PostgreSQL cannot make for
    // an array's rows, and one plan took minutes at VTON-QBench size.
    let wanted: HashMap<Uuid, String> = sqlx::query!(
        r#"SELECT r.id, x.reason AS "reason!"
           FROM unnest($2::uuid[], $3::uuid[], $4::text[]) AS x(batch_id, annotator_id, reason)
           JOIN assignments a ON a.campaign_id = $1 AND a.batch_id = x.batch_id
           JOIN responses r ON r.assignment_id = a.id AND r.annotator_id = x.annotator_id
           WHERE r.excluded_reason IS NULL OR r.excluded_reason LIKE 'curation:%'"#,
        campaign_id,
        &batches,
        &annotators,
        &reasons,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.id, r.reason))
    .collect();
    // Locked: a concurrent run waits and then compares with this one's marks.
    let current: HashMap<Uuid, String> = sqlx::query!(
        r#"SELECT id, excluded_reason AS "excluded_reason!" FROM responses
           WHERE campaign_id = $1 AND excluded_reason LIKE 'curation:%' FOR UPDATE"#,
        campaign_id,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.id, r.excluded_reason))
    .collect();
    let cleared: Vec<Uuid> = current.keys().filter(|id| !wanted.contains_key(id)).copied().collect();
    let (marked, marked_reasons): (Vec<Uuid>, Vec<&str>) = wanted
        .iter()
        .filter(|(id, reason)| current.get(*id) != Some(*reason))
        .map(|(id, reason)| (*id, reason.as_str()))
        .unzip();
    if !cleared.is_empty() {
        sqlx::query!("UPDATE responses SET excluded_reason = NULL, excluded_at = NULL WHERE id = ANY($1)", &cleared)
            .execute(&mut *tx)
            .await?;
    }
    if !marked.is_empty() {
        sqlx::query!(
            "UPDATE responses r SET excluded_reason = x.reason, excluded_at = now()
             FROM unnest($1::uuid[], $2::text[]) AS x(id, reason) WHERE r.id = x.id",
            &marked,
            &marked_reasons as &[&str],
        )
        .execute(&mut *tx)
        .await?;
    }
    tx.commit().await?;
    Ok(CurationMarks { excluded: wanted.len() as u64, changed: (cleared.len() + marked.len()) as u64 })
}
