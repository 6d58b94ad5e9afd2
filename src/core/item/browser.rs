//! The admin's data browser: a campaign's items, filtered and paged, with
//! their answers counted per item, and one item with every answer it got.
//!
//! Cheap filters (known answer, batch, unbatched, id search) are SQL on
//! `items`; the ones that depend on answers (answered or not, agreement,
//! exclusions, flags) read the campaign's answers once, grouped by item and
//! answer, and only when one of them is asked for: the default view counts
//! the answers of the page's items alone, through their batches.

use crate::error::Result;
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashMap;
use tracing::instrument;
use uuid::Uuid;

/// Which items to show. Every filter left `None` shows every item.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Filter {
    /// Only items in this batch (numbered from 1, in the order formed).
    pub batch: Option<i32>,
    /// Only items in this state.
    pub status: Option<Status>,
    /// Only items with (true) or without (false) a known answer (gold,
    /// sanity or attention check).
    pub known_answer: Option<bool>,
    /// Only items whose counted answers agree so.
    pub agreement: Option<Agreement>,
    /// Only items with (true) or without (false) an excluded answer.
    pub excluded: Option<bool>,
    /// Only items with (true) or without (false) an answer that raises one
    /// of the kind's flags (a broken image, "not sure").
    pub flagged: Option<bool>,
    /// Only items whose external id contains this text (any case).
    pub search: Option<String>,
    /// The order the matching items are listed in.
    pub sort: Sort,
}

impl Filter {
    /// Whether a filter depends on the items' answers, which then have to
    /// be counted over the whole campaign.
    fn reads_answers(&self) -> bool {
        self.status.is_some_and(|s| s != Status::Unbatched)
            || self.agreement.is_some()
            || self.excluded.is_some()
            || self.flagged.is_some()
            || self.sort != Sort::Id
    }
}

/// The order of the browser's items; ties keep the id order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Sort {
    /// By the importer's id.
    #[default]
    Id,
    /// Most counted answers first.
    MostAnswers,
    /// Fewest counted answers first.
    FewestAnswers,
    /// Least agreement first: the smallest share of counted answers that
    /// agree (items with fewer than two counted answers last).
    LeastAgreement,
    /// Most open flags first.
    MostFlagged,
    /// Most excluded answers first.
    MostExcluded,
    /// The most recently answered first (items without answers last).
    LastAnswer,
}

impl Sort {
    /// The key an item sorts by, smallest first.
    fn key(self, c: &Counts) -> (i64, i64) {
        match self {
            Self::Id => (0, 0),
            Self::MostAnswers => (-c.counted, 0),
            Self::FewestAnswers => (c.counted, 0),
            // The agreeing share modal / counted, in millionths: shares
            // closer than that tie (and keep the id order).
            Self::LeastAgreement => match c.agreement() {
                Some(_) => (0, c.modal * 1_000_000 / c.counted.max(1)),
                None => (1, 0),
            },
            Self::MostFlagged => (-c.flagged, 0),
            Self::MostExcluded => (-c.excluded, 0),
            Self::LastAnswer => match c.last {
                Some(t) => (0, -t.timestamp_micros()),
                None => (1, 0),
            },
        }
    }
}

/// Where an item stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Status {
    /// In no batch yet: nobody can be given it.
    Unbatched,
    /// No counted answer yet.
    Unanswered,
    /// At least one counted answer.
    Answered,
}

/// How an item's counted answers agree (two or more of them).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Agreement {
    /// Every counted answer is the same.
    Unanimous,
    /// At least two differ.
    Split,
}

/// The answers an item got, counted.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Counts {
    /// Answers that count (not excluded).
    pub counted: i64,
    /// Answers excluded by curation or a failed check.
    pub excluded: i64,
    /// Answers that raise a flag not dismissed since.
    pub flagged: i64,
    /// How many counted answers share the most common answer.
    pub modal: i64,
    /// When its last answer was given or changed (counted or not).
    pub last: Option<chrono::DateTime<chrono::Utc>>,
}

impl Counts {
    /// The agreement of two or more counted answers.
    pub fn agreement(&self) -> Option<Agreement> {
        (self.counted >= 2).then_some(if self.modal == self.counted { Agreement::Unanimous } else { Agreement::Split })
    }

    /// Whether the item passes the answer-dependent part of `filter`.
    fn passes(&self, filter: &Filter) -> bool {
        let status_ok = match filter.status {
            Some(Status::Unanswered) => self.counted == 0,
            Some(Status::Answered) => self.counted > 0,
            Some(Status::Unbatched) | None => true,
        };
        status_ok
            && filter.agreement.is_none_or(|a| self.agreement() == Some(a))
            && filter.excluded.is_none_or(|e| (self.excluded > 0) == e)
            && filter.flagged.is_none_or(|f| (self.flagged > 0) == f)
    }

    /// Adds one group of `n` identical answers, `flagged` of them raising
    /// an open flag, the last given or changed at `last`.
    fn add(&mut self, excluded: bool, n: i64, flagged: i64, last: Option<chrono::DateTime<chrono::Utc>>) {
        self.last = self.last.max(last);
        if excluded {
            self.excluded += n;
        } else {
            self.counted += n;
            self.modal = self.modal.max(n);
        }
        self.flagged += flagged;
    }
}

/// One item of a page of the browser.
#[derive(Debug, Clone)]
pub struct ItemRow {
    /// Item id.
    pub id: Uuid,
    /// The importer's id.
    pub external_id: String,
    /// Its payload (for thumbnails).
    pub payload: Value,
    /// Whether it has a known answer.
    pub known_answer: bool,
    /// The batches it is in.
    pub batches: Batches,
    /// Its answers, counted.
    pub counts: Counts,
}

/// A page of items and how many match in all.
#[derive(Debug, Clone)]
pub struct ItemPage {
    /// How many items match the filter.
    pub total: usize,
    /// The page's items, by external id.
    pub rows: Vec<ItemRow>,
}

/// The items matching `filter`, by external id, the rows `rows` picks once
/// their number is known (a page brought into range). `flags` are JSON
/// patterns an answer raising a flag contains (the kind's).
#[instrument(level = "debug", skip(pool, flags, rows))]
pub async fn page(
    pool: &PgPool,
    campaign_id: Uuid,
    flags: &[Value],
    filter: &Filter,
    rows: impl FnOnce(usize) -> std::ops::Range<usize>,
) -> Result<ItemPage> {
    let ids = matching(pool, campaign_id, flags, filter).await?;
    let total = ids.len();
    let range = rows(total);
    let shown: Vec<Uuid> = ids.get(range.start.min(total)..range.end.min(total)).unwrap_or_default().to_vec();
    let rows = rows_of(pool, &shown, flags).await?;
    Ok(ItemPage { total, rows })
}

/// Every item matching `filter`, in its order: what a page shows a slice
/// of, and what a bulk action acts on.
#[instrument(level = "debug", skip(pool, flags))]
pub async fn matching(pool: &PgPool, campaign_id: Uuid, flags: &[Value], filter: &Filter) -> Result<Vec<Uuid>> {
    let search = filter.search.as_deref().filter(|s| !s.is_empty()).map(like_pattern);
    let mut ids: Vec<Uuid> = sqlx::query_scalar(
        "SELECT i.id FROM items i
          WHERE i.campaign_id = $1
            AND ($2::bool IS NULL OR (i.gold IS NOT NULL) = $2)
            AND ($3::int IS NULL OR EXISTS (SELECT 1 FROM batch_items bi JOIN batches b ON b.id = bi.batch_id
                                             WHERE bi.item_id = i.id AND b.position + 1 = $3))
            AND (NOT $4 OR NOT EXISTS (SELECT 1 FROM batch_items bi WHERE bi.item_id = i.id))
            AND ($5::text IS NULL OR i.external_id ILIKE $5)
          ORDER BY i.external_id",
    )
    .bind(campaign_id)
    .bind(filter.known_answer)
    .bind(filter.batch)
    .bind(filter.status == Some(Status::Unbatched))
    .bind(search)
    .fetch_all(pool)
    .await?;
    if filter.reads_answers() {
        let all = counts_in_campaign(pool, campaign_id, flags, filter).await?;
        let none = Counts::default();
        ids.retain(|id| all.get(id).unwrap_or(&none).passes(filter));
        if filter.sort != Sort::Id {
            // Stable: ties keep the id order the statement gave.
            ids.sort_by_key(|id| filter.sort.key(all.get(id).unwrap_or(&none)));
        }
    }
    Ok(ids)
}

/// The rows of these items, in this order, their answers counted.
async fn rows_of(pool: &PgPool, shown: &[Uuid], flags: &[Value]) -> Result<Vec<ItemRow>> {
    let mut counts = counts_of_items(pool, shown, flags).await?;
    let rows = sqlx::query_as::<_, (Uuid, String, Value, bool, Vec<i32>, i64)>(
        "SELECT i.id, i.external_id, i.payload, i.gold IS NOT NULL,
                coalesce((array_agg(b.position + 1 ORDER BY b.position) FILTER (WHERE b.position IS NOT NULL))[1:$2],
                         '{}'),
                count(b.id)
           FROM items i
           LEFT JOIN batch_items bi ON bi.item_id = i.id
           LEFT JOIN batches b ON b.id = bi.batch_id
          WHERE i.id = ANY($1)
          GROUP BY i.id
          ORDER BY array_position($1, i.id)",
    )
    .bind(shown)
    .bind(Batches::LISTED)
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|(id, external_id, payload, known_answer, first, total)| ItemRow {
        counts: counts.remove(&id).unwrap_or_default(),
        id,
        external_id,
        payload,
        known_answer,
        batches: Batches { first, total },
    })
    .collect();
    Ok(rows)
}

/// The batches an item is in: the first few by number (from 1) and how
/// many in all (a shared sanity task is in every questionnaire).
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Batches {
    /// The first [`Batches::LISTED`] numbers.
    pub first: Vec<i32>,
    /// How many batches in all.
    pub total: i64,
}

impl Batches {
    /// How many batch numbers are listed.
    pub const LISTED: i32 = 10;

    /// In words: "none", "3, 7" or "1, 2, …, 10 and 12,520 more".
    pub fn words(&self) -> String {
        let listed = self.first.iter().map(i32::to_string).collect::<Vec<_>>().join(", ");
        let more = self.total - self.first.len() as i64;
        match (self.first.is_empty(), more > 0) {
            (true, _) => "none".to_owned(),
            (false, false) => listed,
            (false, true) => format!("{listed} and {more} more"),
        }
    }
}

/// A search text as an ILIKE pattern matching it anywhere, its own `%`,
/// `_` and `\` taken literally.
fn like_pattern(text: &str) -> String {
    let escaped = text.replace('\\', "\\\\").replace('%', "\\%").replace('_', "\\_");
    format!("%{escaped}%")
}

/// Grouped answers as the database returns them: item, excluded, how many
/// identical answers, how many of them raise a flag not dismissed since,
/// and when the last of them was given or changed.
type AnswerGroup = (Uuid, bool, i64, i64, Option<chrono::DateTime<chrono::Utc>>);

fn fold(groups: Vec<AnswerGroup>) -> HashMap<Uuid, Counts> {
    let mut counts: HashMap<Uuid, Counts> = HashMap::new();
    for (item, excluded, n, flagged, last) in groups {
        counts.entry(item).or_default().add(excluded, n, flagged, last);
    }
    counts
}

/// The grouped answers' columns (see [`AnswerGroup`]): `$2` holds the
/// kind's flag patterns; a flag counts while not dismissed after it was
/// raised (`d`: the item's dismissal).
const GROUP_COLUMNS: &str = "r.item_id, r.excluded_reason IS NOT NULL, count(*),
    count(*) FILTER (WHERE r.answer @> ANY($2::jsonb[]) AND (d.dismissed_at IS NULL OR r.updated_at > d.dismissed_at)),
    max(r.updated_at)";

/// Every item's answers in the campaign, counted as far as `filter` needs
/// to decide (the page's own rows are counted again, whole): answers are
/// grouped by their value only for an agreement filter, and a filter on
/// excluded answers alone reads just those (a partial index holds them):
/// grouping a crowd campaign's ratings by item and answer takes a while.
#[instrument(level = "debug", skip(pool, flags))]
async fn counts_in_campaign(
    pool: &PgPool,
    campaign_id: Uuid,
    flags: &[Value],
    filter: &Filter,
) -> Result<HashMap<Uuid, Counts>> {
    let by_answer = if filter.agreement.is_some() || filter.sort == Sort::LeastAgreement { ", r.answer" } else { "" };
    let excluded_only = filter.excluded.is_some()
        && filter.sort == Sort::Id
        && filter.agreement.is_none()
        && filter.flagged.is_none()
        && filter.status.is_none_or(|s| s == Status::Unbatched);
    let only = if excluded_only { "AND r.excluded_reason IS NOT NULL" } else { "" };
    let groups = sqlx::query_as::<_, AnswerGroup>(&format!(
        "SELECT {GROUP_COLUMNS}
           FROM responses r LEFT JOIN flag_dismissals d ON d.item_id = r.item_id
          WHERE r.campaign_id = $1 {only}
          GROUP BY r.item_id, r.excluded_reason IS NOT NULL{by_answer}"
    ))
    .bind(campaign_id)
    .bind(flags)
    .fetch_all(pool)
    .await?;
    Ok(fold(groups))
}

/// These items' answers, counted, read through their batches' assignments
/// (the unique index on an assignment's answer to an item), so a page
/// costs the same in a campaign of any size.
async fn counts_of_items(pool: &PgPool, items: &[Uuid], flags: &[Value]) -> Result<HashMap<Uuid, Counts>> {
    let groups = sqlx::query_as::<_, AnswerGroup>(&format!(
        "SELECT {GROUP_COLUMNS}
           FROM batch_items bi
           JOIN assignments a ON a.batch_id = bi.batch_id
           JOIN responses r ON r.assignment_id = a.id AND r.item_id = bi.item_id
           LEFT JOIN flag_dismissals d ON d.item_id = r.item_id
          WHERE bi.item_id = ANY($1)
          GROUP BY r.item_id, r.answer, r.excluded_reason IS NOT NULL"
    ))
    .bind(items)
    .bind(flags)
    .fetch_all(pool)
    .await?;
    Ok(fold(groups))
}

/// One item with everything the admin may see of it.
#[derive(Debug, Clone)]
pub struct ItemDetail {
    /// The item, its known answer included.
    pub item: crate::core::item::items::Item,
    /// The batches it is in.
    pub batches: Batches,
    /// Its answers, counted.
    pub counts: Counts,
    /// The answers on this page, oldest first (of `counts`' total, excluded
    /// ones included).
    pub answers: Vec<AnswerRow>,
    /// Who last dismissed its flags, and when.
    pub dismissed: Option<(String, chrono::DateTime<chrono::Utc>)>,
}

/// One answer to an item.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct AnswerRow {
    /// The response's id.
    pub id: Uuid,
    /// Who answered: an expert's name or a crowd worker's platform id.
    pub annotator: String,
    /// The batch it was answered in, numbered from 1.
    pub batch: i32,
    /// Whether it reviews another annotator's answer.
    pub review: bool,
    /// Whether its questionnaire was submitted.
    pub submitted: bool,
    /// The answer as stored.
    pub answer: Value,
    /// Time on the task, when the page measured it.
    pub time_on_task_ms: Option<i32>,
    /// When it was given.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was last changed (equal to `created_at` if never).
    pub updated_at: chrono::DateTime<chrono::Utc>,
    /// Why it does not count, if it does not.
    pub excluded_reason: Option<String>,
}

/// One item of the campaign with the answers `rows` picks once their
/// number is known (a page); `NotFound` for an item of another campaign.
#[instrument(level = "debug", skip(pool, flags, rows))]
pub async fn item(
    pool: &PgPool,
    campaign_id: Uuid,
    item_id: Uuid,
    flags: &[Value],
    rows: impl FnOnce(usize) -> std::ops::Range<usize>,
) -> Result<ItemDetail> {
    let item = crate::core::item::items::get_in(pool, campaign_id, item_id).await?;
    let (first, total) = sqlx::query_as::<_, (Vec<i32>, i64)>(
        "SELECT coalesce((array_agg(b.position + 1 ORDER BY b.position))[1:$2], '{}'), count(*)
           FROM batch_items bi JOIN batches b ON b.id = bi.batch_id WHERE bi.item_id = $1",
    )
    .bind(item_id)
    .bind(Batches::LISTED)
    .fetch_one(pool)
    .await?;
    let counts = counts_of_items(pool, &[item_id], flags).await?.remove(&item_id).unwrap_or_default();
    let range = rows((counts.counted + counts.excluded) as usize);
    let answers = sqlx::query_as::<_, AnswerRow>(
        "SELECT r.id, coalesce(u.name, u.external_id, u.id::text) AS annotator, b.position + 1 AS batch,
                b.review_of IS NOT NULL AS review, a.state = 'completed' AS submitted,
                r.answer, r.time_on_task_ms, r.created_at, r.updated_at, r.excluded_reason
           FROM batch_items bi
           JOIN batches b ON b.id = bi.batch_id
           JOIN assignments a ON a.batch_id = bi.batch_id
           JOIN responses r ON r.assignment_id = a.id AND r.item_id = bi.item_id
           JOIN users u ON u.id = r.annotator_id
          WHERE bi.item_id = $1
          ORDER BY r.created_at, r.id
          OFFSET $2 LIMIT $3",
    )
    .bind(item_id)
    .bind(range.start as i64)
    .bind(range.len() as i64)
    .fetch_all(pool)
    .await?;
    let dismissed = sqlx::query_as::<_, (String, chrono::DateTime<chrono::Utc>)>(
        "SELECT coalesce(u.name, u.id::text), d.dismissed_at FROM flag_dismissals d JOIN users u ON u.id = d.dismissed_by
          WHERE d.item_id = $1",
    )
    .bind(item_id)
    .fetch_optional(pool)
    .await?;
    Ok(ItemDetail { item, batches: Batches { first, total }, counts, answers, dismissed })
}

/// Dismisses the item's open flags (the admin looked and found nothing to
/// do); a flag raised later is open again. Returns how many answers' flags
/// were open. Changes no answer and no ground truth.
#[instrument(level = "debug", skip(pool, flags))]
pub async fn dismiss_flags(pool: &PgPool, campaign_id: Uuid, item_id: Uuid, flags: &[Value], by: Uuid) -> Result<i64> {
    crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    crate::core::item::items::ensure_in_campaign(pool, campaign_id, item_id).await?;
    let open = counts_of_items(pool, &[item_id], flags).await?.remove(&item_id).unwrap_or_default().flagged;
    if open > 0 {
        sqlx::query!(
            "INSERT INTO flag_dismissals (item_id, dismissed_by) VALUES ($1, $2)
             ON CONFLICT (item_id) DO UPDATE SET dismissed_by = EXCLUDED.dismissed_by, dismissed_at = now()",
            item_id,
            by,
        )
        .execute(pool)
        .await?;
    }
    Ok(open)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn counts_say_agreement_only_with_two_counted_answers() {
        let mut c = Counts::default();
        c.add(false, 1, 0, None);
        assert_eq!(c.agreement(), None);
        c.add(true, 4, 0, None);
        assert_eq!((c.agreement(), c.excluded), (None, 4), "excluded answers do not count towards agreement");
        c.add(false, 1, 0, None);
        assert_eq!(c.agreement(), Some(Agreement::Split));
        let mut same = Counts::default();
        same.add(false, 3, 3, None);
        assert_eq!((same.agreement(), same.flagged, same.modal), (Some(Agreement::Unanimous), 3, 3));
    }

    #[test]
    fn answer_filters_combine() {
        let split = Counts { counted: 3, excluded: 1, flagged: 0, modal: 2, last: None };
        let pass = |f: Filter| split.passes(&f);
        assert!(pass(Filter::default()));
        assert!(pass(Filter { agreement: Some(Agreement::Split), excluded: Some(true), ..Default::default() }));
        assert!(!pass(Filter { agreement: Some(Agreement::Unanimous), ..Default::default() }));
        assert!(!pass(Filter { status: Some(Status::Unanswered), ..Default::default() }));
        assert!(!pass(Filter { flagged: Some(true), ..Default::default() }));
        assert!(Counts::default().passes(&Filter { status: Some(Status::Unanswered), ..Default::default() }));
        assert!(!Filter { status: Some(Status::Unbatched), ..Default::default() }.reads_answers());
    }

    #[test]
    fn long_batch_lists_are_cut_short() {
        let words = |first: Vec<i32>, total| Batches { first, total }.words();
        assert_eq!(words(vec![], 0), "none");
        assert_eq!(words(vec![3, 7], 2), "3, 7");
        assert_eq!(words((1..=10).collect(), 12_530), "1, 2, 3, 4, 5, 6, 7, 8, 9, 10 and 12520 more");
    }

    #[test]
    fn search_text_is_taken_literally() {
        assert_eq!(like_pattern("q1_c%0\\"), "%q1\\_c\\%0\\\\%");
    }

    #[test]
    fn sort_keys_put_the_asked_items_first() {
        let c = |counted, modal, excluded, flagged| Counts { counted, modal, excluded, flagged, last: None };
        let (unanimous, split, single) = (c(3, 3, 0, 0), c(3, 2, 1, 1), c(1, 1, 0, 0));
        let key = |s: Sort, x: &Counts| s.key(x);
        assert!(key(Sort::LeastAgreement, &split) < key(Sort::LeastAgreement, &unanimous));
        assert!(
            key(Sort::LeastAgreement, &unanimous) < key(Sort::LeastAgreement, &single),
            "one answer agrees with nothing"
        );
        assert!(key(Sort::MostAnswers, &unanimous) < key(Sort::MostAnswers, &single));
        assert!(key(Sort::FewestAnswers, &single) < key(Sort::FewestAnswers, &unanimous));
        assert!(key(Sort::MostFlagged, &split) < key(Sort::MostFlagged, &unanimous));
        assert!(key(Sort::MostExcluded, &split) < key(Sort::MostExcluded, &unanimous));
        let at = |s: &str| Some(chrono::DateTime::parse_from_rfc3339(s).expect("time").to_utc());
        let (older, newer) = (
            Counts { last: at("2026-12-01T10:00:00Z"), ..single.clone() },
            Counts { last: at("2026-12-02T10:00:00Z"), ..single.clone() },
        );
        assert!(key(Sort::LastAnswer, &newer) < key(Sort::LastAnswer, &older), "the most recent first");
        assert!(key(Sort::LastAnswer, &older) < key(Sort::LastAnswer, &Counts::default()), "never answered last");
    }
}
