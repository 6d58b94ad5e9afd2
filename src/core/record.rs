//! The hot path of annotation: storing one answer in two round trips. One
//! query reads what validation needs (the annotator's own assignment, that
//! the item is in its batch, the item's payload, the campaign's kind and
//! lease); one statement locks the assignment, inserts the answer if it is
//! still active, renews the lease only when it is near its end, and counts
//! progress. Retries and changed answers (rare) take the full path in
//! [`super::responses::submit`], with the same rules.

use super::assignments::Assignment;
use super::progress::AssignmentProgress;
use super::responses::{self, Outcome, Response, Submission};
use super::states::AssignmentState;
use super::{Error, Registry, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

#[derive(sqlx::FromRow)]
struct Context {
    #[sqlx(flatten)]
    assignment: Assignment,
    kind: String,
    lease_minutes: i32,
    payload: Option<Value>,
}

#[derive(sqlx::FromRow)]
struct Written {
    state: AssignmentState,
    inserted: Option<sqlx::types::Json<Response>>,
    answered_before: i64,
    total: i64,
}

/// Stores an answer in the annotator's own assignment; the stored response,
/// what happened, and the progress after it.
pub async fn record(
    pool: &PgPool,
    kinds: &Registry,
    assignment_id: Uuid,
    annotator_id: Uuid,
    sub: &Submission,
) -> Result<(Response, Outcome, AssignmentProgress)> {
    let ctx = sqlx::query_as::<_, Context>(
        "SELECT a.*, c.kind, c.lease_minutes,
                (SELECT i.payload FROM batch_items bi JOIN items i ON i.id = bi.item_id
                 WHERE bi.batch_id = a.batch_id AND bi.item_id = $3) AS payload
         FROM assignments a JOIN campaigns c ON c.id = a.campaign_id
         WHERE a.id = $1 AND a.annotator_id = $2",
    )
    .bind(assignment_id)
    .bind(annotator_id)
    .bind(sub.item_id)
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("assignment"))?;
    if ctx.assignment.state == AssignmentState::Expired {
        return Err(Error::conflict("lease_expired", "the time for this batch ran out; ask for a new one"));
    }
    let payload =
        ctx.payload.ok_or_else(|| Error::invalid("item_not_in_batch", "that item is not part of this assignment"))?;
    if sub.time_on_task_ms.is_some_and(|t| t < 0) {
        return Err(Error::invalid("invalid_time", "time_on_task_ms must not be negative"));
    }
    let kind =
        kinds.find(&ctx.kind).ok_or_else(|| Error::Internal(format!("campaign of unknown kind `{}`", ctx.kind)))?;
    let answer = kind.validate_answer(&payload, &sub.answer)?;
    let written = sqlx::query_as::<_, Written>(
        "WITH a AS (SELECT id, state, campaign_id, annotator_id, batch_id, leased_until
                    FROM assignments WHERE id = $1 FOR UPDATE),
              ins AS (INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer, time_on_task_ms)
                      SELECT $2, a.id, a.campaign_id, $3, a.annotator_id, $4, $5 FROM a WHERE a.state = 'active'
                      ON CONFLICT (assignment_id, item_id) DO NOTHING
                      RETURNING id, assignment_id, item_id, annotator_id, answer, time_on_task_ms, created_at, updated_at,
                                excluded_reason),
              lease AS (UPDATE assignments s SET leased_until = now() + make_interval(mins => $6::int)
                        FROM a WHERE s.id = a.id AND a.state = 'active'
                          AND a.leased_until < now() + make_interval(mins => $6::int) / 2
                        RETURNING 1)
         SELECT a.state, (SELECT to_jsonb(ins) FROM ins) AS inserted,
                (SELECT count(*) FROM responses WHERE assignment_id = a.id) AS answered_before,
                (SELECT count(*) FROM batch_items WHERE batch_id = a.batch_id) AS total
         FROM a",
    )
    .bind(assignment_id)
    .bind(Uuid::new_v4())
    .bind(sub.item_id)
    .bind(&answer)
    .bind(sub.time_on_task_ms)
    .bind(ctx.lease_minutes)
    .fetch_one(pool)
    .await?;
    match (written.inserted, written.state) {
        (Some(response), _) => {
            metrics::counter!("atelier_responses_stored_total").increment(1);
            let progress = AssignmentProgress { answered: written.answered_before + 1, total: written.total };
            Ok((response.0, Outcome::Created, progress))
        }
        (None, AssignmentState::Expired) => {
            Err(Error::conflict("lease_expired", "the time for this batch ran out; ask for a new one"))
        }
        // Answered before (a retry or a change), or submitted meanwhile: the
        // full path decides, with the same rules.
        (None, _) => {
            let (response, outcome) = responses::submit(pool, kinds, &ctx.assignment, sub).await?;
            let progress = super::progress::of_assignment(pool, assignment_id, ctx.assignment.batch_id).await?;
            Ok((response, outcome, progress))
        }
    }
}
