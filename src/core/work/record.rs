//! The hot path of annotation: storing answers at the rate crowds send them.
//! One statement locks the assignment, checks that it is the annotator's own
//! and still active and that the item is in its batch, inserts the answer,
//! renews the lease only when it is near its end, and counts progress. Before
//! it, the answer is validated by its kind: against the item's payload, read
//! in one query with the assignment's campaign, for kinds whose answers
//! depend on the item; for the others (ratings, labels) without reading
//! anything once the assignment's owner and kind are known (they never
//! change, so they are remembered). Both statements go through a [`Batcher`],
//! so concurrent answers share statements (group commit), on connections
//! held for them ([`crate::db::held::Held`]: no round trip to test a
//! connection on every return to the pool); each is acknowledged only after
//! its statement returned. Retries and changed answers (rare) take the full
//! path in [`crate::core::work::responses::submit`], with the same rules.

use crate::core::campaign::states::AssignmentState;
use crate::core::kind::contract::TaskKind;
use crate::core::work::assignment_progress::AssignmentProgress;
use crate::core::work::assignments;
use crate::core::work::kept::Kept;
use crate::core::work::own_task::AnsweredItems;
use crate::core::work::responses::{self, Outcome, Response, Submission};
use crate::core::Registry;
use crate::db::batcher::{in_input_order, Batcher};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashMap;
use std::sync::Arc;
use uuid::Uuid;

/// Answers per statement at most.
const MAX_BATCH: usize = 128;
/// Validation reads running at once.
const IN_FLIGHT: usize = 2;
/// Storing statements running at once: one, so that every answer waiting
/// joins the next statement (measured: fewer, fuller statements store more
/// answers per second than two half-full ones running side by side).
const WRITES_IN_FLIGHT: usize = 1;
/// Assignments whose owner and kind are remembered, at most (the memory is
/// cleared when full: a bound, not an LRU; about 100 bytes each).
const OWNERS_KEPT: usize = 100_000;

/// An assignment's items as (handle, id), sorted by handle.
type ItemsByHandle = Arc<[(Uuid, Uuid)]>;

/// What one answer's validation needs, read with the annotator's identity.
#[derive(Clone, Copy)]
struct ReadKey {
    assignment_id: Uuid,
    annotator_id: Uuid,
    item_id: Uuid,
}

struct Context {
    n: i64,
    state: AssignmentState,
    kind: String,
    payload: Option<Value>,
    /// Items in the assignment's batch.
    total: i64,
}

/// One validated answer to insert.
struct Write {
    assignment_id: Uuid,
    annotator_id: Uuid,
    response_id: Uuid,
    item_id: Uuid,
    answer: Value,
    time_on_task_ms: Option<i32>,
}

struct WrittenRow {
    n: i64,
    state: AssignmentState,
    in_batch: bool,
    inserted: bool,
    created_at: Option<DateTime<Utc>>,
    answered_before: i64,
}

/// What the statement did with one answer.
struct Written {
    state: AssignmentState,
    /// Whether the item is in the assignment's batch.
    in_batch: bool,
    /// The stored response, when this statement inserted it.
    inserted: Option<Response>,
    answered: i64,
}

/// What never changes about an assignment once it exists, remembered from
/// its first answer here: whose it is, its kind, and how many items its
/// batch holds (a batch's items are fixed when it is formed).
#[derive(Clone, Copy)]
struct Owner {
    annotator_id: Uuid,
    kind: &'static dyn TaskKind,
    total: i64,
}

/// Stores answers; one per service, shared by its handlers.
pub struct Recorder {
    pool: PgPool,
    reads: Batcher<ReadKey, Option<Context>>,
    writes: Batcher<Write, Option<Written>>,
    /// Each assignment's owner, kind and size, as read with its first answer
    /// here (none ever changes, so every instance may keep its own).
    owners: Kept<Owner>,
    /// Each assignment's items as (handle, id), sorted by handle, read with
    /// its first answer here: a batch's items never change. (A sorted list
    /// takes well under half of a map by handle and by id.)
    items: Kept<ItemsByHandle>,
    /// Told of every answer stored here, for the task pages (see
    /// [`crate::core::work::own_task::TaskReads`]).
    answered: Arc<AnsweredItems>,
}

impl Recorder {
    /// A recorder on this pool; its single statements go through
    /// `statements`, a pool that never holds a transaction (its batching
    /// tasks start with the first answer); each answer stored is noted in
    /// `answered`.
    pub fn new(pool: PgPool, statements: crate::db::statements::StatementPool, answered: Arc<AnsweredItems>) -> Self {
        Self {
            pool,
            reads: Batcher::on_held("answer context", MAX_BATCH, IN_FLIGHT, statements.clone(), |conn, keys| {
                Box::pin(async move { read(conn, &keys).await })
            }),
            writes: Batcher::on_held("answer insert", MAX_BATCH, WRITES_IN_FLIGHT, statements, |conn, writes| {
                Box::pin(write(conn, writes))
            }),
            owners: Kept::new(OWNERS_KEPT),
            items: Kept::new(OWNERS_KEPT),
            answered,
        }
    }

    /// Forgets what is kept of a submitted assignment (its owner and items;
    /// its answered items are the task pages' to forget, see
    /// [`crate::core::work::own_task::TaskReads::forget`]): nothing more is stored in
    /// it, and kept for every questionnaire of a crowd campaign they would
    /// be held for good. An answer sent after all is
    /// refused as before, with the assignment read again.
    pub fn forget(&self, assignment: Uuid) {
        self.owners.forget(assignment);
        self.items.forget(assignment);
    }

    /// The item an answer names: by its handle in the assignment (what
    /// annotators are given) or by its id; unchanged when neither (the
    /// storing statement then says it is not in the batch).
    pub async fn item_named(&self, assignment_id: Uuid, named: Uuid) -> Result<Uuid> {
        let known = self.items.get(assignment_id);
        let items = match known {
            Some(items) => items,
            None => {
                let ids: Vec<Uuid> = sqlx::query_scalar!(
                    "SELECT bi.item_id FROM assignments a JOIN batch_items bi ON bi.batch_id = a.batch_id WHERE a.id = $1",
                    assignment_id
                )
                .fetch_all(&self.pool)
                .await?;
                let mut by_handle: Vec<(Uuid, Uuid)> =
                    ids.iter().map(|id| (crate::core::work::handles::handle(assignment_id, *id), *id)).collect();
                by_handle.sort_unstable();
                let items: ItemsByHandle = by_handle.into();
                self.items.keep(assignment_id, items.clone());
                items
            }
        };
        // A handle names its item; anything else (an id) stands as it is.
        Ok(items.binary_search_by_key(&named, |&(handle, _)| handle).map_or(named, |i| items[i].1))
    }

    /// The pool answers are stored in.
    pub fn pool(&self) -> &PgPool {
        &self.pool
    }

    /// Stores an answer in the annotator's own assignment; the stored
    /// response, what happened, and the progress after it.
    pub async fn record(
        &self,
        kinds: &Registry,
        assignment_id: Uuid,
        annotator_id: Uuid,
        sub: &Submission,
    ) -> Result<(Response, Outcome, AssignmentProgress)> {
        let item_id = self.item_named(assignment_id, sub.item_id).await?;
        let (answer, total) = match self.kind_answering_alone(assignment_id, annotator_id) {
            Some(owner) => (responses::checked_answer(owner.kind, None, sub)?, owner.total),
            None => self.validate_with_item(kinds, assignment_id, annotator_id, item_id, sub).await?,
        };
        let write_of = |answer: Value| Write {
            assignment_id,
            annotator_id,
            response_id: Uuid::new_v4(),
            item_id,
            answer,
            time_on_task_ms: sub.time_on_task_ms,
        };
        let written = match self.writes.call(write_of(answer.clone())).await {
            Some(written) => written,
            // The batch failed (or the service is stopping): alone, with the real error.
            None => write(&self.pool, vec![write_of(answer)]).await?.pop().flatten(),
        }
        .ok_or(Error::NotFound("assignment"))?;
        if !written.in_batch {
            return Err(responses::not_in_batch());
        }
        match (written.inserted, written.state) {
            (Some(response), _) => {
                metrics::counter!("atelier_responses_stored_total").increment(1);
                self.answered.stored(assignment_id, item_id);
                Ok((response, Outcome::Created, AssignmentProgress { answered: written.answered, total }))
            }
            (None, AssignmentState::Expired) => Err(Error::lease_expired()),
            // Answered before (a retry or a change), or submitted meanwhile:
            // the full path decides, with the same rules.
            (None, _) => {
                let assignment = assignments::get_own(&self.pool, assignment_id, annotator_id).await?;
                // The full path gets the item by its id (a rare path: the copy is fine).
                let sub = Submission { item_id, ..sub.clone() };
                let (response, outcome) = responses::submit(&self.pool, kinds, &assignment, &sub).await?;
                if outcome == Outcome::Created {
                    self.answered.stored(assignment_id, item_id);
                }
                let progress = crate::core::work::assignment_progress::of_assignment(
                    &self.pool,
                    assignment_id,
                    assignment.batch_id,
                )
                .await?;
                Ok((response, outcome, progress))
            }
        }
    }

    /// The kind of the annotator's own assignment: remembered from an
    /// earlier answer, else read with its campaign in one query (the
    /// browser's form is read by the kind before the answer is recorded).
    pub async fn kind_of(
        &self,
        kinds: &Registry,
        assignment_id: Uuid,
        annotator_id: Uuid,
    ) -> Result<&'static dyn TaskKind> {
        let remembered = self.owners.get(assignment_id);
        if let Some(owner) = remembered.filter(|o| o.annotator_id == annotator_id) {
            return Ok(owner.kind);
        }
        let kind: Option<String> = sqlx::query_scalar!(
            "SELECT c.kind FROM assignments a JOIN campaigns c ON c.id = a.campaign_id
             WHERE a.id = $1 AND a.annotator_id = $2",
            assignment_id,
            annotator_id
        )
        .fetch_optional(&self.pool)
        .await?;
        let kind = kind.ok_or(Error::NotFound("assignment"))?;
        kinds.find(&kind).ok_or_else(|| Error::unexpected(format!("campaign of unknown kind `{kind}`")))
    }

    /// The annotator's own assignment as remembered here, when its kind
    /// validates answers without their item.
    fn kind_answering_alone(&self, assignment_id: Uuid, annotator_id: Uuid) -> Option<Owner> {
        let owner = self.owners.get(assignment_id)?;
        (owner.annotator_id == annotator_id && !owner.kind.about().answer_reads_item).then_some(owner)
    }

    /// Validates the answer against its item, read with the assignment's
    /// campaign (which also tells whether the assignment is the annotator's);
    /// the valid answer and the number of items in the batch.
    async fn validate_with_item(
        &self,
        kinds: &Registry,
        assignment_id: Uuid,
        annotator_id: Uuid,
        item_id: Uuid,
        sub: &Submission,
    ) -> Result<(Value, i64)> {
        let key = ReadKey { assignment_id, annotator_id, item_id };
        let ctx = match self.reads.call(key).await {
            Some(ctx) => ctx,
            None => read(&self.pool, &[key]).await?.pop().flatten(),
        }
        .ok_or(Error::NotFound("assignment"))?;
        let kind = kinds
            .find(&ctx.kind)
            .ok_or_else(|| Error::unexpected(format!("campaign of unknown kind `{}`", ctx.kind)))?;
        self.owners.keep(assignment_id, Owner { annotator_id, kind, total: ctx.total });
        if ctx.state == AssignmentState::Expired {
            return Err(Error::lease_expired());
        }
        let payload = ctx.payload.ok_or_else(responses::not_in_batch)?;
        Ok((responses::checked_answer(kind, Some(&payload), sub)?, ctx.total))
    }
}

/// Validation context for each key, in the keys' order (`None`: not the
/// annotator's assignment).
#[tracing::instrument(level = "debug", skip_all, fields(answers = keys.len()))]
async fn read<'e>(db: impl sqlx::PgExecutor<'e>, keys: &[ReadKey]) -> Result<Vec<Option<Context>>> {
    let rows = sqlx::query_as!(
        Context,
        r#"SELECT k.n AS "n!", a.state AS "state: AssignmentState", c.kind,
                  (SELECT i.payload FROM batch_items bi JOIN items i ON i.id = bi.item_id
                    WHERE bi.batch_id = a.batch_id AND bi.item_id = k.item_id) AS payload,
                  (SELECT count(*) FROM batch_items bi WHERE bi.batch_id = a.batch_id) AS "total!"
             FROM unnest($1::uuid[], $2::uuid[], $3::uuid[]) WITH ORDINALITY AS k(assignment_id, annotator_id, item_id, n)
             JOIN assignments a ON a.id = k.assignment_id AND a.annotator_id = k.annotator_id
             JOIN campaigns c ON c.id = a.campaign_id"#,
        &keys.iter().map(|k| k.assignment_id).collect::<Vec<_>>(),
        &keys.iter().map(|k| k.annotator_id).collect::<Vec<_>>(),
        &keys.iter().map(|k| k.item_id).collect::<Vec<_>>(),
    )
    .fetch_all(db)
    .await?;
    Ok(in_input_order(keys.len(), rows.into_iter().map(|r| (r.n, r))))
}

/// Inserts the answers whose assignments are the annotator's, active, and
/// hold the item, in one statement; what happened to each, in input order
/// (`None`: not the annotator's assignment, or gone).
#[tracing::instrument(level = "debug", skip_all, fields(answers = writes.len()))]
async fn write<'e>(db: impl sqlx::PgExecutor<'e>, writes: Vec<Write>) -> Result<Vec<Option<Written>>> {
    let rows = sqlx::query_as!(
        WrittenRow,
        r#"WITH input AS (
             SELECT * FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::uuid[], $5::jsonb[], $6::int[])
                 WITH ORDINALITY AS t(assignment_id, annotator_id, response_id, item_id, answer, time_ms, n)),
              a AS (SELECT s.id, s.state, s.campaign_id, s.annotator_id, s.batch_id, s.leased_until, s.answered,
                           c.lease_minutes
                    FROM assignments s JOIN campaigns c ON c.id = s.campaign_id
                    WHERE s.id IN (SELECT assignment_id FROM input) ORDER BY s.id FOR UPDATE OF s),
              own AS (SELECT i.*, a.state, a.campaign_id, a.batch_id, a.leased_until, a.lease_minutes, a.answered,
                             EXISTS (SELECT 1 FROM batch_items b WHERE b.batch_id = a.batch_id AND b.item_id = i.item_id)
                                 AS in_batch
                      FROM input i JOIN a ON a.id = i.assignment_id AND a.annotator_id = i.annotator_id),
              ins AS (INSERT INTO responses (id, assignment_id, campaign_id, item_id, annotator_id, answer, time_on_task_ms)
                      SELECT o.response_id, o.assignment_id, o.campaign_id, o.item_id, o.annotator_id, o.answer, o.time_ms
                      FROM own o WHERE o.state = 'active' AND o.in_batch ORDER BY o.n
                      ON CONFLICT (assignment_id, item_id) DO NOTHING
                      RETURNING id, created_at),
              lease AS (UPDATE assignments s SET leased_until = now() + make_interval(mins => o.lease_minutes)
                        FROM (SELECT DISTINCT assignment_id, lease_minutes, leased_until FROM own
                              WHERE state = 'active' AND in_batch) o
                        WHERE s.id = o.assignment_id
                          AND o.leased_until < now() + make_interval(mins => o.lease_minutes) / 2
                        RETURNING 1)
         SELECT o.n AS "n!", o.state AS "state!: AssignmentState", o.in_batch AS "in_batch!",
                ins.id IS NOT NULL AS "inserted!", ins.created_at AS "created_at?: crate::db::Time",
                o.answered::bigint AS "answered_before!"
         FROM own o LEFT JOIN ins ON ins.id = o.response_id"#,
        &writes.iter().map(|w| w.assignment_id).collect::<Vec<_>>(),
        &writes.iter().map(|w| w.annotator_id).collect::<Vec<_>>(),
        &writes.iter().map(|w| w.response_id).collect::<Vec<_>>(),
        &writes.iter().map(|w| w.item_id).collect::<Vec<_>>(),
        &writes.iter().map(|w| &w.answer).collect::<Vec<_>>() as &[&Value],
        &writes.iter().map(|w| w.time_on_task_ms).collect::<Vec<_>>() as &[Option<i32>],
    )
    .fetch_all(db)
    .await?;
    let mut rows = in_input_order(writes.len(), rows.into_iter().map(|r| (r.n, r)));
    // The counts were read before the statement's own inserts (its trigger
    // counts them after): an assignment's k-th answer stored here is its
    // (before + k)-th.
    let mut stored_here: HashMap<Uuid, i64> = HashMap::new();
    Ok(writes
        .into_iter()
        .zip(rows.iter_mut())
        .map(|(w, row)| {
            let row = row.take()?;
            let inserted = row.inserted.then(|| {
                let now = row.created_at.unwrap_or_else(Utc::now);
                Response {
                    id: w.response_id,
                    assignment_id: w.assignment_id,
                    item_id: w.item_id,
                    annotator_id: w.annotator_id,
                    answer: w.answer,
                    time_on_task_ms: w.time_on_task_ms,
                    created_at: now,
                    updated_at: now,
                    excluded_reason: None,
                }
            });
            let here = stored_here.entry(w.assignment_id).or_default();
            if inserted.is_some() {
                *here += 1;
            }
            Some(Written { state: row.state, in_batch: row.in_batch, answered: row.answered_before + *here, inserted })
        })
        .collect())
}
