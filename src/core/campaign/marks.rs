//! The exclusions reconciliation writes on responses (`platform:...`):
//! applied when the list is uploaded, when whose work counts changes and
//! when a questionnaire is submitted. Plain statements on `responses`, so
//! that the campaign and assignment code can call them without reading
//! the platform's list themselves.

use crate::error::Result;
use sqlx::PgPool;
use uuid::Uuid;

/// The prefix of the exclusions this module writes (an admin's reason may
/// not start with it).
pub const REASON_PREFIX: &str = "platform:";
/// The exclusion of a worker the uploaded list does not have.
pub const NOT_ON_PLATFORM: &str = "platform:not_on_platform";
/// The exclusion of a worker the platform rejected (or who returned or
/// timed out there).
pub const REJECTED_ON_PLATFORM: &str = "platform:rejected_on_platform";

/// Makes the campaign's `platform:` exclusions follow its list and its
/// `ground_truth_from`: under `reconciled` with a list, the responses of
/// workers not on it (or rejected there) are marked, over any curation
/// mark (curation counts only workers who count); otherwise, and for
/// workers who count, the marks are lifted (curation marks them again on
/// its next run). Manual exclusions are left alone.
pub async fn mark(conn: &mut sqlx::PgConnection, campaign_id: Uuid) -> Result<u64> {
    let lifted = sqlx::query!(
        "UPDATE responses r SET excluded_reason = NULL, excluded_at = NULL
         FROM users u, campaigns c
         WHERE r.campaign_id = $1 AND c.id = r.campaign_id AND u.id = r.annotator_id
           AND r.excluded_reason LIKE 'platform:%'
           AND (c.ground_truth_from = 'all'
                OR NOT EXISTS (SELECT 1 FROM platform_submissions p WHERE p.campaign_id = $1)
                OR EXISTS (SELECT 1 FROM platform_submissions p
                           WHERE p.campaign_id = $1 AND p.participant_id = u.external_id AND NOT p.rejected))",
        campaign_id,
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    let marked = sqlx::query!(
        "UPDATE responses r SET excluded_at = now(),
                excluded_reason = CASE WHEN EXISTS (SELECT 1 FROM platform_submissions p
                                                    WHERE p.campaign_id = $1 AND p.participant_id = u.external_id)
                                       THEN $3 ELSE $2 END
         FROM users u, campaigns c
         WHERE r.campaign_id = $1 AND c.id = r.campaign_id AND u.id = r.annotator_id AND u.role = 'worker'
           AND c.ground_truth_from = 'reconciled'
           AND EXISTS (SELECT 1 FROM platform_submissions p WHERE p.campaign_id = $1)
           AND NOT EXISTS (SELECT 1 FROM platform_submissions p
                           WHERE p.campaign_id = $1 AND p.participant_id = u.external_id AND NOT p.rejected)
           AND (r.excluded_reason IS NULL OR r.excluded_reason LIKE 'curation:%')",
        campaign_id,
        NOT_ON_PLATFORM,
        REJECTED_ON_PLATFORM,
    )
    .execute(&mut *conn)
    .await?
    .rows_affected();
    Ok(lifted + marked)
}

/// [`mark`] for one submitted questionnaire of a reconciled campaign: its
/// responses are marked when its worker does not count (a worker who
/// submits after the list was uploaded is on no list).
pub async fn mark_assignment(conn: &mut sqlx::PgConnection, assignment_id: Uuid) -> Result<u64> {
    Ok(sqlx::query!(
        "UPDATE responses r SET excluded_at = now(),
                excluded_reason = CASE WHEN EXISTS (SELECT 1 FROM platform_submissions p
                                                    WHERE p.campaign_id = r.campaign_id AND p.participant_id = u.external_id)
                                       THEN $3 ELSE $2 END
         FROM users u
         WHERE r.assignment_id = $1 AND u.id = r.annotator_id AND u.role = 'worker'
           AND EXISTS (SELECT 1 FROM platform_submissions p WHERE p.campaign_id = r.campaign_id)
           AND NOT EXISTS (SELECT 1 FROM platform_submissions p
                           WHERE p.campaign_id = r.campaign_id AND p.participant_id = u.external_id AND NOT p.rejected)
           AND (r.excluded_reason IS NULL OR r.excluded_reason LIKE 'curation:%')",
        assignment_id,
        NOT_ON_PLATFORM,
        REJECTED_ON_PLATFORM,
    )
    .execute(conn)
    .await?
    .rows_affected())
}

/// Applies [`mark`] in its own transaction (after a settings change, or
/// when a questionnaire is submitted in a reconciled campaign).
pub async fn remark(pool: &PgPool, campaign_id: Uuid) -> Result<u64> {
    let mut tx = pool.begin().await?;
    let changed = mark(&mut tx, campaign_id).await?;
    tx.commit().await?;
    Ok(changed)
}
