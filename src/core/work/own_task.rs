//! One task of an annotator's own assignment, as the task page shows it:
//! the page a browser is sent to after every answer. The service picks the
//! task (the one asked for, else the first without an answer) from what it
//! keeps of the assignment, then reads only what the page shows: the
//! assignment, that task and the next one, the answer given and the answer
//! under review, in one statement shared by concurrent pages
//! ([`TaskReads`]). Reading every answer and every payload of the
//! questionnaire (as [`crate::core::work::own_view`] does for the API) cost PostgreSQL
//! four times the work.

use crate::core::campaign::campaigns::Campaign;
use crate::core::campaign::states::AssignmentState;
use crate::core::work::kept::Kept;
use crate::db::batcher::{in_input_order, Batcher};
use crate::db::statements::StatementPool;
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::types::Json;
use std::collections::HashSet;
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
/// [`crate::core::work::own_task`]).
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
    /// The same rows with each task made into what `show` makes of it, or
    /// the first refusal.
    pub fn try_map<U, E>(self, mut show: impl FnMut(T) -> Result<U, E>) -> Result<TaskRows<U>, E> {
        let Self { state, total, answered, position, task, next, answer, under_review } = self;
        Ok(TaskRows {
            state,
            total,
            answered,
            position,
            task: task.map(&mut show).transpose()?,
            next: next.map(show).transpose()?,
            answer,
            under_review,
        })
    }
}

/// A page's row: the assignment's campaign and that campaign's version (the
/// service keeps campaigns, see [`TaskReads::campaign`]), then the
/// assignment's and the shown tasks' columns, under `t_` names, numbered by
/// its request in the batch (`n`).
struct PageRow {
    n: i64,
    t_campaign: Uuid,
    t_campaign_version: i64,
    t_state: AssignmentState,
    /// `NULL` when it was not asked for (this service keeps it).
    t_presentation: Option<Json<Presentation>>,
    /// In a review assignment, the assignment under review; read with the
    /// presentation.
    t_review_of: Option<Uuid>,
    /// `NULL` when the count of answers is the one the service sent.
    t_answered: Option<Vec<Uuid>>,
    /// The shown task's payload (`NULL`: none asked for, or gone), the
    /// annotator's answer to it and the answer under review.
    t_payload: Option<Value>,
    t_answer: Option<Value>,
    t_under_review: Option<Value>,
    /// The next task's payload.
    t_next_payload: Option<Value>,
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

/// What never changes of an assignment, kept by the service: its items in
/// the annotator's order and, in a review assignment, the assignment under
/// review (a batch's `review_of` is set when the batch is made).
struct Layout {
    items: Arc<[Entry]>,
    review_of: Option<Uuid>,
}

/// Assignments whose presentation and answered items are kept at most
/// (~0.8 kB each when items have no presentation of their own, as VTON's,
/// and up to 0.8 kB of answered items); past it, all are forgotten and read
/// again.
const KEPT: usize = 20_000;
/// A page key's count of answered items when the service keeps none: no
/// assignment's count is negative, so they are read.
const NONE_KEPT: i32 = -1;
/// A page key's count of answered items when they are not wanted (a second
/// read, for the task only): no assignment holds that many answers.
const NOT_WANTED: i32 = i32::MAX;
/// Campaigns kept at most (a few hundred bytes each, and a configuration).
const KEPT_CAMPAIGNS: usize = 1_000;
/// Page reads per statement at most.
const MAX_BATCH: usize = 128;
/// Statements running at once.
const IN_FLIGHT: usize = 2;

/// The items of each assignment known to have an answer, as this service
/// last saw them: read with a task page, and grown by every answer stored
/// here ([`Self::stored`]). Answers are never deleted and never move (the
/// schema refuses both), so what is kept is always a subset of the answered
/// items; as large as the assignment's count of answers, it is all of them.
pub struct AnsweredItems(Kept<Arc<[Uuid]>>);

impl Default for AnsweredItems {
    fn default() -> Self {
        Self(Kept::new(KEPT))
    }
}

impl AnsweredItems {
    /// Forgets a submitted assignment's answered items.
    pub fn forget(&self, assignment: Uuid) {
        self.0.forget(assignment);
    }

    /// Notes an answer just stored (committed) for `item` in `assignment`,
    /// when the assignment's answered items are kept. Two at once may keep
    /// only one of them: the kept items then fall short of the count, and
    /// the next page reads them again.
    pub fn stored(&self, assignment: Uuid, item: Uuid) {
        if let Some(known) = self.0.get(assignment).filter(|known| !known.contains(&item)) {
            let mut grown = known.to_vec();
            grown.push(item);
            self.0.keep(assignment, grown.into());
        }
    }
}

/// What one page asks of the database.
#[derive(Clone, Copy)]
struct PageKey {
    id: Uuid,
    annotator_id: Uuid,
    /// Whether the presentation must be read (the service does not keep it).
    presentation: bool,
    /// How many answered items the service keeps; the answered items are
    /// read only when the assignment's count differs ([`NONE_KEPT`]: always,
    /// [`NOT_WANTED`]: never).
    answered: i32,
    /// The task to show and the next, as far as the service can tell.
    task: Option<Uuid>,
    next: Option<Uuid>,
    /// The assignment under review, when the service knows the assignment
    /// is a review (its answer to the task is read).
    review_of: Option<Uuid>,
    /// Whether the annotator's own answer to the task is read: only when the
    /// task is known to have one, so a page of a task not yet answered (the
    /// common case) looks up no answer.
    mine: bool,
}

/// Reads task pages, the page a browser is sent to after every answer; one
/// per service. In the common case a page is one statement, shared with the
/// pages asked for at the same time (a [`Batcher`] on held connections, as
/// the answers are; see [`crate::core::work::record`]): the service keeps what never
/// changes of each assignment (its presentation and the assignment under
/// review, a `Layout`) and its answered items ([`AnsweredItems`]), picks
/// the task from them, and reads the assignment with that task and the next,
/// the annotator's answer to it only when the task has one, the answer under
/// review only in a review, and the answered items only when the
/// assignment's count of answers shows the kept ones are out of date. When
/// the task picked then differs, or turns out to be answered (the first page
/// of an assignment here, an answer stored by another instance, a
/// questionnaire that ran out of time), a second statement reads the right
/// one. Two statements on every page, one of them reading every answer's
/// item, kept the browser's vote cycle from
/// scaling with the answers at 64 connections. The page's campaign is kept
/// too, and read again when its version (bumped by every change to the
/// row) is past the kept one's: decoding the campaign's row and
/// configuration on every page was a measurable part of the service's work.
pub struct TaskReads {
    pool: StatementPool,
    pages: Batcher<PageKey, Option<PageRow>>,
    layouts: Kept<Arc<Layout>>,
    answered: Arc<AnsweredItems>,
    campaigns: Kept<Arc<Campaign>>,
}

impl TaskReads {
    /// Page reads on `statements`, a pool that never holds a transaction
    /// (see [`crate::db::statements::StatementPool`]), told of stored answers through
    /// `answered` (the recorder's); the batching task starts with the first
    /// page.
    pub fn new(statements: StatementPool, answered: Arc<AnsweredItems>) -> Self {
        Self {
            pages: Batcher::on_held("task page", MAX_BATCH, IN_FLIGHT, statements.clone(), |conn, keys| {
                Box::pin(async move { read_pages(conn, &keys).await })
            }),
            pool: statements,
            layouts: Kept::new(KEPT),
            answered,
            campaigns: Kept::new(KEPT_CAMPAIGNS),
        }
    }

    /// Forgets what is kept of a submitted assignment: its pages are not
    /// shown again as tasks, and after a crowd campaign's rating the kept
    /// presentations and answered items would be held for good. The presentation is read again should a
    /// page of it be asked for.
    pub fn forget(&self, assignment: Uuid) {
        self.layouts.forget(assignment);
        self.answered.forget(assignment);
    }

    /// The task `wanted` of the annotator's own assignment `id`, with its
    /// campaign; `NotFound` when the assignment is not theirs. An expired
    /// assignment (or one that `ran_out` of time just now) with every task
    /// answered shows its first task: it takes no more answers, and the page
    /// says so beside it.
    #[tracing::instrument(level = "debug", skip(self))]
    pub async fn read(
        &self,
        id: Uuid,
        annotator_id: Uuid,
        wanted: Wanted,
        ran_out: bool,
    ) -> Result<(Arc<Campaign>, TaskRows)> {
        let (known, kept) = (self.layouts.get(id), self.answered.0.get(id));
        // The task nothing new would leave on the page.
        let (task, next, mine) = match (&known, &kept) {
            (Some(layout), Some(answered)) => {
                let (task, next) = shown_at(&layout.items, pick(&layout.items, answered, wanted, ran_out));
                (task, next, task.is_some_and(|t| answered.contains(&t)))
            }
            _ => (None, None, false),
        };
        let kept_count = kept.as_ref().map_or(NONE_KEPT, |a| i32::try_from(a.len()).unwrap_or(NONE_KEPT));
        let review_of = known.as_ref().and_then(|layout| layout.review_of);
        let key = PageKey {
            id,
            annotator_id,
            presentation: known.is_none(),
            answered: kept_count,
            task,
            next,
            review_of,
            mine,
        };
        let mut row = self.page(key).await?.ok_or(Error::NotFound("assignment"))?;
        let layout = match (known, row.t_presentation.take()) {
            (Some(layout), _) => layout,
            (None, Some(Json(Presentation { items }))) => {
                let layout = Arc::new(Layout { items: items.into(), review_of: row.t_review_of });
                self.layouts.keep(id, layout.clone());
                layout
            }
            (None, None) => return Err(Error::unexpected("an assignment's presentation was not read")),
        };
        let items = &layout.items;
        let answered = match (row.t_answered.take(), kept) {
            (Some(read), _) => {
                let read: Arc<[Uuid]> = read.into();
                self.answered.0.keep(id, read.clone());
                read
            }
            (None, Some(kept)) => kept,
            (None, None) => return Err(Error::unexpected("an assignment's answered items were not read")),
        };
        let position = pick(items, &answered, wanted, ran_out || row.t_state == AssignmentState::Expired);
        let (task, next) = shown_at(items, position);
        let mine = task.is_some_and(|t| answered.contains(&t));
        // A layout read just now had no task in the key, so a review's first
        // task always comes here, with the assignment under review now known.
        if (task, next) != (key.task, key.next) || (mine && !key.mine) {
            // Read again with the task now known (or known to be answered);
            // the rest of the page stays as first read (an answer stored
            // meanwhile shows on the next).
            let review_of = layout.review_of;
            let again = PageKey { presentation: false, answered: NOT_WANTED, task, next, review_of, mine, ..key };
            let shown = self.page(again).await?.ok_or(Error::NotFound("assignment"))?;
            (row.t_payload, row.t_answer, row.t_under_review, row.t_next_payload) =
                (shown.t_payload, shown.t_answer, shown.t_under_review, shown.t_next_payload);
        }
        let campaign = self.campaign(row.t_campaign, row.t_campaign_version).await?;
        Ok((campaign, page_rows(items, position, answered.len(), row)))
    }

    /// Campaign `id` as of `version` or later: the kept copy, else read (and
    /// kept). Versions only grow, so a kept copy at least as new as the
    /// page's row is as current as the page.
    async fn campaign(&self, id: Uuid, version: i64) -> Result<Arc<Campaign>> {
        if let Some(kept) = self.campaigns.get(id).filter(|kept| kept.version >= version) {
            return Ok(kept);
        }
        let read = Arc::new(crate::core::campaign::campaigns::get(self.pool.executor(), id).await?);
        self.campaigns.keep(id, read.clone());
        Ok(read)
    }

    /// One page's row, through the batch; alone, with the real error, when
    /// the batch failed (or the service is stopping).
    async fn page(&self, key: PageKey) -> Result<Option<PageRow>> {
        match self.pages.call(key).await {
            Some(row) => Ok(row),
            None => Ok(read_pages(self.pool.executor(), &[key]).await?.pop().flatten()),
        }
    }
}

/// The entries from the task at `position` on (none without a position).
fn from_position(items: &[Entry], position: Option<usize>) -> &[Entry] {
    position.map_or(&[], |p| &items[p - 1..])
}

/// The items of the task at `position` and the next, if any.
fn shown_at(items: &[Entry], position: Option<usize>) -> (Option<Uuid>, Option<Uuid>) {
    let mut shown = from_position(items, position).iter().map(|e| e.item);
    (shown.next(), shown.next())
}

/// The page's rows from its row as read, showing the task at `position` of
/// `items`, with `answered` of them answered.
fn page_rows(items: &[Entry], position: Option<usize>, answered: usize, row: PageRow) -> TaskRows {
    let mut entries = from_position(items, position).iter();
    // An item gone from the database is shown without its payload.
    let stored = |entry: &Entry, payload: Option<Value>| StoredTask {
        item: entry.item,
        presentation: entry.presentation.clone(),
        payload: payload.unwrap_or(Value::Null),
    };
    let task = entries.next().map(|entry| stored(entry, row.t_payload));
    let next = entries.next().map(|entry| stored(entry, row.t_next_payload));
    TaskRows {
        state: row.t_state,
        total: items.len(),
        answered,
        position,
        answer: task.as_ref().and(row.t_answer),
        under_review: task.as_ref().and(row.t_under_review),
        task,
        next,
    }
}

/// The 1-based position of the task a page shows: the one `wanted`, else
/// the first without an answer; with every task answered, none (the page
/// offers to submit), or the first when the assignment is `expired`.
fn pick(items: &[Entry], answered: &[Uuid], wanted: Wanted, expired: bool) -> Option<usize> {
    let total = items.len();
    let asked = match wanted {
        Wanted::FirstOpen => None,
        Wanted::At(position) => (1..=total).contains(&position).then_some(position),
        Wanted::Item(item) => items.iter().position(|e| e.item == item).map(|i| i + 1),
    };
    let answered: HashSet<&Uuid> = answered.iter().collect();
    let first_open = || items.iter().position(|e| !answered.contains(&e.item)).map(|i| i + 1);
    asked.or_else(first_open).or((expired && total > 0).then_some(1))
}

/// The pages asked for, in one statement: each assignment with its
/// campaign's id and version, its answered items when their count is not
/// the one sent, and the payloads and answers of the tasks named; one slot
/// per key in key order (`None`: not that annotator's, or gone). The answers
/// are subqueries under a `CASE` on the key (`k.mine`, `k.review_of`), which
/// PostgreSQL runs only when it holds: pages of a task not yet answered (the
/// common case) look up no answer. (Lateral joins with the same condition are
/// flattened into joins that filter after the lookup; that was slower.)
#[tracing::instrument(level = "debug", skip_all, fields(pages = keys.len()))]
async fn read_pages<'e>(db: impl sqlx::PgExecutor<'e>, keys: &[PageKey]) -> Result<Vec<Option<PageRow>>> {
    let rows = sqlx::query_as!(
        PageRow,
        r#"SELECT k.n AS "n!", c.id AS t_campaign, c.version AS t_campaign_version,
                  a.state AS "t_state: AssignmentState",
                  CASE WHEN k.presentation THEN a.presentation END AS "t_presentation: Json<Presentation>",
                  CASE WHEN k.presentation THEN (SELECT b.review_of FROM batches b WHERE b.id = a.batch_id) END
                      AS t_review_of,
                  CASE WHEN a.answered <> k.answered THEN
                      (SELECT coalesce(array_agg(r.item_id), '{}') FROM responses r WHERE r.assignment_id = a.id)
                  END AS t_answered,
                  t.payload AS "t_payload?",
                  CASE WHEN k.mine THEN
                      (SELECT r.answer FROM responses r WHERE r.assignment_id = a.id AND r.item_id = k.task)
                  END AS t_answer,
                  CASE WHEN k.review_of IS NOT NULL THEN
                      (SELECT r.answer FROM responses r WHERE r.assignment_id = k.review_of AND r.item_id = k.task)
                  END AS t_under_review,
                  nx.payload AS "t_next_payload?"
             FROM unnest($1::uuid[], $2::uuid[], $3::bool[], $4::int[], $5::uuid[], $6::uuid[], $7::uuid[], $8::bool[])
                      WITH ORDINALITY AS k(id, annotator_id, presentation, answered, task, next, review_of, mine, n)
             JOIN assignments a ON a.id = k.id AND a.annotator_id = k.annotator_id
             JOIN campaigns c ON c.id = a.campaign_id
             LEFT JOIN items t ON t.id = k.task
             LEFT JOIN items nx ON nx.id = k.next"#,
        &keys.iter().map(|k| k.id).collect::<Vec<_>>(),
        &keys.iter().map(|k| k.annotator_id).collect::<Vec<_>>(),
        &keys.iter().map(|k| k.presentation).collect::<Vec<_>>(),
        &keys.iter().map(|k| k.answered).collect::<Vec<_>>() as &[i32],
        &keys.iter().map(|k| k.task).collect::<Vec<_>>() as &[Option<Uuid>],
        &keys.iter().map(|k| k.next).collect::<Vec<_>>() as &[Option<Uuid>],
        &keys.iter().map(|k| k.review_of).collect::<Vec<_>>() as &[Option<Uuid>],
        &keys.iter().map(|k| k.mine).collect::<Vec<_>>(),
    )
    .fetch_all(db)
    .await?;
    Ok(in_input_order(keys.len(), rows.into_iter().map(|r| (r.n, r))))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn entries(n: usize) -> Vec<Entry> {
        (0..n).map(|_| Entry { item: Uuid::new_v4(), presentation: Value::Null }).collect()
    }

    #[test]
    fn a_page_shows_the_task_asked_for_else_the_first_open_else_none_or_the_first_when_expired() {
        let items = entries(4);
        let answered = [items[0].item, items[2].item];
        assert_eq!(pick(&items, &answered, Wanted::FirstOpen, false), Some(2));
        assert_eq!(pick(&items, &answered, Wanted::At(3), false), Some(3), "an answered task, asked for");
        assert_eq!(pick(&items, &answered, Wanted::At(9), false), Some(2), "out of range: the first open");
        assert_eq!(pick(&items, &answered, Wanted::Item(items[3].item), false), Some(4));
        assert_eq!(pick(&items, &answered, Wanted::Item(Uuid::new_v4()), false), Some(2), "not in it");
        let all: Vec<Uuid> = items.iter().map(|e| e.item).collect();
        assert_eq!(pick(&items, &all, Wanted::FirstOpen, false), None, "all answered: the page to submit");
        assert_eq!(pick(&items, &all, Wanted::FirstOpen, true), Some(1), "expired: its first task");
        assert_eq!(pick(&[], &[], Wanted::FirstOpen, true), None);
        assert_eq!(shown_at(&items, Some(4)), (Some(items[3].item), None));
        assert_eq!(shown_at(&items, Some(1)), (Some(items[0].item), Some(items[1].item)));
        assert_eq!(shown_at(&items, None), (None, None));
    }
}
