//! One task of an annotator's own assignment, as the task page shows it:
//! the page a browser is sent to after every answer. It reads which items
//! have an answer (not the answers), picks the task (the one asked for, else
//! the first without an answer), then reads only what the page shows of it:
//! that task and the next one, the answer given and the answer under review.
//! Reading every answer and every payload of the questionnaire in one
//! statement (as [`super::own_view`] does for the API) cost PostgreSQL four
//! times the work.

use super::campaigns::Campaign;
use super::kept::Kept;
use super::states::AssignmentState;
use super::{Error, Result};
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
/// then the assignment's under `t_` names.
#[derive(sqlx::FromRow)]
struct Head {
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

/// Assignments kept at most by [`Presentations`] (~0.8 kB each when items
/// have no presentation of their own, as VTON's); past it, all are forgotten
/// and read again.
const PRESENTATIONS_KEPT: usize = 20_000;

/// Each assignment's presentation as read with its first page here (see
/// [`super::kept`]): reading it (a TOASTed JSON of every item) on every page
/// was a third of the page's first statement.
pub struct Presentations(Kept<Arc<[Entry]>>);

impl Default for Presentations {
    fn default() -> Self {
        Self(Kept::new(PRESENTATIONS_KEPT))
    }
}

/// One item of a presentation, with how it is shown (e.g. a choice order).
#[derive(serde::Deserialize)]
struct Entry {
    item: Uuid,
    #[serde(default)]
    presentation: Value,
}

/// The task `wanted` of the annotator's own assignment `id`, with its
/// campaign; `NotFound` when the assignment is not theirs. An expired
/// assignment (or one that `ran_out` of time just now) with every task
/// answered shows its first task: it takes no more answers, and the page
/// says so beside it.
///
/// Two small statements: the assignment with its campaign and which items
/// have an answer (and its presentation, unless `presentations` has it),
/// then the payloads and answers of the task shown and the next. One
/// statement picking the task in SQL cost PostgreSQL twice their work
/// together (its plan re-ran the pick for every use of it).
#[tracing::instrument(level = "debug", skip(pool, presentations))]
pub async fn read(
    pool: &PgPool,
    presentations: &Presentations,
    id: Uuid,
    annotator_id: Uuid,
    wanted: Wanted,
    ran_out: bool,
) -> Result<(Campaign, TaskRows)> {
    let known = presentations.0.get(id);
    let head: Head = sqlx::query_as(
        "SELECT c.*, a.state AS t_state, CASE WHEN $3 THEN a.presentation END AS t_presentation,
                b.review_of AS t_review_of,
                (SELECT coalesce(array_agg(r.item_id), '{}')
                   FROM responses r WHERE r.assignment_id = a.id) AS t_answered
           FROM assignments a
           JOIN campaigns c ON c.id = a.campaign_id
           JOIN batches b ON b.id = a.batch_id
          WHERE a.id = $1 AND a.annotator_id = $2",
    )
    .bind(id)
    .bind(annotator_id)
    .bind(known.is_none())
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("assignment"))?;
    let Head { campaign, t_state: state, t_presentation, t_review_of, t_answered } = head;
    let items = match (known, t_presentation) {
        (Some(items), _) => items,
        (None, Some(Json(Presentation { items }))) => {
            let items: Arc<[Entry]> = items.into();
            presentations.0.keep(id, items.clone());
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
    let shown: Vec<Uuid> = items[position - 1..].iter().take(2).map(|e| e.item).collect();
    let stored: Vec<(Uuid, Value, Option<Value>, Option<Value>)> = sqlx::query_as(
        "SELECT i.id, i.payload, mine.answer, reviewed.answer
           FROM items i
           LEFT JOIN responses mine ON mine.assignment_id = $2 AND mine.item_id = i.id
           LEFT JOIN responses reviewed ON reviewed.assignment_id = $3 AND reviewed.item_id = i.id
          WHERE i.id = ANY($1)",
    )
    .bind(&shown)
    .bind(id)
    .bind(t_review_of)
    .fetch_all(pool)
    .await?;
    let mut stored: HashMap<Uuid, (Value, Option<Value>, Option<Value>)> =
        stored.into_iter().map(|(item, payload, answer, reviewed)| (item, (payload, answer, reviewed))).collect();
    let mut entries = items.iter().skip(position - 1);
    if let Some(Entry { item, presentation }) = entries.next() {
        // An item gone from the database is shown without its payload.
        let (payload, answer, reviewed) = stored.remove(item).unwrap_or((Value::Null, None, None));
        rows.task = Some(StoredTask { item: *item, presentation: presentation.clone(), payload });
        (rows.answer, rows.under_review) = (answer, reviewed);
    }
    rows.next = entries.next().map(|Entry { item, presentation }| StoredTask {
        item: *item,
        presentation: presentation.clone(),
        payload: stored.remove(item).map_or(Value::Null, |(payload, _, _)| payload),
    });
    Ok((campaign, rows))
}
