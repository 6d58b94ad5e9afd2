//! Assignments: handing the next batch to an annotator under a lease.
//!
//! Concurrency rules, all enforced in the database:
//! * a batch never has more live assignments (active, or completed) than
//!   its overlap: each batch keeps how many of its assignments hold a slot
//!   (a trigger counts them), an index lists the batches with room, and the
//!   candidate is locked with `FOR UPDATE`, its count checked again on the
//!   locked row. Annotators asking at the same moment first pass over
//!   batches others are taking (so they spread over batches instead of
//!   queueing on one) and, when no other batch has room, wait for a locked
//!   one rather than hear "no task left" on a batch that still wants them.
//!   Waiting never deadlocks: whoever holds a batch with room inserts and
//!   commits without waiting for anything else. A slot whose lease ran out
//!   is handed out again once the campaign has no room left (until then its
//!   worker may still come back and finish);
//! * an annotator never gets the same batch twice (unique constraint) nor a
//!   batch holding a non-gold item they already answered (shared sanity
//!   items may recur unless the kind says otherwise: they test the
//!   annotator, they are not data), nor more batches than the kind allows;
//! * nobody reviews their own work: a review batch never goes to the
//!   annotator of the assignment it reviews;
//! * an annotator has at most one active assignment per campaign (a
//!   transaction-level advisory lock per annotator serialises their own
//!   double clicks without blocking anyone else).

use crate::core::campaign::states::{AssignmentState, CampaignState};
use crate::core::work::eligibility::{batches_with_room, who_may_take, Eligibility};
use crate::core::{campaign::campaigns, Registry};
use crate::error::Code;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use rand::SeedableRng;
use serde_json::{json, Value};
use sqlx::{PgPool, Postgres, Transaction};
use std::collections::HashMap;
use uuid::Uuid;

/// An assignment as stored.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct Assignment {
    /// Assignment id.
    pub id: Uuid,
    /// The batch.
    pub batch_id: Uuid,
    /// The campaign.
    pub campaign_id: Uuid,
    /// The annotator.
    pub annotator_id: Uuid,
    /// Active, completed or expired.
    pub state: AssignmentState,
    /// Item order and per-item presentation for this annotator.
    #[serde(skip)]
    pub presentation: Value,
    /// When the lease runs out.
    pub leased_until: DateTime<Utc>,
    /// When it was handed out.
    pub created_at: DateTime<Utc>,
    /// When the annotator submitted it.
    pub completed_at: Option<DateTime<Utc>>,
}

/// `SELECT` of every [`Assignment`] field `FROM assignments`, then the
/// statement's tail: checked against the schema when compiled.
macro_rules! select_assignments {
    ($tail:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Assignment,
            r#"SELECT id, batch_id, campaign_id, annotator_id, state AS "state: AssignmentState", presentation,
                      leased_until AS "leased_until: crate::db::Time", created_at AS "created_at: crate::db::Time",
                      completed_at AS "completed_at: crate::db::Time"
                 FROM assignments "# + $tail
            $(, $arg)*
        )
    };
}

/// A statement that writes assignments and returns them as [`Assignment`]s,
/// checked against the schema when compiled.
macro_rules! returning_assignment {
    ($head:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            Assignment,
            $head + r#" RETURNING id, batch_id, campaign_id, annotator_id, state AS "state: AssignmentState", presentation,
                      leased_until AS "leased_until: crate::db::Time", created_at AS "created_at: crate::db::Time",
                      completed_at AS "completed_at: crate::db::Time""#
            $(, $arg)*
        )
    };
}

impl Assignment {
    /// Item ids in the order this annotator sees them.
    pub fn item_order(&self) -> Vec<Uuid> {
        self.presentation
            .get("items")
            .and_then(Value::as_array)
            .map(|a| a.iter().filter_map(|e| e.get("item")?.as_str()?.parse().ok()).collect())
            .unwrap_or_default()
    }

    /// Every item's stored presentation (e.g. its choice order), by item, read
    /// in one pass (finding each item's entry apart made a questionnaire's
    /// view quadratic).
    pub fn item_presentations(&self) -> HashMap<Uuid, &Value> {
        self.presentation
            .get("items")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(|e| Some((e.get("item")?.as_str()?.parse().ok()?, e.get("presentation")?)))
            .collect()
    }
}

/// The annotator's current assignment in the campaign, or a new one.
/// `None` when no batch is available to them.
pub async fn next(
    pool: &PgPool,
    kinds: &Registry,
    campaign_id: Uuid,
    annotator_id: Uuid,
) -> Result<Option<Assignment>> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    next_in(pool, kinds, &campaign, annotator_id).await
}

/// The annotator's live assignment in an open campaign, its lease renewed
/// (one statement): what [`next_in`] gives first, without handing out work.
pub async fn resume_in(
    pool: &PgPool,
    campaign: &campaigns::Campaign,
    annotator_id: Uuid,
) -> Result<Option<Assignment>> {
    if campaign.state != CampaignState::Open {
        return Ok(None);
    }
    resume(pool, campaign.id, annotator_id, Lease::of(campaign)).await
}

/// [`next`] for a campaign already loaded.
pub async fn next_in(
    pool: &PgPool,
    kinds: &Registry,
    campaign: &campaigns::Campaign,
    annotator_id: Uuid,
) -> Result<Option<Assignment>> {
    let campaign_id = campaign.id;
    let lease = Lease::of(campaign);
    if campaign.state != CampaignState::Open {
        // Closing stops new work only: a questionnaire held is resumed until its lease ends.
        if campaign.state == CampaignState::Closed {
            if let Some(current) = resume(pool, campaign_id, annotator_id, lease).await? {
                if current.leased_until > chrono::Utc::now() {
                    return Ok(Some(current));
                }
            }
        }
        return Err(Error::conflict(Code::CampaignNotOpen, "this campaign is not open for annotation"));
    }
    let (kind, rules) = (kinds.of(campaign)?, kinds.rules(campaign)?);
    // Resuming (the common case) is one statement; only handing out new
    // work needs the annotator's lock, under which resuming is checked again.
    if let Some(current) = resume(pool, campaign_id, annotator_id, lease).await? {
        return Ok(Some(current));
    }
    let mut tx = pool.begin().await?;
    sqlx::query!("SELECT pg_advisory_xact_lock(hashtextextended($1::text, 0)) AS locked", annotator_id.to_string())
        .fetch_one(&mut *tx)
        .await?;
    if let Some(current) = resume(&mut *tx, campaign_id, annotator_id, lease).await? {
        tx.commit().await?;
        return Ok(Some(current));
    }
    if let Some(revived) = revive_every_annotator_work(&mut tx, campaign_id, annotator_id).await? {
        tx.commit().await?;
        return Ok(Some(revived));
    }
    let (check_gold, barred) = match who_may_take(&mut tx, &*rules, campaign, annotator_id).await? {
        Eligibility::Blocked => {
            tx.commit().await?;
            return Err(Error::Forbidden(
                "you cannot take further batches in this campaign; thank you for your work".into(),
            ));
        }
        Eligibility::AtLimit => {
            tx.commit().await?;
            return Ok(None);
        }
        Eligibility::May { check_gold, barred } => (check_gold, barred),
    };
    let mut candidate = first_with_room(&mut tx, campaign_id, annotator_id, check_gold, &barred).await?;
    // No room left: now, and only now, slots whose lease ran out are handed
    // out again (until now their workers could resume).
    if candidate.is_none() && expire_stale(&mut tx, campaign_id).await? > 0 {
        candidate = first_with_room(&mut tx, campaign_id, annotator_id, check_gold, &barred).await?;
    }
    let Some((batch_id, overlap)) = candidate else {
        tx.commit().await?;
        return Ok(None);
    };
    let items: Vec<(Uuid, Value)> = sqlx::query!(
        "SELECT i.id, i.payload FROM batch_items bi JOIN items i ON i.id = bi.item_id
         WHERE bi.batch_id = $1 ORDER BY bi.position",
        batch_id,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|i| (i.id, i.payload))
    .collect();
    let mut rng = rand::rngs::StdRng::from_os_rng();
    let mut order: Vec<&(Uuid, Value)> = items.iter().collect();
    if rules.policy().batches.shuffle_items {
        use rand::seq::SliceRandom;
        order.shuffle(&mut rng);
    }
    let presented: Vec<Value> = order
        .iter()
        .map(|(id, payload)| {
            let presentation = kind
                .presentation(payload, &mut rng)
                .map_err(|e| Error::unexpected(format!("a stored item no longer reads as its kind's: {}", e.0)))?;
            Ok(json!({"item": id, "presentation": presentation}))
        })
        .collect::<Result<_>>()?;
    let presentation = json!({ "items": presented });
    // A batch every annotator labels has no slot anyone waits for: its
    // lease never runs out, so an expert may pause for days.
    let assignment = returning_assignment!(
        // An endless lease: a far date rather than `infinity`, which no Rust date type can hold.
        "INSERT INTO assignments (id, batch_id, campaign_id, annotator_id, presentation, leased_until)
         VALUES ($1, $2, $3, $4, $5,
                 CASE WHEN $7 THEN '9999-12-31T00:00:00Z'::timestamptz ELSE now() + make_interval(mins => $6::int) END)",
        Uuid::new_v4(),
        batch_id,
        campaign_id,
        annotator_id,
        &presentation,
        lease.until_first_answer(),
        overlap.is_none(),
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    metrics::counter!("atelier_assignments_created_total").increment(1);
    Ok(Some(assignment))
}

/// The first batch (in position order) with a free slot that the annotator
/// may take, locked: batches nobody is taking right now first, so
/// annotators asking at once spread over batches instead of queueing on
/// one; when those have no room, the ones being taken, waiting for their
/// lock. Its id and overlap.
async fn first_with_room(
    tx: &mut Transaction<'_, Postgres>,
    campaign_id: Uuid,
    annotator_id: Uuid,
    check_gold: bool,
    barred: &[String],
) -> Result<Option<(Uuid, Option<i32>)>> {
    for skip_locked in [true, false] {
        let found = with_room(tx, campaign_id, annotator_id, check_gold, barred, skip_locked).await?;
        if found.is_some() {
            return Ok(found);
        }
    }
    Ok(None)
}

/// [`first_with_room`] skipping locked batches or waiting for them: only
/// batches with room are looked at (an index lists them in order), and the
/// count is checked again on the locked row, so a batch that fills while
/// this waits for its lock is passed over.
async fn with_room(
    tx: &mut Transaction<'_, Postgres>,
    campaign_id: Uuid,
    annotator_id: Uuid,
    check_gold: bool,
    barred: &[String],
    skip_locked: bool,
) -> Result<Option<(Uuid, Option<i32>)>> {
    let found = if skip_locked {
        batches_with_room!(
            "SELECT b.id, b.overlap",
            "ORDER BY b.position LIMIT 1 FOR UPDATE OF b SKIP LOCKED",
            campaign_id,
            annotator_id,
            check_gold,
            barred,
        )
        .fetch_optional(&mut **tx)
        .await?
        .map(|b| (b.id, b.overlap))
    } else {
        batches_with_room!(
            "SELECT b.id, b.overlap",
            "ORDER BY b.position LIMIT 1 FOR UPDATE OF b",
            campaign_id,
            annotator_id,
            check_gold,
            barred,
        )
        .fetch_optional(&mut **tx)
        .await?
        .map(|b| (b.id, b.overlap))
    };
    Ok(found)
}

/// How long a campaign's assignments are leased.
#[derive(Debug, Clone, Copy)]
struct Lease {
    /// The lease, renewed while the annotator works.
    minutes: i32,
    /// Minutes for the first answer (crowd campaigns; 0: the lease alone):
    /// a questionnaire taken and not started goes back to the pool after
    /// them, so ids that only start cannot hold every place.
    first_answer: i32,
}

impl Lease {
    fn of(campaign: &campaigns::Campaign) -> Self {
        let first_answer = if campaign.settings.crowd() { campaign.settings.first_answer_within } else { 0 };
        Self { minutes: campaign.settings.lease_minutes, first_answer }
    }

    /// The lease of a questionnaire nobody has answered in yet.
    fn until_first_answer(self) -> i32 {
        if self.first_answer > 0 {
            self.first_answer.min(self.minutes)
        } else {
            self.minutes
        }
    }
}

/// The annotator's active assignment in the campaign, its lease renewed
/// (never shortened: "every annotator" work is leased forever); one not
/// answered in yet is renewed only up to its first-answer limit after it
/// was taken, so coming back without answering does not hold the place.
async fn resume<'e>(
    executor: impl sqlx::PgExecutor<'e>,
    campaign_id: Uuid,
    annotator_id: Uuid,
    lease: Lease,
) -> Result<Option<Assignment>> {
    Ok(returning_assignment!(
        "UPDATE assignments SET leased_until = greatest(leased_until, CASE
                WHEN answered = 0 AND $4::int > 0
                    THEN least(now() + make_interval(mins => $3::int), created_at + make_interval(mins => $4::int))
                ELSE now() + make_interval(mins => $3::int) END)
         WHERE campaign_id = $1 AND annotator_id = $2 AND state = 'active'",
        campaign_id,
        annotator_id,
        lease.minutes,
        lease.first_answer,
    )
    .fetch_optional(executor)
    .await?)
}

/// Gives an annotator back their expired work in an "every annotator"
/// batch (expired before such leases became endless), its answers counted
/// again; `None` when there is none.
async fn revive_every_annotator_work(
    tx: &mut Transaction<'_, Postgres>,
    campaign_id: Uuid,
    annotator_id: Uuid,
) -> Result<Option<Assignment>> {
    let revived = returning_assignment!(
        // An endless lease: a far date rather than `infinity`, which no Rust date type can hold.
        "UPDATE assignments SET state = 'active', leased_until = '9999-12-31T00:00:00Z'::timestamptz
         WHERE id = (SELECT a.id FROM assignments a JOIN batches b ON b.id = a.batch_id
                     WHERE a.campaign_id = $1 AND a.annotator_id = $2 AND a.state = 'expired' AND b.overlap IS NULL
                     ORDER BY b.position LIMIT 1)",
        campaign_id,
        annotator_id,
    )
    .fetch_optional(&mut **tx)
    .await?;
    if let Some(a) = &revived {
        sqlx::query!(
            "UPDATE responses SET excluded_reason = NULL, excluded_at = NULL
             WHERE assignment_id = $1 AND excluded_reason = 'lease_expired'",
            a.id,
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(revived)
}

/// Expires the campaign's active assignments whose lease ran out, so their
/// slots can be handed out again; their partial answers stay, marked
/// excluded. How many expired.
async fn expire_stale(tx: &mut Transaction<'_, Postgres>, campaign_id: Uuid) -> Result<usize> {
    let expired: Vec<Uuid> = sqlx::query_scalar!(
        "UPDATE assignments SET state = 'expired'
         WHERE campaign_id = $1 AND state = 'active' AND leased_until <= now() RETURNING id",
        campaign_id,
    )
    .fetch_all(&mut **tx)
    .await?;
    if !expired.is_empty() {
        sqlx::query!(
            "UPDATE responses SET excluded_reason = 'lease_expired', excluded_at = now()
             WHERE assignment_id = ANY($1) AND excluded_reason IS NULL",
            &expired,
        )
        .execute(&mut **tx)
        .await?;
    }
    Ok(expired.len())
}

/// Queues a review of a completed assignment by a different annotator,
/// unless the assignment is itself a review.
async fn create_review_batch(tx: &mut Transaction<'_, Postgres>, done: &Assignment) -> Result<()> {
    let is_review =
        sqlx::query_scalar!("SELECT review_of FROM batches WHERE id = $1", done.batch_id).fetch_one(&mut **tx).await?;
    if is_review.is_some() {
        return Ok(());
    }
    // Positions are unique per campaign: serialise concurrent completions.
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", done.campaign_id)
        .fetch_optional(&mut **tx)
        .await?;
    let batch_id = Uuid::new_v4();
    sqlx::query!(
        "INSERT INTO batches (id, campaign_id, position, overlap, review_of)
         SELECT $1, $2, COALESCE(max(position), 0) + 1, 1, $3 FROM batches WHERE campaign_id = $2",
        batch_id,
        done.campaign_id,
        done.id,
    )
    .execute(&mut **tx)
    .await?;
    sqlx::query!("INSERT INTO batch_items (batch_id, position, item_id) SELECT $1, position, item_id FROM batch_items WHERE batch_id = $2", batch_id, done.batch_id)
        .execute(&mut **tx)
        .await?;
    Ok(())
}

/// How many answers the campaign's assignments hold (excluded ones too),
/// from their kept counts: read in milliseconds where counting the
/// responses scans them. Responses are never deleted, so this bounds any
/// later read of them (a capacity to allocate once).
pub async fn answers_stored<'e>(db: impl sqlx::PgExecutor<'e>, campaign_id: Uuid) -> Result<usize> {
    let stored: i64 = sqlx::query_scalar!(
        r#"SELECT COALESCE(sum(answered), 0)::bigint AS "stored!" FROM assignments WHERE campaign_id = $1"#,
        campaign_id,
    )
    .fetch_one(db)
    .await?;
    Ok(usize::try_from(stored).unwrap_or_default())
}

/// The annotator's active assignment in a campaign, if any.
pub async fn active_of(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid) -> Result<Option<Assignment>> {
    Ok(select_assignments!(
        "WHERE campaign_id = $1 AND annotator_id = $2 AND state = 'active'",
        campaign_id,
        annotator_id
    )
    .fetch_optional(pool)
    .await?)
}

/// Loads an assignment that must belong to the annotator (others get 404,
/// so ids of other people's work reveal nothing).
pub async fn get_own<'e>(db: impl sqlx::PgExecutor<'e>, id: Uuid, annotator_id: Uuid) -> Result<Assignment> {
    select_assignments!("WHERE id = $1 AND annotator_id = $2", id, annotator_id)
        .fetch_optional(db)
        .await?
        .ok_or(Error::NotFound("assignment"))
}

/// Submits the batch: every item must be answered. Idempotent.
pub async fn complete(pool: &PgPool, kinds: &Registry, id: Uuid, annotator_id: Uuid) -> Result<Assignment> {
    // Everything needed from other tables is read before the transaction:
    // taking a second connection while holding one starves the pool under load.
    let campaign_id: Uuid = sqlx::query_scalar!(
        "SELECT campaign_id FROM assignments WHERE id = $1 AND annotator_id = $2",
        id,
        annotator_id
    )
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("assignment"))?;
    let campaign = campaigns::get(pool, campaign_id).await?;
    let rules = kinds.rules(&campaign)?;
    let mut tx = pool.begin().await?;
    let assignment = select_assignments!("WHERE id = $1 AND annotator_id = $2 FOR UPDATE", id, annotator_id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound("assignment"))?;
    match assignment.state {
        AssignmentState::Completed => return Ok(assignment),
        AssignmentState::Expired => return Err(Error::lease_expired()),
        AssignmentState::Active => {}
    }
    let counts = sqlx::query!(
        r#"SELECT (SELECT count(*) FROM batch_items WHERE batch_id = $1) AS "total!",
                  (SELECT count(*) FROM responses WHERE assignment_id = $2) AS "answered!""#,
        assignment.batch_id,
        id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let (total, answered) = (counts.total, counts.answered);
    if answered < total {
        return Err(Error::conflict(
            Code::Incomplete,
            format!("{answered} of {total} items answered; answer all before submitting"),
        ));
    }
    let done =
        returning_assignment!("UPDATE assignments SET state = 'completed', completed_at = now() WHERE id = $1", id)
            .fetch_one(&mut *tx)
            .await?;
    // (gold, payload, answer) of every item, for the kind's submit check.
    let answered: Vec<(Option<Value>, Value, Value)> = sqlx::query!(
        "SELECT i.gold, i.payload, r.answer FROM responses r JOIN items i ON i.id = r.item_id WHERE r.assignment_id = $1",
        id,
    )
    .fetch_all(&mut *tx)
    .await?
    .into_iter()
    .map(|r| (r.gold, r.payload, r.answer))
    .collect();
    if campaign.settings.review {
        create_review_batch(&mut tx, &done).await?;
    }
    let verdict = rules.on_submit(&answered);
    if let Some(reason) = verdict.exclude {
        sqlx::query!(
            "UPDATE responses SET excluded_reason = $2, excluded_at = now() WHERE assignment_id = $1 AND excluded_reason IS NULL",
            id,
            reason,
        )
        .execute(&mut *tx)
        .await?;
    }
    if let Some(reason) = verdict.block {
        sqlx::query!(
            "INSERT INTO annotator_blocks (campaign_id, annotator_id, reason) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING",
            assignment.campaign_id,
            annotator_id,
            reason,
        )
        .execute(&mut *tx)
        .await?;
    }
    if campaign.settings.ground_truth_from == crate::core::campaign::settings::GroundTruthFrom::Reconciled {
        crate::core::campaign::marks::mark_assignment(&mut tx, id).await?;
    }
    tx.commit().await?;
    Ok(done)
}
