//! The data browser: a campaign's items as thumbnails, filtered (batch,
//! status, known answer, agreement, exclusions, flags, id) and paged, and
//! each item with every answer it got and its ground truth. Label Studio's
//! data manager is the model; what an item looks like and which answers
//! raise a flag come from its kind.

use super::paging::{PageQuery, Pager};
use super::{render_with, OnPage, PageResult};
use crate::core::campaign::campaigns;
use crate::core::item::browser::{self, Agreement, Filter, Sort, Status};
use crate::core::item::thumbnails::Thumbnail;
use crate::http::extract::{Admin, Path};
use crate::http::AppState;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::{get, post};
use axum::Router;
use uuid::Uuid;

mod actions;
mod item;
mod labels;

use labels::{current_labels, flags};

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/data", get(list))
        .route("/admin/campaigns/{id}/data/bulk", post(actions::bulk))
        .route("/admin/campaigns/{id}/data/{item}", get(item::page))
        .route("/admin/campaigns/{id}/data/{item}/exclude", post(actions::exclude))
        .route("/admin/campaigns/{id}/data/{item}/include", post(actions::include))
        .route("/admin/campaigns/{id}/data/{item}/send-back", post(actions::send_back))
        .route("/admin/campaigns/{id}/data/{item}/dismiss-flags", post(actions::dismiss_flags))
}

/// Thumbnails a row of the list shows; the item's page shows them all.
const THUMBNAILS_PER_ROW: usize = 6;

/// The filter form as typed (kept when it is refused).
#[derive(Debug, Clone, Default)]
struct FilterForm {
    batch: String,
    status: String,
    known: String,
    agreement: String,
    excluded: String,
    flagged: String,
    q: String,
    sort: String,
}

impl FilterForm {
    fn read(query: &PageQuery) -> Self {
        let value = |k: &str| query.value(k).unwrap_or_default().to_owned();
        Self {
            batch: value("batch"),
            status: value("status"),
            known: value("known"),
            agreement: value("agreement"),
            excluded: value("excluded"),
            flagged: value("flagged"),
            q: value("q"),
            sort: value("sort"),
        }
    }

    /// The filter, or what is wrong with the form in words.
    fn parse(&self) -> std::result::Result<Filter, String> {
        let yes_no = |name: &str, v: &str| match v {
            "" => Ok(None),
            "yes" => Ok(Some(true)),
            "no" => Ok(Some(false)),
            _ => Err(format!("{name} must be yes, no or empty, not “{v}”")),
        };
        let batch = match self.batch.as_str() {
            "" => None,
            b => Some(
                b.parse::<i32>()
                    .ok()
                    .filter(|n| *n >= 1)
                    .ok_or_else(|| format!("Batch must be a batch's number (a whole number from 1), not “{b}”"))?,
            ),
        };
        let status = match self.status.as_str() {
            "" => None,
            "unbatched" => Some(Status::Unbatched),
            "unanswered" => Some(Status::Unanswered),
            "answered" => Some(Status::Answered),
            s => return Err(format!("Status must be unbatched, unanswered or answered, not “{s}”")),
        };
        let agreement = match self.agreement.as_str() {
            "" => None,
            "unanimous" => Some(Agreement::Unanimous),
            "split" => Some(Agreement::Split),
            a => return Err(format!("Agreement must be unanimous or split, not “{a}”")),
        };
        let sort = match self.sort.as_str() {
            "" | "id" => Sort::Id,
            "most-answers" => Sort::MostAnswers,
            "fewest-answers" => Sort::FewestAnswers,
            "least-agreement" => Sort::LeastAgreement,
            "most-flagged" => Sort::MostFlagged,
            "most-excluded" => Sort::MostExcluded,
            "last-answer" => Sort::LastAnswer,
            s => return Err(format!("Sort by must be one of the listed orders, not “{s}”")),
        };
        Ok(Filter {
            sort,
            batch,
            status,
            known_answer: yes_no("Known answer", &self.known)?,
            agreement,
            excluded: yes_no("Excluded answers", &self.excluded)?,
            flagged: yes_no("Flagged answers", &self.flagged)?,
            search: Some(self.q.clone()).filter(|q| !q.is_empty()),
        })
    }
}

/// One item as a row of the list.
struct Row {
    id: Uuid,
    external_id: String,
    thumbnails: Vec<Thumbnail>,
    more_thumbnails: usize,
    known_answer: bool,
    batches: String,
    counts: browser::Counts,
    label: Option<String>,
}

#[derive(Template)]
#[template(path = "admin_data.html")]
struct DataPage {
    campaign: campaigns::Campaign,
    form: FilterForm,
    refusal: Option<String>,
    rows: Vec<Row>,
    pager: Pager,
    /// Whether the kind has flags (the flagged filter is offered then).
    has_flags: bool,
    /// Set when the labels are not current: what the page says about them.
    notice: Option<String>,
    /// The filter as hidden fields, for the bulk form (page left out).
    kept: Vec<(String, String)>,
    /// The bulk form refused: its reason as typed and why.
    bulk: Option<(String, String)>,
    csrf_token: String,
}

async fn list(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: tower_sessions::Session,
    Path(id): Path<Uuid>,
    query: axum::extract::RawQuery,
) -> PageResult {
    show_list(&s, &session, id, PageQuery::parse(query.0.as_deref()), None).await
}

/// The list for `query`, with a refused bulk form (the reason as typed, and
/// why) shown beside it.
async fn show_list(
    s: &AppState,
    session: &tower_sessions::Session,
    id: Uuid,
    query: PageQuery,
    bulk: Option<(String, String)>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let kind = s.kinds.of(&campaign)?;
    let (rules, pages) = (s.kinds.rules(&campaign)?, s.pages.of(&campaign)?);
    let form = FilterForm::read(&query);
    let requested = Pager::requested(&query, "page");
    let (page, refusal) = match form.parse() {
        Ok(filter) => {
            let rows = |total| Pager::rows_of(total, requested);
            (browser::page(&s.pool, id, &flags(kind), &filter, rows).await?, None)
        }
        // Nothing is shown rather than everything: a list that ignored a
        // mistyped filter would look filtered.
        Err(message) => (browser::ItemPage { total: 0, rows: Vec::new() }, Some(message)),
    };
    let pager = Pager::new(page.total, &query, "page", "items");
    let (labels, notice) = current_labels(s, &campaign).await?;
    let rows = page
        .rows
        .into_iter()
        .map(|r| {
            let mut thumbnails: Vec<Thumbnail> = pages
                .thumbnails(&*rules, &r.payload)
                .into_iter()
                .map(|t| Thumbnail { url: crate::core::work::handles::admin_address(&t.url), ..t })
                .collect();
            let more_thumbnails = thumbnails.len().saturating_sub(THUMBNAILS_PER_ROW);
            thumbnails.truncate(THUMBNAILS_PER_ROW);
            Row {
                label: labels.get(&r.external_id).cloned(),
                id: r.id,
                external_id: r.external_id,
                thumbnails,
                more_thumbnails,
                known_answer: r.known_answer,
                batches: r.batches.words(),
                counts: r.counts,
            }
        })
        .collect();
    let refused = refusal.is_some() || bulk.is_some();
    let status = if refused { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    let has_flags = !kind.about().answer_flags.is_empty();
    let kept = query.without("page");
    let csrf_token = crate::http::csrf::token(session).await?;
    render_with(status, &DataPage { has_flags, campaign, form, refusal, rows, pager, notice, kept, bulk, csrf_token })
}
