//! A campaign read from the database into a [`Snapshot`]: what a release
//! archives and the ground truth aggregates, in one transaction.

use super::snapshot::{
    Parts, Reasons, SnapAssignment, SnapBatch, SnapCampaign, SnapItem, SnapModelScores, SnapProfile, SnapResponse,
    Snapshot,
};
use crate::core::campaign::campaigns;
use crate::core::campaign::states::AssignmentState;
use crate::core::item::payload::Payload;
use crate::core::support::export_time::time;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// A stable pseudonym: the n-th annotator (by first submission) becomes
/// `00000000-0000-0000-0000-00000000000n`. Nothing of the real id remains.
fn pseudonym(n: usize) -> Uuid {
    Uuid::from_u128(n as u128 + 1)
}

/// The campaign's items in import order, read as a stream: each payload is
/// parsed and kept as text as it comes (read whole, the rows and their
/// parsed payloads were held at once).
async fn load_items(db: &mut sqlx::PgConnection, campaign_id: Uuid) -> Result<Vec<SnapItem>> {
    use futures_util::TryStreamExt;
    let mut rows = crate::core::item::items::each(&mut *db, campaign_id);
    let mut items = Vec::new();
    while let Some(i) = rows.try_next().await? {
        items.push(SnapItem { id: i.id, external_id: i.external_id, payload: Payload::of(&i.payload), gold: i.gold });
    }
    Ok(items)
}

/// The campaign's responses, oldest first, annotators named by `name`,
/// read as a stream with one shared copy of each distinct answer: at crowd
/// scale half a million parsed answers (and the rows holding them all at
/// once) took most of a snapshot's memory.
async fn load_responses(
    db: &mut sqlx::PgConnection,
    campaign_id: Uuid,
    name: &mut impl FnMut(Uuid) -> Uuid,
) -> Result<Vec<SnapResponse>> {
    use futures_util::TryStreamExt;
    let capacity = crate::core::work::assignments::answers_stored(&mut *db, campaign_id).await?;
    let mut rows = sqlx::query!(
        r#"SELECT r.assignment_id, a.batch_id, r.item_id, r.annotator_id, r.answer::text AS "answer!",
                  bi.position + 1 AS position, r.created_at AS "created_at: crate::db::Time",
                  r.updated_at AS "updated_at: crate::db::Time", r.time_on_task_ms, r.excluded_reason
             FROM responses r JOIN assignments a ON a.id = r.assignment_id
             LEFT JOIN batch_items bi ON bi.batch_id = a.batch_id AND bi.item_id = r.item_id
            WHERE r.campaign_id = $1 ORDER BY r.created_at, r.id"#,
        campaign_id
    )
    .fetch(&mut *db);
    let mut shared = crate::core::truth::shared_answers::SharedAnswers::default();
    let mut reasons = Reasons::default();
    let mut responses = Vec::with_capacity(capacity);
    while let Some(r) = rows.try_next().await? {
        responses.push(SnapResponse {
            assignment_id: r.assignment_id,
            batch_id: r.batch_id,
            item_id: r.item_id,
            annotator: name(r.annotator_id),
            answer: shared.from_text(&r.answer).map_err(|e| Error::internal("stored answer", e))?,
            position: r.position,
            answered_at: r.created_at,
            changed_at: r.updated_at,
            time_on_task_ms: r.time_on_task_ms,
            excluded_reason: r.excluded_reason.map(|e| reasons.share(&e)),
        });
    }
    Ok(responses)
}

impl Snapshot {
    /// Loads a campaign's data; with `pseudonymize`, annotator ids are
    /// replaced by pseudonyms stable within the snapshot.
    pub async fn load(pool: &PgPool, campaign_id: Uuid, pseudonymize: bool) -> Result<Self> {
        Self::load_parts(pool, campaign_id, pseudonymize, Parts::ALL).await
    }

    /// [`Snapshot::load`] reading only the bulky `parts` asked for (the
    /// others are left empty): for live exports that need only some of them
    /// (with `pseudonymize`, pseudonyms would follow only the parts read).
    /// Every table is read in one read-only transaction that sees one
    /// moment: answers coming in while a snapshot of an open campaign is
    /// read are all in it or all out of it.
    #[tracing::instrument(level = "debug", skip(pool, parts))]
    pub async fn load_parts(pool: &PgPool, campaign_id: Uuid, pseudonymize: bool, parts: Parts) -> Result<Self> {
        let mut tx = crate::db::one_moment(pool).await?;
        let snapshot = Self::read(&mut tx, campaign_id, pseudonymize, parts).await?;
        tx.commit().await?;
        Ok(snapshot)
    }

    async fn read(db: &mut sqlx::PgConnection, campaign_id: Uuid, pseudonymize: bool, parts: Parts) -> Result<Self> {
        let c = campaigns::get(&mut *db, campaign_id).await?;
        let items = if parts.items { load_items(&mut *db, campaign_id).await? } else { Vec::new() };
        type BatchRow = (Uuid, Option<String>, i32, Vec<Uuid>, Option<Uuid>);
        let batches: Vec<BatchRow> = sqlx::query!(
            r#"SELECT b.id, b.external_id, b.position,
                      coalesce(array_agg(bi.item_id ORDER BY bi.position) FILTER (WHERE bi.item_id IS NOT NULL),
                               '{}') AS "items!",
                      b.review_of
               FROM batches b LEFT JOIN batch_items bi ON bi.batch_id = b.id
               WHERE b.campaign_id = $1 GROUP BY b.id ORDER BY b.position"#,
            campaign_id,
        )
        .fetch_all(&mut *db)
        .await?
        .into_iter()
        .map(|r| (r.id, r.external_id, r.position, r.items, r.review_of))
        .collect();
        type AssignmentRow = (Uuid, Option<String>, Uuid, Uuid, AssignmentState, Option<DateTime<Utc>>);
        let assignments: Vec<AssignmentRow> = sqlx::query!(
            r#"SELECT a.id, a.external_id, a.batch_id, a.annotator_id, a.state AS "state: AssignmentState",
                      a.completed_at AS "completed_at: crate::db::Time"
               FROM assignments a JOIN batches b ON b.id = a.batch_id
               WHERE a.campaign_id = $1 ORDER BY b.position, a.completed_at NULLS LAST, a.created_at, a.id"#,
            campaign_id,
        )
        .fetch_all(&mut *db)
        .await?
        .into_iter()
        .map(|r| (r.id, r.external_id, r.batch_id, r.annotator_id, r.state, r.completed_at))
        .collect();
        let worker_ids = if pseudonymize {
            BTreeMap::new()
        } else {
            crate::core::truth::ground_truth::worker_ids(&mut *db, campaign_id).await?
        };
        let mut names: BTreeMap<Uuid, Uuid> = BTreeMap::new();
        let mut name = |real: Uuid| -> Uuid {
            if !pseudonymize {
                return real;
            }
            let next = pseudonym(names.len());
            *names.entry(real).or_insert(next)
        };
        let assignments: Vec<SnapAssignment> = assignments
            .into_iter()
            .map(|(id, external_id, batch_id, annotator, state, completed)| SnapAssignment {
                id,
                external_id,
                batch_id,
                annotator: name(annotator),
                state,
                submitted_at: completed.map(time),
            })
            .collect();
        let responses = if parts.responses { load_responses(db, campaign_id, &mut name).await? } else { Vec::new() };
        let profiles = sqlx::query!(
            "SELECT annotator_id, answers FROM participant_profiles WHERE campaign_id = $1 ORDER BY created_at, annotator_id",
            campaign_id,
        )
        .fetch_all(&mut *db)
        .await?;
        let profiles =
            profiles.into_iter().map(|p| SnapProfile { annotator: name(p.annotator_id), answers: p.answers }).collect();
        let model_scores = crate::core::truth::model_scores::answers(&mut *db, campaign_id).await?;
        let model_scores = model_scores.into_iter().map(|(model, scores)| SnapModelScores { model, scores }).collect();
        Ok(Self {
            campaign: SnapCampaign {
                id: c.id,
                name: c.name.clone(),
                kind: c.kind.clone(),
                state: c.state,
                config: c.config.clone(),
                settings: Some(c.settings),
            },
            items,
            batches: batches
                .into_iter()
                .map(|(id, external_id, position, items, review_of)| SnapBatch {
                    id,
                    external_id,
                    position,
                    items,
                    review_of,
                })
                .collect(),
            assignments,
            responses,
            profiles,
            model_scores,
            worker_ids,
        })
    }
}
