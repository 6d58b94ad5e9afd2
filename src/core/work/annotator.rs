//! The annotator's side of the core, as the API and the pages both use it:
//! who may work on a campaign, the next assignment, the annotator's view of
//! it (never gold, never anyone else's answers), answering and submitting.

use crate::core::campaign::campaigns::{self, Campaign};
use crate::core::kind::contract::PublicItem;
use crate::core::work::assignment_progress::AssignmentProgress;
use crate::core::work::assignments::{self, Assignment};
use crate::core::work::record::Recorder;
use crate::core::work::responses::{Outcome, Response, Submission};
use crate::core::Registry;
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::BTreeMap;
use uuid::Uuid;

/// An assignment as its annotator sees it.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct AssignmentView {
    /// The assignment.
    pub assignment: Assignment,
    /// Items in this annotator's order, as shown to them (a crowd worker's
    /// under their handles in this assignment, see [`crate::core::work::handles`]).
    pub items: Vec<PublicItem>,
    /// The annotator's own answers so far, by item (as `items` names them).
    pub answers: BTreeMap<Uuid, Value>,
    /// Progress.
    pub progress: AssignmentProgress,
    /// In a review assignment: the answers under review, by item (as `items` names them).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub reviewing: Option<BTreeMap<Uuid, Value>>,
}

/// The result of a submission.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Submitted {
    /// The stored response.
    pub response: Response,
    /// Created, unchanged (a retry) or changed.
    pub outcome: Outcome,
    /// Progress after the submission.
    pub progress: AssignmentProgress,
}

/// Completion of an assignment: the code to paste into the crowd platform.
#[derive(Debug, serde::Serialize, utoipa::ToSchema)]
pub struct Completed {
    /// The assignment.
    pub assignment: Assignment,
    /// Completion code (crowd campaigns).
    pub completion_code: Option<String>,
    /// Where to send the worker: their platform's completion address, when
    /// the campaign has one (crowd campaigns).
    pub completion_url: Option<String>,
}

/// The campaign, if it is meant for this kind of annotator: crowd campaigns
/// for workers, expert campaigns for experts.
pub async fn campaign_for<'e>(db: impl sqlx::PgExecutor<'e>, campaign_id: Uuid, is_worker: bool) -> Result<Campaign> {
    let campaign = campaigns::get(db, campaign_id).await?;
    if campaign.settings.crowd() != is_worker {
        return Err(Error::Forbidden("this campaign is not for your role".into()));
    }
    Ok(campaign)
}

/// The code a crowd worker pastes into their platform, once they have
/// submitted something; `None` for expert campaigns.
pub fn completion_code(campaign: &Campaign, submitted: i64) -> Option<String> {
    (campaign.settings.crowd() && submitted > 0).then(|| campaign.completion_code.clone())
}

/// Records consent and saves the background answers (the first time the
/// campaign asks them) and hands out the annotator's next assignment;
/// `None` when none is left.
#[tracing::instrument(level = "debug", skip(pool, kinds, campaign), fields(campaign_id = %campaign.id))]
pub async fn start(
    pool: &PgPool,
    kinds: &Registry,
    campaign: &Campaign,
    annotator_id: Uuid,
    background: &[(String, String)],
    consented: bool,
) -> Result<Option<Assignment>> {
    // Resuming (the common case) is one statement: consent and background
    // were given before the assignment began.
    if let Some(current) = assignments::resume_in(pool, campaign, annotator_id).await? {
        return Ok(Some(current));
    }
    // The background answers are checked before the consent is stored: a
    // refused start stores nothing.
    let questions = kinds.rules(campaign)?.policy().background.clone();
    let answers =
        match questions.is_empty() || crate::core::campaign::profiles::exists(pool, campaign.id, annotator_id).await? {
            true => None,
            false => Some(crate::core::campaign::profiles::validate(&questions, background)?),
        };
    crate::core::campaign::intro::ensure_consent(pool, campaign.id, annotator_id, consented).await?;
    if let Some(answers) = answers {
        crate::core::campaign::profiles::save(pool, campaign.id, annotator_id, &answers).await?;
    }
    assignments::next_in(pool, kinds, campaign, annotator_id).await
}

/// The annotator's own assignment `id` with its campaign and its view, read
/// in one statement (see [`crate::core::work::own_view`]); `NotFound` when it is not
/// theirs.
pub async fn own_view<'e>(
    db: impl sqlx::PgExecutor<'e>,
    kinds: &Registry,
    id: Uuid,
    annotator_id: Uuid,
) -> Result<(Campaign, AssignmentView)> {
    let (campaign, assignment, rows) = crate::core::work::own_view::read(db, id, annotator_id).await?;
    let view = view_of(kinds.of(&campaign)?, assignment, rows, campaign.settings.crowd())?;
    Ok((campaign, view))
}

/// One task of an assignment as its page shows it to the annotator (under
/// its handle, for a crowd worker; see `view_of`).
pub type TaskShown = crate::core::work::own_task::TaskRows<PublicItem>;

/// The task `wanted` of the annotator's own assignment `id` with its
/// campaign, read in one statement shared by concurrent pages (see
/// [`crate::core::work::own_task`]): the page a browser is sent to after every answer;
/// with every task answered, the first when the questionnaire `ran_out` of
/// time. `NotFound` when it is not theirs.
pub async fn own_task(
    reads: &crate::core::work::own_task::TaskReads,
    kinds: &Registry,
    id: Uuid,
    annotator_id: Uuid,
    wanted: crate::core::work::own_task::Wanted,
    ran_out: bool,
) -> Result<(std::sync::Arc<Campaign>, TaskShown)> {
    let (campaign, rows) = reads.read(id, annotator_id, wanted, ran_out).await?;
    let (kind, handles) = (kinds.of(&campaign)?, campaign.settings.crowd());
    let public = |task: crate::core::work::own_task::StoredTask| {
        Ok::<_, Error>(PublicItem {
            id: if handles { crate::core::work::handles::handle(id, task.item) } else { task.item },
            payload: public_payload(kind, id, &task.presentation, &task.payload, handles)?,
        })
    };
    let rows = rows.try_map(public)?;
    Ok((campaign, rows))
}

/// An item's payload as its annotator sees it: the kind's public part, in
/// their presentation (`null` if none), and for a crowd worker (`handles`)
/// uploaded images under their names in the assignment.
fn public_payload(
    kind: &dyn crate::core::kind::contract::TaskKind,
    assignment_id: Uuid,
    presentation: &Value,
    payload: &Value,
    handles: bool,
) -> Result<Value> {
    let mut payload = kind.public_payload(payload, presentation).map_err(unreadable_item)?;
    if handles {
        crate::core::work::handles::rename_images(assignment_id, &mut payload);
    }
    Ok(payload)
}

/// A stored item its kind no longer reads: every item is read when it is
/// imported, so only a change of the kind's types gets here.
fn unreadable_item(e: crate::core::kind::contract::Invalid) -> Error {
    Error::unexpected(format!("a stored item no longer reads as its kind's: {}", e.0))
}

/// What an assignment's view is built from, as read from the database.
pub struct ViewRows {
    /// The payloads of the assignment's items, by item.
    pub payloads: BTreeMap<Uuid, Value>,
    /// The annotator's answers, by item.
    pub answers: Vec<(Uuid, Value)>,
    /// Answered and total.
    pub progress: AssignmentProgress,
    /// In a review assignment, the answers under review by item.
    pub reviewing: Option<BTreeMap<Uuid, Value>>,
}

/// The view of an assignment from its rows: the one place an annotator's
/// items, answers and the answers under review are named and shown. Crowd
/// workers get items under the assignment's handles (`handles`; see
/// [`crate::core::work::handles`]): shared sanity tasks must not be recognisable across
/// questionnaires. Experts, who have no sanity tasks and script against
/// item ids, get the ids.
fn view_of(
    kind: &dyn crate::core::kind::contract::TaskKind,
    assignment: Assignment,
    rows: ViewRows,
    handles: bool,
) -> Result<AssignmentView> {
    let ViewRows { payloads, answers, progress, reviewing } = rows;
    let handle = |item: Uuid| if handles { crate::core::work::handles::handle(assignment.id, item) } else { item };
    let presentations = assignment.item_presentations();
    let items = assignment
        .item_order()
        .into_iter()
        // An item gone from the database is left out.
        .filter_map(|id| {
            let presentation = presentations.get(&id).copied().unwrap_or(&Value::Null);
            let payload = public_payload(kind, assignment.id, presentation, payloads.get(&id)?, handles);
            Some(payload.map(|payload| PublicItem { id: handle(id), payload }))
        })
        .collect::<Result<_>>()?;
    let answers = answers.into_iter().map(|(item, answer)| (handle(item), answer)).collect();
    let reviewing = reviewing.map(|r| r.into_iter().map(|(item, answer)| (handle(item), answer)).collect());
    Ok(AssignmentView { assignment, items, answers, progress, reviewing })
}

/// Stores an answer in the annotator's own assignment.
#[tracing::instrument(level = "debug", skip_all, fields(%assignment_id))]
pub async fn respond(
    recorder: &Recorder,
    kinds: &Registry,
    assignment_id: Uuid,
    annotator_id: Uuid,
    sub: &Submission,
) -> Result<Submitted> {
    let (response, outcome, progress) = recorder.record(kinds, assignment_id, annotator_id, sub).await?;
    Ok(Submitted { response, outcome, progress })
}

/// Submits the annotator's assignment (every item answered).
#[tracing::instrument(level = "debug", skip(pool, kinds))]
pub async fn complete(pool: &PgPool, kinds: &Registry, assignment_id: Uuid, annotator_id: Uuid) -> Result<Completed> {
    let assignment = assignments::complete(pool, kinds, assignment_id, annotator_id).await?;
    let campaign = campaigns::get(pool, assignment.campaign_id).await?;
    if campaign.settings.overlap.rule().is_some() {
        // The submission stands either way; a failed decision is made at the next one.
        if let Err(e) =
            crate::core::work::overlap::after_submission(pool, kinds, campaign.id, assignment.batch_id).await
        {
            tracing::warn!(error = %e, campaign = %campaign.id, "deciding the questionnaire's items failed");
        }
    }
    let completion_code = completion_code(&campaign, 1);
    let completion_url = campaign.completion_url.clone().filter(|_| completion_code.is_some());
    Ok(Completed { assignment, completion_code, completion_url })
}

/// An item of the campaign as a worker would see it, for a preview that
/// records nothing: the first imported item that has no known answer (never
/// a gold or sanity task, which would give it away).
pub async fn sample_item(pool: &PgPool, kinds: &Registry, campaign: &Campaign) -> Result<Option<PublicItem>> {
    let kind = kinds.of(campaign)?;
    let row = sqlx::query!(
        "SELECT id, payload FROM items WHERE campaign_id = $1 AND gold IS NULL ORDER BY created_at, external_id LIMIT 1",
        campaign.id,
    )
    .fetch_optional(pool)
    .await?
    .map(|i| (i.id, i.payload));
    row.map(|(id, payload)| {
        Ok(PublicItem { id, payload: kind.public_payload(&payload, &Value::Null).map_err(unreadable_item)? })
    })
    .transpose()
}

/// The first batch's item at a 1-based position (the last one past the
/// end), as a worker would see it (without an assignment's own
/// presentation), and how many items the batch has: the admin's preview of
/// a study, which records nothing.
pub async fn batch_item_preview(
    pool: &PgPool,
    kinds: &Registry,
    campaign: &Campaign,
    position: i64,
) -> Result<Option<(PublicItem, i64)>> {
    let kind = kinds.of(campaign)?;
    let row = sqlx::query!(
        r#"WITH first AS (SELECT id FROM batches WHERE campaign_id = $1 AND review_of IS NULL ORDER BY position LIMIT 1)
           SELECT i.id, i.payload, (SELECT count(*) FROM batch_items WHERE batch_id = (SELECT id FROM first)) AS "total!"
             FROM batch_items bi JOIN items i ON i.id = bi.item_id
            WHERE bi.batch_id = (SELECT id FROM first)
            ORDER BY bi.position
           OFFSET GREATEST(0, LEAST($2, (SELECT count(*) FROM batch_items WHERE batch_id = (SELECT id FROM first)) - 1))
            LIMIT 1"#,
        campaign.id,
        (position - 1).max(0),
    )
    .fetch_optional(pool)
    .await?
    .map(|r| (r.id, r.payload, r.total));
    row.map(|(id, payload, total)| {
        Ok((PublicItem { id, payload: kind.public_payload(&payload, &Value::Null).map_err(unreadable_item)? }, total))
    })
    .transpose()
}
