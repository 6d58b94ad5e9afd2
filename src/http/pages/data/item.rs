//! One item of the data browser: its images, ground truth, known answer,
//! payload and every answer (100 a page), with the forms of its actions
//! (see `actions`).

use super::labels::{current_labels, flags};
use crate::core::campaign::campaigns;
use crate::core::item::browser;
use crate::core::item::thumbnails::Thumbnail;
use crate::core::work::responses::AnswersOfItem;
use crate::http::extract::{Admin, Path};
use crate::http::pages::paging::{PageQuery, Pager};
use crate::http::pages::{render_with, OnPage, PageResult};
use crate::http::AppState;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use tower_sessions::Session;
use uuid::Uuid;

/// One answer as the item's page shows it.
struct AnswerView {
    row: browser::AnswerRow,
    /// The answer as the kind shows a reviewer (HTML the kind escaped).
    html: String,
}

#[derive(Template)]
#[template(path = "admin_item.html")]
struct ItemPage {
    campaign: campaigns::Campaign,
    item: crate::core::item::items::Item,
    thumbnails: Vec<Thumbnail>,
    batches: String,
    /// Whether it is in a batch (so it can be sent back to the experts).
    in_batch: bool,
    counts: browser::Counts,
    answers: Vec<AnswerView>,
    pager: Pager,
    payload: String,
    known_answer: Option<String>,
    label: Option<String>,
    notice: Option<String>,
    /// Who last dismissed its flags, and when.
    dismissed: Option<(String, String)>,
    csrf_token: String,
    /// A refused exclusion: the form as filled and why.
    refused: Option<ExclusionForm>,
}

/// What a refused send-back form is keyed by on the page (`admin_item.html`
/// spells the same).
pub(super) const SEND_BACK: &str = "send-back";

impl ItemPage {
    /// The refusal of the exclusion form of this answer (`""`: of the
    /// whole item), if that form was refused.
    fn refusal(&self, response: &str) -> Option<&ExclusionForm> {
        self.refused.as_ref().filter(|f| f.response == response)
    }
}

/// An exclusion form: one answer (`response`) or, empty, every answer of
/// the item; the reason; the page of answers to return to.
#[derive(Debug, Clone, Default, serde::Deserialize)]
pub(super) struct ExclusionForm {
    #[serde(default)]
    pub(super) response: String,
    #[serde(default)]
    pub(super) reason: String,
    #[serde(default)]
    pub(super) answers: String,
    /// Why it was refused (never posted).
    #[serde(skip)]
    pub(super) message: String,
}

impl ExclusionForm {
    pub(super) fn which(&self) -> std::result::Result<AnswersOfItem, crate::error::Error> {
        match self.response.as_str() {
            "" => Ok(AnswersOfItem::All),
            id => Uuid::parse_str(id).map(AnswersOfItem::One).map_err(|_| crate::error::Error::NotFound("answer")),
        }
    }

    /// Where the browser returns: the same page of answers.
    pub(super) fn back_to(&self, campaign: Uuid, item: Uuid) -> String {
        let page = self.answers.parse::<usize>().unwrap_or(1);
        format!("/admin/campaigns/{campaign}/data/{item}?answers={page}#answers")
    }
}

pub(super) async fn page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path((id, item_id)): Path<(Uuid, Uuid)>,
    query: axum::extract::RawQuery,
) -> PageResult {
    show_item(&s, &session, id, item_id, &PageQuery::parse(query.0.as_deref()), None).await
}

pub(super) async fn show_item(
    s: &AppState,
    session: &Session,
    id: Uuid,
    item_id: Uuid,
    query: &PageQuery,
    refused: Option<ExclusionForm>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let (kind, rules) = (s.kinds.of(&campaign)?, s.kinds.rules(&campaign)?);
    let pages = s.pages.of(&campaign)?;
    let requested = Pager::requested(query, "answers");
    let rows = |total| Pager::rows_of(total, requested);
    let detail = browser::item(&s.pool, id, item_id, &flags(kind), rows).await?;
    let pager = Pager::new((detail.counts.counted + detail.counts.excluded) as usize, query, "answers", "answers");
    let (labels, notice) = current_labels(s, &campaign).await?;
    let pretty = |v: &serde_json::Value| serde_json::to_string_pretty(v).unwrap_or_default();
    // Answers are shown beside the item as annotators are shown it (its
    // choices in their stored order).
    let shown = kind.public_payload(&detail.item.payload, &serde_json::Value::Null).unwrap_or_default();
    let answers = detail
        .answers
        .into_iter()
        .map(|row| AnswerView { html: pages.render_answer(&shown, &row.answer), row })
        .collect();
    let status = if refused.is_some() { StatusCode::UNPROCESSABLE_ENTITY } else { StatusCode::OK };
    render_with(
        status,
        &ItemPage {
            thumbnails: pages
                .thumbnails(&*rules, &detail.item.payload)
                .into_iter()
                .map(|t| Thumbnail { url: crate::core::work::handles::admin_address(&t.url), ..t })
                .collect(),
            batches: detail.batches.words(),
            in_batch: detail.batches.total > 0,
            counts: detail.counts,
            answers,
            pager,
            payload: pretty(&detail.item.payload),
            known_answer: detail.item.gold.as_ref().map(pretty),
            label: labels.get(&detail.item.external_id).cloned(),
            notice,
            item: detail.item,
            campaign,
            dismissed: detail.dismissed.map(|(who, at)| (who, at.format("%Y-%m-%d %H:%M UTC").to_string())),
            csrf_token: crate::http::csrf::token(session).await?,
            refused,
        },
    )
}
