//! An annotator's own assignment with its campaign and everything its view
//! shows, read in one statement: the API's view of an assignment. Reading
//! them apart took six statements in three round trips (the assignment, then
//! its campaign, then payloads, answers, progress and the answers under
//! review). The task page reads one task instead (see [`crate::core::work::own_task`]).

use crate::core::campaign::campaigns::Campaign;
use crate::core::campaign::states::AssignmentState;
use crate::core::truth::progress::AssignmentProgress;
use crate::core::work::annotator::ViewRows;
use crate::core::work::assignments::Assignment;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

/// One row: the campaign's columns as [`Campaign`] reads them, the
/// assignment's under `a_` names, and the view's parts aggregated as JSON.
#[derive(sqlx::FromRow)]
struct Row {
    #[sqlx(flatten)]
    campaign: Campaign,
    a_id: Uuid,
    a_batch_id: Uuid,
    a_annotator_id: Uuid,
    a_state: AssignmentState,
    a_presentation: Value,
    a_leased_until: DateTime<Utc>,
    a_created_at: DateTime<Utc>,
    a_completed_at: Option<DateTime<Utc>>,
    answered: i64,
    total: i64,
    /// Every item's.
    payloads: Json<Vec<(Uuid, Value)>>,
    answers: Json<Vec<(Uuid, Value)>>,
    /// `NULL` unless the assignment reviews another one.
    reviewing: Option<Json<Vec<(Uuid, Value)>>>,
}

/// The annotator's own assignment `id` with its campaign and the rows of its
/// view; `NotFound` when it is not theirs.
#[tracing::instrument(level = "debug", skip(db))]
pub async fn read<'e>(
    db: impl sqlx::PgExecutor<'e>,
    id: Uuid,
    annotator_id: Uuid,
) -> Result<(Campaign, Assignment, ViewRows)> {
    let row: Row = sqlx::query_as(
        "SELECT c.*,
                a.id AS a_id, a.batch_id AS a_batch_id, a.annotator_id AS a_annotator_id, a.state AS a_state,
                a.presentation AS a_presentation, a.leased_until AS a_leased_until,
                a.created_at AS a_created_at, a.completed_at AS a_completed_at,
                a.answered::bigint AS answered,
                (SELECT count(*) FROM batch_items bi WHERE bi.batch_id = a.batch_id) AS total,
                (SELECT coalesce(json_agg(json_build_array(i.id, i.payload)), '[]')
                   FROM items i
                  WHERE i.id = ANY(ARRAY(SELECT (e->>'item')::uuid
                                           FROM jsonb_array_elements(a.presentation->'items') e))) AS payloads,
                coalesce(mine.answers, '[]') AS answers,
                CASE WHEN b.review_of IS NOT NULL THEN
                  (SELECT coalesce(json_agg(json_build_array(r.item_id, r.answer)), '[]')
                     FROM responses r WHERE r.assignment_id = b.review_of)
                END AS reviewing
           FROM assignments a
           JOIN campaigns c ON c.id = a.campaign_id
           JOIN batches b ON b.id = a.batch_id
           -- The annotator's answers.
           CROSS JOIN LATERAL (
                SELECT json_agg(json_build_array(r.item_id, r.answer)) AS answers
                  FROM responses r WHERE r.assignment_id = a.id) mine
          WHERE a.id = $1 AND a.annotator_id = $2",
    )
    .bind(id)
    .bind(annotator_id)
    .fetch_optional(db)
    .await?
    .ok_or(Error::NotFound("assignment"))?;
    let assignment = Assignment {
        id: row.a_id,
        batch_id: row.a_batch_id,
        campaign_id: row.campaign.id,
        annotator_id: row.a_annotator_id,
        state: row.a_state,
        presentation: row.a_presentation,
        leased_until: row.a_leased_until,
        created_at: row.a_created_at,
        completed_at: row.a_completed_at,
    };
    let rows = ViewRows {
        payloads: row.payloads.0.into_iter().collect(),
        answers: row.answers.0,
        progress: AssignmentProgress { answered: row.answered, total: row.total },
        reviewing: row.reviewing.map(|r| r.0.into_iter().collect()),
    };
    Ok((row.campaign, assignment, rows))
}
