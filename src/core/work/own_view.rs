//! An annotator's own assignment with its campaign and everything its view
//! shows, read in one statement: the API's view of an assignment. Reading
//! them apart took six statements in three round trips (the assignment, then
//! its campaign, then payloads, answers, progress and the answers under
//! review). The task page reads one task instead (see [`crate::core::work::own_task`]).

use crate::core::campaign::campaigns::{Campaign, CampaignRow};
use crate::core::campaign::settings::Participants;
use crate::core::campaign::states::{AssignmentState, CampaignState};
use crate::core::work::annotator::ViewRows;
use crate::core::work::assignment_progress::AssignmentProgress;
use crate::core::work::assignments::Assignment;
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::types::Json;
use uuid::Uuid;

/// The annotator's own assignment `id` with its campaign and the rows of its
/// view; `NotFound` when it is not theirs.
#[tracing::instrument(level = "debug", skip(db))]
pub async fn read<'e>(
    db: impl sqlx::PgExecutor<'e>,
    id: Uuid,
    annotator_id: Uuid,
) -> Result<(Campaign, Assignment, ViewRows)> {
    let row = sqlx::query!(
        r#"SELECT c.id, c.kind, c.name, c.state AS "state: CampaignState", c.config,
                  c.participants AS "participants: Participants", c.lease_minutes, c.annotators_per_batch, c.review,
                  c.joins_per_address, c.first_answer_within, c.ground_truth_from, c.overlap, c.completion_code,
                  c.completion_url, c.created_at AS "created_at: crate::db::Time",
                  c.archived_at AS "archived_at: crate::db::Time", c.version,
                  a.id AS a_id, a.batch_id AS a_batch_id, a.annotator_id AS a_annotator_id,
                  a.state AS "a_state: AssignmentState", a.presentation AS a_presentation,
                  a.leased_until AS "a_leased_until: crate::db::Time", a.created_at AS "a_created_at: crate::db::Time",
                  a.completed_at AS "a_completed_at: crate::db::Time",
                  a.answered::bigint AS "answered!",
                  (SELECT count(*) FROM batch_items bi WHERE bi.batch_id = a.batch_id) AS "total!",
                  (SELECT coalesce(json_agg(json_build_array(i.id, i.payload)), '[]')
                     FROM items i
                    WHERE i.id = ANY(ARRAY(SELECT (e->>'item')::uuid
                                             FROM jsonb_array_elements(a.presentation->'items') e)))
                      AS "payloads!: Json<Vec<(Uuid, Value)>>",
                  coalesce(mine.answers, '[]') AS "answers!: Json<Vec<(Uuid, Value)>>",
                  CASE WHEN b.review_of IS NOT NULL THEN
                    (SELECT coalesce(json_agg(json_build_array(r.item_id, r.answer)), '[]')
                       FROM responses r WHERE r.assignment_id = b.review_of)
                  END AS "reviewing: Json<Vec<(Uuid, Value)>>"
             FROM assignments a
             JOIN campaigns c ON c.id = a.campaign_id
             JOIN batches b ON b.id = a.batch_id
             -- The annotator's answers.
             CROSS JOIN LATERAL (
                  SELECT json_agg(json_build_array(r.item_id, r.answer)) AS answers
                    FROM responses r WHERE r.assignment_id = a.id) mine
            WHERE a.id = $1 AND a.annotator_id = $2"#,
        id,
        annotator_id,
    )
    .fetch_optional(db)
    .await?
    .ok_or(Error::NotFound("assignment"))?;
    let campaign = CampaignRow {
        id: row.id,
        kind: row.kind,
        name: row.name,
        state: row.state,
        config: row.config,
        participants: row.participants,
        lease_minutes: row.lease_minutes,
        annotators_per_batch: row.annotators_per_batch,
        review: row.review,
        joins_per_address: row.joins_per_address,
        first_answer_within: row.first_answer_within,
        ground_truth_from: row.ground_truth_from,
        overlap: row.overlap,
        completion_code: row.completion_code,
        completion_url: row.completion_url,
        created_at: row.created_at,
        archived_at: row.archived_at,
        version: row.version,
    }
    .read()?;
    let assignment = Assignment {
        id: row.a_id,
        batch_id: row.a_batch_id,
        campaign_id: campaign.id,
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
    Ok((campaign, assignment, rows))
}
