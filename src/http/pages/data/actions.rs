//! What an admin does about one item: exclude an answer or all of them,
//! count one again, send the item back to the experts, dismiss its flags;
//! and about every item a filter matches: exclude their answers, or count
//! again those a bulk exclusion took out.
//! Each ends on the item's page saying what changed; a refusal is shown
//! beside its form, as typed.

use super::item::{show_item, ExclusionForm};
use super::labels::flags;
use crate::core::work::responses::{self, AnswersOfItem};
use crate::core::{campaign::campaigns, item::browser};
use crate::http::extract::{Admin, Path};
use crate::http::pages::paging::PageQuery;
use crate::http::pages::{OnPage, PageResult};
use crate::http::AppState;
use axum::extract::State;
use axum::Form;
use tower_sessions::Session;
use uuid::Uuid;

/// The end of an item action: back to the item's page (the same page of
/// answers) saying what was `done`; a refusal shown beside the form it came
/// from (`form.response` names it), as typed, with nothing changed.
async fn end(
    s: &AppState,
    session: &Session,
    (id, item_id): (Uuid, Uuid),
    form: ExclusionForm,
    done: crate::error::Result<String>,
) -> PageResult {
    match done {
        Ok(message) => Ok(crate::http::flash::redirect(session, message, &form.back_to(id, item_id)).await),
        Err(e @ crate::error::Error::Rejected { .. }) => {
            let query = PageQuery::parse(Some(&format!("answers={}", form.answers)));
            let refused = ExclusionForm { message: e.to_string(), ..form };
            show_item(s, session, id, item_id, &query, Some(refused)).await
        }
        Err(e) => Err(e.into()),
    }
}

/// Excludes one answer of the item, or all of them, with the admin's reason.
pub(super) async fn exclude(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(ids): Path<(Uuid, Uuid)>,
    Form(form): Form<ExclusionForm>,
) -> PageResult {
    let which = form.which()?;
    let done = responses::set_item_exclusion(&s.pool, ids.0, ids.1, which, Some(&form.reason)).await.map(|n| {
        let reason = form.reason.trim();
        match (which, n) {
            (_, 0) => "Nothing changed: already excluded for that reason.".to_owned(),
            (AnswersOfItem::One(_), _) => format!("The answer is excluded: {reason}."),
            (AnswersOfItem::All, n) => format!("{n} answer(s) of this item excluded: {reason}."),
        }
    });
    end(&s, &session, ids, form, done).await
}

/// Counts an excluded answer again.
pub(super) async fn include(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(ids): Path<(Uuid, Uuid)>,
    Form(form): Form<ExclusionForm>,
) -> PageResult {
    let which = form.which()?;
    let done = responses::set_item_exclusion(&s.pool, ids.0, ids.1, which, None)
        .await
        .map(|n| if n == 0 { "Nothing changed: it counts already." } else { "The answer counts again." }.to_owned());
    end(&s, &session, ids, form, done).await
}

/// Sends the item back to the experts: its answers stop counting and a new
/// batch offers it again.
pub(super) async fn send_back(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(ids): Path<(Uuid, Uuid)>,
    Form(form): Form<ExclusionForm>,
) -> PageResult {
    let done = crate::core::work::batches::send_back(&s.pool, ids.0, ids.1, &form.reason).await.map(|sent| {
        format!(
            "Sent back to the experts: {} answer(s) no longer count, and batch {} offers the item again.",
            sent.excluded, sent.batch
        )
    });
    let form = ExclusionForm { response: super::item::SEND_BACK.to_owned(), ..form };
    end(&s, &session, ids, form, done).await
}

/// Excludes the answers of every item the list's filter matches, or counts
/// again those excluded for a reason: back to the same list saying how
/// many changed; a refusal beside the bulk form, the reason as typed.
pub(super) async fn bulk(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(fields): Form<Vec<(String, String)>>,
) -> PageResult {
    let field = |k: &str| fields.iter().rev().find(|(key, _)| key == k).map(|(_, v)| v.clone()).unwrap_or_default();
    let (action, reason) = (field("action"), field("reason"));
    let filter_fields: Vec<(String, String)> = fields
        .iter()
        .filter(|(k, _)| !["action", "reason", "csrf_token", "page"].contains(&k.as_str()))
        .cloned()
        .collect();
    let raw = serde_urlencoded::to_string(&filter_fields).unwrap_or_default();
    let query = PageQuery::parse(Some(&raw));
    let refuse =
        |why: String| super::show_list(&s, &session, id, PageQuery::parse(Some(&raw)), Some((reason.clone(), why)));
    let filter = match super::FilterForm::read(&query).parse() {
        Ok(filter) => filter,
        Err(why) => return refuse(why).await,
    };
    /// What the bulk form asks for.
    enum Action {
        Exclude(responses::Bulk),
        SendBack,
    }
    let action = match action.as_str() {
        "exclude" => Action::Exclude(responses::Bulk::Exclude),
        "include" => Action::Exclude(responses::Bulk::Include),
        "send_back" => Action::SendBack,
        other => return refuse(format!("choose what to do with the items, not “{other}”")).await,
    };
    let kind = s.kinds.of(&campaigns::get(&s.pool, id).await?)?;
    let items = browser::matching(&s.pool, id, &flags(kind), &filter).await?;
    let (n, reason_typed) = (items.len(), reason.trim());
    let done = match action {
        Action::SendBack => crate::core::work::batches::send_back_items(&s.pool, id, &items, &reason).await.map(|sent| {
            format!(
                "{n} item(s) sent back to the experts: {} answer(s) no longer count, and {} new batch(es) from batch {} \
                 offer them again.",
                sent.excluded, sent.batches, sent.first_batch
            )
        }),
        Action::Exclude(bulk) => {
            responses::set_items_exclusion(&s.pool, id, &items, bulk, &reason).await.map(|changed| match bulk {
                responses::Bulk::Exclude => format!("{changed} answer(s) of {n} item(s) excluded: {reason_typed}."),
                responses::Bulk::Include => {
                    format!("{changed} answer(s) of {n} item(s) count again (were excluded: {reason_typed}).")
                }
            })
        }
    };
    match done {
        Ok(message) => {
            let to = format!("/admin/campaigns/{id}/data?{raw}#items");
            Ok(crate::http::flash::redirect(&session, message, &to).await)
        }
        Err(e @ crate::error::Error::Rejected { .. }) => refuse(e.to_string()).await,
        Err(e) => Err(e.into()),
    }
}

/// Dismisses the item's open flags: the admin looked and found nothing to
/// do (a flag raised later is open again).
pub(super) async fn dismiss_flags(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(ids): Path<(Uuid, Uuid)>,
    Form(form): Form<ExclusionForm>,
) -> PageResult {
    let kind = s.kinds.of(&campaigns::get(&s.pool, ids.0).await?)?;
    let done = browser::dismiss_flags(&s.pool, ids.0, ids.1, &flags(kind), admin.id).await.map(|open| match open {
        0 => "Nothing to dismiss: no open flag.".to_owned(),
        n => {
            format!("{n} flag(s) dismissed: the item is no longer listed as flagged until someone flags it again.")
        }
    });
    end(&s, &session, ids, form, done).await
}
