//! An annotator's progress through one assignment ("question 12 of 50").

use crate::error::Result;
use sqlx::PgPool;
use uuid::Uuid;

/// An annotator's progress through one assignment.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, utoipa::ToSchema)]
pub struct AssignmentProgress {
    /// Items answered.
    pub answered: i64,
    /// Items in the batch.
    pub total: i64,
}

/// Progress within an assignment (its answers as counted on the assignment
/// by the database, see migration 0018).
pub async fn of_assignment(pool: &PgPool, assignment_id: Uuid, batch_id: Uuid) -> Result<AssignmentProgress> {
    let row = sqlx::query!(
        r#"SELECT coalesce((SELECT answered::bigint FROM assignments WHERE id = $1), 0) AS "answered!",
                  (SELECT count(*) FROM batch_items WHERE batch_id = $2) AS "total!""#,
        assignment_id,
        batch_id,
    )
    .fetch_one(pool)
    .await?;
    Ok(AssignmentProgress { answered: row.answered, total: row.total })
}
