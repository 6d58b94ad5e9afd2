//! One task of an annotator's own assignment, as the task page shows it:
//! the page a browser is sent to after every answer. It reads which items
//! have an answer (not the answers), picks the task (the one asked for, else
//! the first without an answer), then reads only what the page shows of it:
//! that task and the next one, the answer given and the answer under review.
//! Reading every answer and every payload of the questionnaire in one
//! statement (as [`super::own_view`] does for the API) cost PostgreSQL four
//! times the work. Concurrent pages share their statements ([`TaskReads`]).

use super::campaigns::Campaign;
use super::kept::Kept;
use super::states::AssignmentState;
use super::{Error, Result};
use crate::db::batcher::{in_input_order, Batcher};
use serde_json::Value;
use sqlx::types::Json;
use sqlx::PgPool;
use std::collections::{HashMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// Which task the page asks for; any it cannot find falls back to the first
/// task without an answer.
#[derive(Debug, Clone, Copy)]
pub enum Wanted {
    /// The first task without an answer.
    FirstOpen,
    /// The task at this 1-based position.
    At(usize),
    /// The task of this item (by its id, not its handle).
    Item(Uuid),
}

/// A task as stored: its item, the item's presentation in this assignment
/// and its payload (before the kind makes it public).
#[derive(Debug)]
pub struct StoredTask {
    /// The item's id.
    pub item: Uuid,
    /// Its presentation in this assignment (e.g. a choice order), `null` if none.
    pub presentation: Value,
    /// Its payload; `null` for an item gone from the database.
    pub payload: Value,
}

/// What the task page shows of the assignment: its tasks as read
/// ([`StoredTask`]), or as shown to the annotator (see
/// [`super::work::own_task`]).
#[derive(Debug)]
pub struct TaskRows<T = StoredTask> {
    /// The assignment's state.
    pub state: AssignmentState,
    /// Tasks in the assignment.
    pub total: usize,
    /// Tasks with an answer.
    pub answered: usize,
    /// The 1-based position of the task shown; `None` when every task has an
    /// answer and none was asked for (the page then offers to submit).
    pub position: Option<usize>,
    /// The task shown.
    pub task: Option<T>,
    /// The task after it (the page preloads its images).
    pub next: Option<T>,
    /// The annotator's answer to the task shown, if any.
    pub answer: Option<Value>,
    /// In a review assignment, the answer under review for the task shown.
    pub under_review: Option<Value>,
}

impl<T> TaskRows<T> {
    /// The same rows with each task made into what `show` makes of it.
    pub fn map<U>(self, mut show: impl FnMut(T) -> U) -> TaskRows<U> {
        let Self { state, total, answered, position, task, next, answer, under_review } = self;
        TaskRows {
            state,
            total,
            answered,
            position,
            task: task.map(&mut show),
            next: next.map(show),
            answer,
            under_review,
        }
    }
}

/// The assignment's row: the campaign's columns as [`Campaign`] reads them,
/// then the assignment's under `t_` names, numbered by its request in the
/// batch (`n`).
#[derive(sqlx::FromRow)]
struct Head {
    n: i64,
    #[sqlx(flatten)]
    campaign: Campaign,
    t_state: AssignmentState,
    /// `NULL` when it was not asked for (this service knows it).
    t_presentation: Option<Json<Presentation>>,
    t_review_of: Option<Uuid>,
    t_answered: Vec<Uuid>,
}

/// An assignment's stored presentation: its items in the annotator's order.
#[derive(serde::Deserialize)]
struct Presentation {
    items: Vec<Entry>,
}

/// One item of a presentation, with how it is shown (e.g. a choice order).
#[derive(serde::Deserialize)]
struct Entry {
    item: Uuid,
    #[serde(default)]
    presentation: Value,
}

/// Assignments whose presentation is kept at most (~0.8 kB each when items
/// have no presentation of their own, as VTON's); past it, all are
/// forgotten and read again.
const PRESENTATIONS_KEPT: usize = 20_000;
/// Page reads per statement at most.
const MAX_BATCH: usize = 128;
/// Statements of each of the two reads running at once.
const IN_FLIGHT: usize = 2;

/// Which assignment a page asks for, by whom, and whether its presentation
/// must be read.
#[derive(Clone, Copy)]
struct HeadKey {
    id: Uuid,
    annotator_id: Uuid,
    presentation: bool,
}

/// The tasks a page shows (the task and the next), in their assignment,
/// with the assignment under review if any.
struct ShownKey {
    items: Vec<Uuid>,
    assignment_id: Uuid,
    review_of: Option<Uuid>,
}

/// One shown task as read: its request in the batch, the item, its
/// payload, the annotator's answer and the answer under review.
#[derive(sqlx::FromRow)]
struct ShownRow {
    n: i64,
    id: Uuid,
    payload: Value,
    answer: Option<Value>,
    reviewed: Option<Value>,
}

/// Reads task pages, the page a browser is sent to after every answer; one
/// per service. Its two statements go through [`Batcher`]s on held
/// connections, as the answers do (see [`super::record`]): at 64
/// connections the pages' own statements, one per page, were what kept a
/// browser's vote cycle from scaling with the answers. Each assignment's
/// presentation is kept from its first page ([`Kept`]): reading it (a
/// TOASTed JSON of every item) on every page was a third of the page's first
/// statement, and it never changes.
pub struct TaskReads {
    pool: PgPool,
    heads: Batcher<HeadKey, Option<Head>>,
    shown: Batcher<ShownKey, Vec<ShownRow>>,
    presentations: Kept<Arc<[Entry]>>,
}

impl TaskReads {
    /// Page reads on `statements`, a pool that never holds a transaction
    /// (see [`crate::db::statement_pool`]); the batching tasks start with
    /// the first page.
    pub fn new(statements: PgPool) -> Self {
        Self {
            heads: Batcher::on_held("task page assignment", MAX_BATCH, IN_FLIGHT, statements.clone(), |conn, keys| {
                Box::pin(async move { read_heads(conn, &keys).await })
            }),
            shown: Batcher::on_held("task page tasks", MAX_BATCH, IN_FLIGHT, statements.clone(), |conn, keys| {
                Box::pin(async move { read_shown(conn, &keys).await })
            }),
            pool: statements,
            presentations: Kept::new(PRESENTATIONS_KEPT),
        }
    }

    /// The task `wanted` of the annotator's own assignment `id`, with its
    /// campaign; `NotFound` when the assignment is not theirs. An expired
    /// assignment (or one that `ran_out` of time just now) with every task
    /// answered shows its first task: it takes no more answers, and the page
    /// says so beside it.
    ///
    /// Two small statements: the assignment with its campaign and which
    /// items have an answer (and its presentation, unless kept here), then
    /// the payloads and answers of the task shown and the next. One
    /// statement picking the task in SQL cost PostgreSQL twice their work
    /// together (its plan re-ran the pick for every use of it).
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn read(
        &self,
        id: Uuid,
        annotator_id: Uuid,
        wanted: Wanted,
        ran_out: bool,
    ) -> Result<(Campaign, TaskRows)> {
        let known = self.presentations.get(id);
        let key = HeadKey { id, annotator_id, presentation: known.is_none() };
        let head = match self.heads.call(key).await {
            Some(head) => head,
            // The batch failed (or the service is stopping): alone, with the real error.
            None => read_heads(&self.pool, &[key]).await?.pop().flatten(),
        };
        let Head { campaign, t_state: state, t_presentation, t_review_of, t_answered, .. } =
            head.ok_or(Error::NotFound("assignment"))?;
        let items = match (known, t_presentation) {
            (Some(items), _) => items,
            (None, Some(Json(Presentation { items }))) => {
                let items: Arc<[Entry]> = items.into();
                self.presentations.keep(id, items.clone());
                items
            }
            (None, None) => return Err(Error::unexpected("an assignment's presentation was not read")),
        };
        let total = items.len();
        let answered: HashSet<Uuid> = t_answered.into_iter().collect();
        let asked = match wanted {
            Wanted::FirstOpen => None,
            Wanted::At(position) => (1..=total).contains(&position).then_some(position),
            Wanted::Item(item) => items.iter().position(|e| e.item == item).map(|i| i + 1),
        };
        let first_open = || items.iter().position(|e| !answered.contains(&e.item)).map(|i| i + 1);
        let expired = ran_out || state == AssignmentState::Expired;
        let position = asked.or_else(first_open).or((expired && total > 0).then_some(1));
        let mut rows = TaskRows {
            state,
            total,
            answered: answered.len(),
            position,
            task: None,
            next: None,
            answer: None,
            under_review: None,
        };
        let Some(position) = position else { return Ok((campaign, rows)) };
        let key = || ShownKey {
            items: items[position - 1..].iter().take(2).map(|e| e.item).collect(),
            assignment_id: id,
            review_of: t_review_of,
        };
        let stored = match self.shown.call(key()).await {
            Some(stored) => stored,
            None => read_shown(&self.pool, &[key()]).await?.pop().unwrap_or_default(),
        };
        let mut stored: HashMap<Uuid, ShownRow> = stored.into_iter().map(|row| (row.id, row)).collect();
        let mut entries = items.iter().skip(position - 1);
        if let Some(Entry { item, presentation }) = entries.next() {
            // An item gone from the database is shown without its payload.
            let (payload, answer, reviewed) =
                stored.remove(item).map_or((Value::Null, None, None), |r| (r.payload, r.answer, r.reviewed));
            rows.task = Some(StoredTask { item: *item, presentation: presentation.clone(), payload });
            (rows.answer, rows.under_review) = (answer, reviewed);
        }
        rows.next = entries.next().map(|Entry { item, presentation }| StoredTask {
            item: *item,
            presentation: presentation.clone(),
            payload: stored.remove(item).map_or(Value::Null, |row| row.payload),
        });
        Ok((campaign, rows))
    }
}

/// The assignments pages ask for, with their campaigns and answered items,
/// in one statement; one slot per key in key order (`None`: not that
/// annotator's, or gone).
#[tracing::instrument(level = "debug", skip_all, fields(pages = keys.len()))]
async fn read_heads<'e>(db: impl sqlx::PgExecutor<'e>, keys: &[HeadKey]) -> Result<Vec<Option<Head>>> {
    let rows: Vec<Head> = sqlx::query_as(
        "SELECT k.n, c.*, a.state AS t_state, CASE WHEN k.presentation THEN a.presentation END AS t_presentation,
                b.review_of AS t_review_of,
                (SELECT coalesce(array_agg(r.item_id), '{}')
                   FROM responses r WHERE r.assignment_id = a.id) AS t_answered
           FROM unnest($1::uuid[], $2::uuid[], $3::bool[]) WITH ORDINALITY AS k(id, annotator_id, presentation, n)
           JOIN assignments a ON a.id = k.id AND a.annotator_id = k.annotator_id
           JOIN campaigns c ON c.id = a.campaign_id
           JOIN batches b ON b.id = a.batch_id",
    )
    .bind(keys.iter().map(|k| k.id).collect::<Vec<_>>())
    .bind(keys.iter().map(|k| k.annotator_id).collect::<Vec<_>>())
    .bind(keys.iter().map(|k| k.presentation).collect::<Vec<_>>())
    .fetch_all(db)
    .await?;
    Ok(in_input_order(keys.len(), rows.into_iter().map(|r| (r.n, r))))
}

/// The payloads and answers of the tasks pages show, in one statement; the
/// rows of each key in key order (none for an item gone from the database).
#[tracing::instrument(level = "debug", skip_all, fields(pages = keys.len()))]
async fn read_shown<'e>(db: impl sqlx::PgExecutor<'e>, keys: &[ShownKey]) -> Result<Vec<Vec<ShownRow>>> {
    // One input row per task: its item, its page's assignment and the one
    // under review, and its page's number.
    let (mut items, mut assignments, mut reviews, mut pages) = (vec![], vec![], vec![], vec![]);
    for (n, key) in (1i64..).zip(keys) {
        for item in &key.items {
            items.push(*item);
            assignments.push(key.assignment_id);
            reviews.push(key.review_of);
            pages.push(n);
        }
    }
    let rows: Vec<ShownRow> = sqlx::query_as(
        "SELECT k.n, i.id, i.payload, mine.answer, reviewed.answer AS reviewed
           FROM unnest($1::uuid[], $2::uuid[], $3::uuid[], $4::int8[]) AS k(item_id, assignment_id, review_of, n)
           JOIN items i ON i.id = k.item_id
           LEFT JOIN responses mine ON mine.assignment_id = k.assignment_id AND mine.item_id = i.id
           LEFT JOIN responses reviewed ON reviewed.assignment_id = k.review_of AND reviewed.item_id = i.id",
    )
    .bind(items)
    .bind(assignments)
    .bind(reviews)
    .bind(pages)
    .fetch_all(db)
    .await?;
    let mut out: Vec<Vec<ShownRow>> = keys.iter().map(|_| Vec::new()).collect();
    for row in rows {
        if let Some(page) = usize::try_from(row.n - 1).ok().and_then(|i| out.get_mut(i)) {
            page.push(row);
        }
    }
    Ok(out)
}
