//! Work done elsewhere, brought in as completed batches: a released dataset
//! (for example VTON-QBench's questionnaires and answers) can then be curated
//! and scored like a campaign collected here.

use crate::error::Result;
use chrono::{DateTime, Utc};
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// A batch answered elsewhere: its items in order and its submissions.
#[derive(Debug, Clone)]
pub struct PastBatch {
    /// The batch's id in the source.
    pub external_id: Option<String>,
    /// Items in the order they were shown.
    pub items: Vec<Uuid>,
    /// Everyone who submitted it.
    pub submissions: Vec<PastSubmission>,
}

/// One annotator's submitted answers to a past batch.
#[derive(Debug, Clone)]
pub struct PastSubmission {
    /// The submission's id in the source.
    pub external_id: Option<String>,
    /// The annotator (an existing user).
    pub annotator_id: Uuid,
    /// When it was submitted.
    pub submitted_at: DateTime<Utc>,
    /// Answers per item (already validated by the kind).
    pub answers: Vec<(Uuid, Value)>,
    /// Background answers, when the source has them.
    pub background: Option<Value>,
}

/// Records past batches as the campaign's batches with completed
/// assignments, all in one transaction. The campaign must have no batches
/// yet. Returns the number of submissions recorded.
pub async fn import_completed(pool: &PgPool, campaign_id: Uuid, batches: &[PastBatch]) -> Result<usize> {
    let mut tx = pool.begin().await?;
    let recorded = import_completed_in(&mut tx, campaign_id, batches).await?;
    tx.commit().await?;
    crate::core::work::batches::refresh_statistics(pool).await?;
    Ok(recorded)
}

/// [`import_completed`] inside the caller's transaction (an import that also
/// adds the items, all or nothing); the caller refreshes the planner's
/// statistics after committing.
pub async fn import_completed_in(
    tx: &mut sqlx::Transaction<'_, sqlx::Postgres>,
    campaign_id: Uuid,
    batches: &[PastBatch],
) -> Result<usize> {
    crate::core::work::batches::lock_without_batches(
        tx,
        campaign_id,
        "import past work into a campaign without batches",
    )
    .await?;
    let mut recorded = 0;
    for (position, batch) in batches.iter().enumerate() {
        // The overlap is what was collected: the batch is not reopened.
        let overlap = i32::try_from(batch.submissions.len().max(1)).unwrap_or(i32::MAX);
        let external_id = batch.external_id.as_deref();
        let batch_id =
            crate::core::work::batches::insert(tx, campaign_id, position, Some(overlap), external_id, &batch.items)
                .await?;
        let presentation =
            json!({"items": batch.items.iter().map(|i| json!({"item": i, "presentation": null})).collect::<Vec<_>>()});
        for s in &batch.submissions {
            let assignment_id = Uuid::new_v4();
            sqlx::query!(
                "INSERT INTO assignments (id, batch_id, campaign_id, annotator_id, state, presentation, leased_until,
                                          created_at, completed_at, external_id)
                 VALUES ($1, $2, $3, $4, 'completed', $5, $6, $6, $6, $7)",
                assignment_id,
                batch_id,
                campaign_id,
                s.annotator_id,
                &presentation,
                s.submitted_at as _,
                s.external_id.as_deref(),
            )
            .execute(&mut **tx)
            .await?;
            let (items, answers): (Vec<Uuid>, Vec<Value>) = s.answers.iter().cloned().unzip();
            sqlx::query!(
                "INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer, created_at, updated_at)
                 SELECT gen_random_uuid(), $1, $2, item, $3, answer, $4, $4
                 FROM unnest($5::uuid[], $6::jsonb[]) AS t(item, answer)",
                assignment_id,
                campaign_id,
                s.annotator_id,
                s.submitted_at as _,
                &items,
                &answers,
            )
            .execute(&mut **tx)
            .await?;
            if let Some(background) = &s.background {
                sqlx::query!(
                    "INSERT INTO participant_profiles (campaign_id, annotator_id, answers) VALUES ($1, $2, $3)
                     ON CONFLICT (campaign_id, annotator_id) DO NOTHING",
                    campaign_id,
                    s.annotator_id,
                    background,
                )
                .execute(&mut **tx)
                .await?;
            }
            recorded += 1;
        }
    }
    Ok(recorded)
}
