//! The annotator's pages: join through an invitation, the landing page, one
//! task at a time, review and submit, and the thank-you page with the
//! completion code.

use super::{render, render_with, OnPage, PageResult, Refusal};
use crate::auth::{users, Role};
use crate::core::campaign::states::AssignmentState;
use crate::core::crowd::invitations;
use crate::core::work::assignments;
use crate::core::work::own_task::Wanted;
use crate::core::{campaign::campaigns, truth::progress, work::annotator};
use crate::error::Code;
use crate::error::Error;
use crate::http::api::annotate::{self, JOINED_KEY};
use crate::http::error::AppError;
use crate::http::extract::{CurrentUser, Path, USER_KEY};
use crate::http::task_pages::TaskView;
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::{Query, State};
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Form, Router};
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/join/{token}", get(join).post(confirm_join))
        .route("/work/{campaign}", get(landing))
        .route("/work/{campaign}/start", post(start))
        .route("/work/a/{id}", get(task))
        .route("/work/a/{id}/answer", post(answer))
        .route("/work/a/{id}/complete", post(complete))
        .route("/work/a/{id}/done", get(done))
        .route("/work/a/{id}/img/{name}", get(image))
        // MTurk shows worker pages in its HIT frame and they submit the HIT there.
        .layer(tower_http::set_header::SetResponseHeaderLayer::if_not_present(
            axum::http::header::CONTENT_SECURITY_POLICY,
            super::mturk::worker_csp(),
        ))
}

/// What a crowd platform appends to a study link: Atelier's own
/// `worker_id`, Prolific's `PROLIFIC_PID`, `STUDY_ID` and `SESSION_ID`, or
/// MTurk's `workerId`, `assignmentId` and `hitId`.
#[derive(serde::Deserialize)]
struct JoinQuery {
    worker_id: Option<String>,
    #[serde(rename = "PROLIFIC_PID")]
    prolific_pid: Option<String>,
    #[serde(rename = "STUDY_ID")]
    study_id: Option<String>,
    #[serde(rename = "SESSION_ID")]
    session_id: Option<String>,
    #[serde(rename = "workerId")]
    mturk_worker_id: Option<String>,
    #[serde(rename = "assignmentId")]
    mturk_assignment_id: Option<String>,
    #[serde(rename = "hitId")]
    mturk_hit_id: Option<String>,
    #[serde(rename = "turkSubmitTo")]
    turk_submit_to: Option<String>,
    /// Every other parameter (a link's own id parameter among them).
    #[serde(flatten)]
    others: std::collections::HashMap<String, String>,
}

impl JoinQuery {
    /// Whether MTurk is showing the HIT before the worker accepted it.
    fn mturk_preview(&self) -> bool {
        self.mturk_assignment_id.as_deref() == Some(super::mturk::PREVIEW_ASSIGNMENT)
    }

    /// The worker's id on their platform: under the link's own parameter
    /// name first (in `all`), then `worker_id`, `PROLIFIC_PID`, `workerId`;
    /// and whether it came as Prolific's `PROLIFIC_PID` (it must then have
    /// Prolific's shape).
    fn worker(&self, id_param: &str) -> Option<(&str, bool)> {
        [
            (self.others.get(id_param), id_param == "PROLIFIC_PID"),
            (self.worker_id.as_ref(), false),
            (self.prolific_pid.as_ref(), true),
            (self.mturk_worker_id.as_ref(), false),
        ]
        .into_iter()
        .filter_map(|(w, prolific)| Some((w?.trim(), prolific)))
        .find(|(w, _)| !w.is_empty())
    }

    /// The visit's other platform ids, as kept with the join (at most 128
    /// characters each; `None` when the link carries none).
    fn platform_ids(&self) -> Option<serde_json::Value> {
        let ids: serde_json::Map<String, serde_json::Value> = [
            ("study_id", &self.study_id),
            ("session_id", &self.session_id),
            ("assignment_id", &self.mturk_assignment_id),
            ("hit_id", &self.mturk_hit_id),
            // Kept only when it is MTurk's own site: the HIT is submitted there.
            (
                "turk_submit_to",
                &self.turk_submit_to.as_deref().and_then(super::mturk::submit_origin).map(str::to_owned),
            ),
        ]
        .into_iter()
        .filter_map(|(k, v)| {
            let v = v.as_deref()?.trim();
            (!v.is_empty()).then(|| (k.to_owned(), serde_json::Value::from(v.chars().take(128).collect::<String>())))
        })
        .collect();
        (!ids.is_empty()).then_some(serde_json::Value::Object(ids))
    }
}

/// A study link: its refusals are pages for a worker, who has nowhere in
/// the service to go back to (the sign-in page is staff's).
async fn join(
    state: State<AppState>,
    session: Session,
    peer: axum::extract::ConnectInfo<std::net::SocketAddr>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    token: Path<String>,
    query: Query<JoinQuery>,
) -> Result<axum::response::Response, super::StudyError> {
    join_link(state, session, peer, headers, uri, token, query)
        .await
        .map_err(|super::PageError(e)| super::StudyError(e))
}

async fn join_link(
    State(s): State<AppState>,
    session: Session,
    axum::extract::ConnectInfo(peer): axum::extract::ConnectInfo<std::net::SocketAddr>,
    headers: axum::http::HeaderMap,
    uri: axum::http::Uri,
    Path(token): Path<String>,
    Query(q): Query<JoinQuery>,
) -> PageResult {
    // A worker link is for a worker's browser: an API token (staff's) gets
    // no worker session through it.
    if headers.contains_key(axum::http::header::AUTHORIZATION) {
        return Err(Error::conflict(
            Code::SignedInAsStaff,
            "worker links are opened in a browser without an API token; staff try campaigns in a private window",
        )
        .into());
    }
    let link = invitations::lookup(&s.pool, &token).await?;
    let (campaign_id, revoked) = (link.campaign_id, link.revoked);
    let worker = q.worker(&link.id_param);
    // MTurk's preview and its HIT frame create no session: the preview shows
    // a sample, and the work itself happens in a tab of its own.
    if q.mturk_preview() {
        return super::mturk::preview(&s, campaign_id).await;
    }
    if super::mturk::in_frame(&headers) && worker.is_some() {
        return super::mturk::open_in_new_tab(&uri.to_string());
    }
    let Some((external_id, prolific)) = worker.map(|(w, p)| (w.to_owned(), p)) else {
        return Err(Error::invalid(
            Code::MissingWorkerId,
            format!(
                "this link is missing your worker id; please open it from your crowd platform (it adds your id: \
                 ?PROLIFIC_PID=... on Prolific, ?workerId=... on MTurk, or ?{}=...)",
                link.id_param
            ),
        )
        .into());
    };
    let platform_ids = q.platform_ids();
    let (current, working_as) = worker_of_browser(&s, &session).await?;
    // A browser already working as another worker is not switched by a
    // link (a page could send a victim's browser to a link with another id
    // and receive their answers and pay): it asks, and only a form post
    // from this browser switches.
    // Past the check below, a browser working as someone works as this worker.
    let same_browser = working_as.is_some();
    if let Some(working_as) = working_as {
        let wanted = users::normalize_worker_id(&external_id)?;
        if working_as.external_id.as_deref() != Some(wanted.as_str()) {
            let page = WorkSwitch {
                current: working_as.external_id.unwrap_or_default(),
                wanted,
                token,
                campaign_id,
                csrf_token: csrf::token(&session).await?,
            };
            return render(&page);
        }
    }
    let address = crate::http::client_ip(peer.ip(), &headers, &s.config.trusted_proxies).to_string();
    let address_hash = invitations::address_hash(&address, campaign_id);
    let visit = invitations::Visit {
        external_id: &external_id,
        platform_ids: platform_ids.as_ref(),
        prolific,
        address_hash: Some(&address_hash),
        same_browser,
    };
    if revoked {
        return come_back(&s, &session, &link, &token, visit, current).await;
    }
    admit(&s, &session, &token, campaign_id, visit, current).await
}

/// A revoked link lets back in only those who joined through it: they may
/// finish the questionnaire they hold and always see a code they earned.
async fn come_back(
    s: &AppState,
    session: &Session,
    link: &invitations::Link,
    token: &str,
    visit: invitations::Visit<'_>,
    current: Option<Uuid>,
) -> PageResult {
    if link.sessions_ended {
        return Err(Error::conflict(
            Code::InvitationEnded,
            "this study link was closed by the study's team and nobody can continue through it; please return the \
             task on your crowd platform (Prolific: “return submission”; MTurk: “return HIT”)",
        )
        .into());
    }
    // Someone new on a closed link is told so, not "not found".
    let worker = invitations::returning_worker(&s.pool, token, visit).await?.ok_or_else(|| {
        Error::conflict(
            Code::InvitationRevoked,
            "this study is closed to new participants; please return the task on your crowd platform \
             (Prolific: “return submission”; MTurk: “return HIT”) so that you are not timed out",
        )
    })?;
    make_theirs(session, link.campaign_id, worker.id, current).await
}

/// The worker this browser is working as (its session's user and that
/// user), if any. An admin or expert opening a worker link would silently
/// become that worker in this browser: refused, saying how to proceed.
async fn worker_of_browser(
    s: &AppState,
    session: &Session,
) -> Result<(Option<Uuid>, Option<crate::auth::users::User>), AppError> {
    let current: Option<Uuid> = session.get(USER_KEY).await?;
    let user = match current {
        Some(id) => users::get(&s.pool, id).await?,
        None => None,
    };
    if let Some(user) = user.as_ref().filter(|u| u.role != Role::Worker) {
        return Err(Error::conflict(
            Code::SignedInAsStaff,
            format!(
                "you are signed in as {} ({}); log out first, or open this worker link in a private window",
                user.name.as_deref().unwrap_or("an account"),
                user.role
            ),
        )
        .into());
    }
    Ok((current, user))
}

/// The confirmation that a browser working as one worker continues as another.
#[derive(Template)]
#[template(path = "work_switch.html")]
struct WorkSwitch {
    current: String,
    wanted: String,
    token: String,
    campaign_id: Uuid,
    csrf_token: String,
}

/// The worker id a switch is confirmed for.
#[derive(serde::Deserialize)]
struct SwitchForm {
    worker_id: String,
}

/// A switch confirmed by a form post from this browser (CSRF-checked).
async fn confirm_join(
    State(s): State<AppState>,
    session: Session,
    Path(token): Path<String>,
    Form(form): Form<SwitchForm>,
) -> PageResult {
    let link = invitations::lookup(&s.pool, &token).await?;
    let (campaign_id, revoked) = (link.campaign_id, link.revoked);
    let (current, _) = worker_of_browser(&s, &session).await?;
    // A switch confirmed in this browser: the address was counted when the
    // link was opened (which led here), and the id's shape is checked as then.
    let visit = invitations::Visit {
        external_id: &form.worker_id,
        platform_ids: None,
        prolific: link.id_param == "PROLIFIC_PID",
        address_hash: None,
        same_browser: false,
    };
    if revoked {
        return come_back(&s, &session, &link, &token, visit, current).await;
    }
    admit(&s, &session, &token, campaign_id, visit, current).await
}

/// Admits the worker through the link and makes this browser theirs.
async fn admit(
    s: &AppState,
    session: &Session,
    token: &str,
    campaign_id: Uuid,
    visit: invitations::Visit<'_>,
    current: Option<Uuid>,
) -> PageResult {
    let worker = invitations::admit(&s.pool, token, visit).await?;
    make_theirs(session, campaign_id, worker.id, current).await
}

/// Makes this browser the worker's, with the campaign among those it joined.
async fn make_theirs(session: &Session, campaign_id: Uuid, worker_id: Uuid, current: Option<Uuid>) -> PageResult {
    if current != Some(worker_id) {
        session.cycle_id().await?;
        session.insert(USER_KEY, worker_id).await?;
        session.remove_value(JOINED_KEY).await?;
    }
    let mut joined: Vec<Uuid> = session.get(JOINED_KEY).await?.unwrap_or_default();
    if !joined.contains(&campaign_id) {
        joined.push(campaign_id);
        session.insert(JOINED_KEY, &joined).await?;
    }
    Ok(Redirect::to(&format!("/work/{campaign_id}")).into_response())
}

fn annotator(user: CurrentUser) -> Result<crate::auth::users::User, AppError> {
    user.require(&[Role::Worker, Role::Expert])
}

#[derive(Template)]
#[template(path = "work_landing.html")]
struct Landing {
    campaign: campaigns::Campaign,
    kind_title: &'static str,
    csrf_token: String,
    current: Option<(i64, i64)>,
    finished: i64,
    completion_code: Option<String>,
    background: Vec<crate::core::campaign::profiles::BackgroundQuestion>,
    instructions: Option<&'static str>,
    /// An expert's own progress through the campaign.
    mine: Option<progress::AnnotatorProgress>,
    /// A crowd worker who has finished and has nothing more to take: the
    /// page shows their code and where to go, no Start.
    done: bool,
    /// A crowd worker whose every link to the campaign was revoked and who
    /// holds no questionnaire: no Start, the reason instead.
    link_closed: bool,
    /// The campaign's own introduction: instructions, time, pay.
    intro: crate::core::campaign::intro::Intro,
    /// Its instructions as paragraphs and images.
    intro_blocks: Vec<crate::core::campaign::intro::Block>,
    /// The consent text to agree to before the first questionnaire, if the
    /// worker has not started yet.
    consent: Option<String>,
    /// The start form as last sent, when it was refused (a background
    /// question left out, consent not given): the reason is shown beside
    /// it, the answers chosen stay chosen.
    refused: Option<Refusal>,
}

impl Landing {
    /// The start form's refusal, in words.
    fn refusal(&self) -> Option<String> {
        Refusal::of_form(&self.refused, START_FORM)
    }

    /// Whether `option` was chosen for background question `question` in
    /// the refused form.
    fn chosen(&self, question: &str, option: &str) -> bool {
        Refusal::kept_in(&self.refused, START_FORM, &format!("bg_{question}")) == option
    }

    /// Whether the consent box was ticked in the refused form.
    fn consent_ticked(&self) -> bool {
        Refusal::kept_in(&self.refused, START_FORM, "consent") == "yes"
    }
}

/// The landing page's start form (its section id).
const START_FORM: &str = "start";

async fn landing(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    Path(campaign_id): Path<Uuid>,
) -> PageResult {
    let user = annotator(user)?;
    let campaign = annotate::check_access(&s, &user, campaign_id, Some(&session)).await?;
    landing_page(&s, &user, &session, campaign, None).await
}

/// The landing page of `campaign`, with the start form `refused` shown
/// again beside its reason.
async fn landing_page(
    s: &AppState,
    user: &users::User,
    session: &Session,
    campaign: campaigns::Campaign,
    refused: Option<Refusal>,
) -> PageResult {
    let campaign_id = campaign.id;
    let kind = s.kinds.of(&campaign)?;
    let instructions = s.pages.of(&campaign)?.instructions();
    let current = match assignments::active_of(&s.pool, campaign_id, user.id).await? {
        Some(a) => {
            let p = crate::core::work::assignment_progress::of_assignment(&s.pool, a.id, a.batch_id).await?;
            Some((p.answered, p.total))
        }
        None => None,
    };
    let finished = progress::submitted_by(&s.pool, campaign_id, user.id).await?;
    let background = if crate::core::campaign::profiles::exists(&s.pool, campaign_id, user.id).await? {
        Vec::new()
    } else {
        s.kinds.rules(&campaign)?.policy().background.clone()
    };
    // Experts see their counts, by the rules that hand out work.
    let mine = match campaign.settings.crowd() {
        true => None,
        false => Some(progress::of_annotator_now(&s.pool, &s.kinds, &campaign, user.id).await?.0),
    };
    // A worker who reopens their link after finishing sees their code again.
    let completion_code = annotator::completion_code(&campaign, finished);
    let done = campaign.settings.crowd()
        && current.is_none()
        && completion_code.is_some()
        && crate::core::work::eligibility::open_to(&s.pool, &s.kinds, &campaign, user.id).await?.batches == 0;
    let link_closed = campaign.settings.crowd()
        && current.is_none()
        && !invitations::may_start_new(&s.pool, campaign_id, user.id).await?;
    let intro = crate::core::campaign::intro::get(&s.pool, campaign_id).await?;
    let consent = intro.consent.clone().filter(|_| current.is_none() && finished == 0);
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    let page = Landing {
        intro_blocks: intro.blocks(),
        intro,
        consent,
        done,
        link_closed,
        completion_code,
        campaign,
        kind_title: kind.title(),
        csrf_token: csrf::token(session).await?,
        current,
        finished,
        background,
        instructions,
        mine,
        refused,
    };
    render_with(status, &page)
}

#[derive(Template)]
#[template(path = "work_none.html")]
struct NoneLeft {
    campaign_name: String,
    completion_code: Option<String>,
    /// Crowd workers without a code are told to return the study on their
    /// platform, so that they are not timed out.
    crowd: bool,
}

async fn start(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    Path(campaign_id): Path<Uuid>,
    Form(fields): Form<Vec<(String, String)>>,
) -> PageResult {
    let user = annotator(user)?;
    let campaign = annotate::check_access(&s, &user, campaign_id, Some(&session)).await?;
    annotate::ensure_may_start(&s, &user, campaign_id).await?;
    let consented = fields.iter().any(|(k, v)| k == "consent" && v == "yes");
    let started = match annotator::start(&s.pool, &s.kinds, &campaign, user.id, &fields, consented).await {
        Ok(started) => started,
        Err(e) => {
            // The token is the session's; it is not kept as a field.
            let kept = fields.into_iter().filter(|(k, _)| k != "csrf_token").collect();
            let refused = Refusal::of(START_FORM, kept, e)?;
            return landing_page(&s, &user, &session, campaign, Some(refused)).await;
        }
    };
    match started {
        Some(a) => Ok(Redirect::to(&format!("/work/a/{}", a.id)).into_response()),
        None => {
            let finished = progress::submitted_by(&s.pool, campaign_id, user.id).await?;
            let completion_code = annotator::completion_code(&campaign, finished);
            render(&NoneLeft { crowd: campaign.settings.crowd(), campaign_name: campaign.name, completion_code })
        }
    }
}

#[derive(serde::Deserialize)]
struct TaskQuery {
    pos: Option<usize>,
}

#[derive(Template)]
#[template(path = "work_task.html")]
struct TaskPage {
    campaign_name: String,
    assignment_id: Uuid,
    position: usize,
    total: usize,
    answered: usize,
    percent: usize,
    body: String,
    previous: Option<usize>,
    next: Option<usize>,
    under_review: Option<String>,
    /// An expert's counter over the whole campaign.
    mine: Option<progress::AnnotatorProgress>,
    /// Why the answer just sent was not taken, in plain words.
    refusal: Option<String>,
    /// The campaign to go back to for a new questionnaire, when this one's
    /// time ran out.
    restart: Option<Uuid>,
    /// Experts get a header with their campaigns and log out (its form's
    /// CSRF token); crowd workers none (they have only their study).
    expert_header: Option<String>,
}

#[derive(Template)]
#[template(path = "work_review.html")]
struct ReviewPage {
    campaign_name: String,
    assignment_id: Uuid,
    total: usize,
    csrf_token: String,
    /// Experts of an "every expert" campaign go on to their next batch
    /// with the same key.
    goes_on: bool,
}

async fn task(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Query(q): Query<TaskQuery>,
) -> PageResult {
    let user = annotator(user)?;
    // An answer just refused (post-redirect-get: a reload shows the task again, never re-sends).
    let refused = match session.remove::<RefusedAnswer>(REFUSED_KEY).await {
        Ok(Some(r)) if r.assignment == id => Some(r),
        _ => None,
    };
    let shown = match refused {
        Some(RefusedAnswer { item, reason: None, chosen, .. }) => Shown::Expired { at: None, item: Some(item), chosen },
        Some(RefusedAnswer { item, reason: Some(reason), chosen, .. }) => Shown::Refused { item, reason, chosen },
        None => Shown::At(q.pos),
    };
    show_task(&s, &session, &user, id, shown).await
}

/// The session key of [`RefusedAnswer`].
const REFUSED_KEY: &str = "refused_answer";

/// An answer the service refused, kept in the session for the task page the
/// refusal redirects to (once).
#[derive(serde::Serialize, serde::Deserialize)]
struct RefusedAnswer {
    assignment: Uuid,
    item: Uuid,
    /// Why; none when the questionnaire's time ran out.
    reason: Option<String>,
    /// What the page shows chosen (none: the answer kept).
    chosen: Option<serde_json::Value>,
}

/// Keeps the refusal for the next view of the task and sends the browser there.
async fn refused(session: &Session, refusal: RefusedAnswer) -> PageResult {
    let to = format!("/work/a/{}", refusal.assignment);
    session.insert(REFUSED_KEY, refusal).await.map_err(|e| Error::internal("the session", e))?;
    Ok(Redirect::to(&to).into_response())
}

/// Which task the page shows.
enum Shown {
    /// At this 1-based position, or the first unanswered one.
    At(Option<usize>),
    /// The task whose answer was just refused: the reason beside it, and
    /// what the annotator chose kept on the page.
    Refused { item: Uuid, reason: String, chosen: Option<serde_json::Value> },
    /// The questionnaire's time ran out: the task at this position (or of
    /// this item, when an answer to it was just refused), with the reason.
    Expired { at: Option<usize>, item: Option<Uuid>, chosen: Option<serde_json::Value> },
}

/// What an annotator whose questionnaire ran out of time is told, beside the
/// task they were on.
fn time_ran_out(answer_refused: bool) -> String {
    let refused = if answer_refused { " (the answer you just sent was not saved)" } else { "" };
    format!(
        "The time for this questionnaire ran out before it was submitted, so it takes no more answers{refused}. \
         Start a new questionnaire from the study page to go on."
    )
}

/// The task page of the annotator's assignment.
async fn show_task(
    s: &AppState,
    session: &Session,
    user: &crate::auth::users::User,
    id: Uuid,
    shown: Shown,
) -> PageResult {
    // The page follows every answer a browser sends: it reads the task shown
    // (the one asked for, else the first without an answer), the next one
    // and the counts, on the single-statement pool (no check on each
    // return). A refused answer names its task by what the form sent (a
    // crowd worker's handle), which the recorder knows.
    let wanted = match &shown {
        Shown::At(Some(position)) | Shown::Expired { at: Some(position), item: None, .. } => Wanted::At(*position),
        Shown::At(None) | Shown::Expired { at: None, item: None, .. } => Wanted::FirstOpen,
        Shown::Refused { item, .. } | Shown::Expired { item: Some(item), .. } => {
            Wanted::Item(s.recorder.item_named(id, *item).await?)
        }
    };
    let ran_out = matches!(shown, Shown::Expired { .. });
    let (campaign, task) = annotator::own_task(&s.task_reads, &s.kinds, id, user.id, wanted, ran_out).await?;
    let state = task.state;
    if state == AssignmentState::Completed {
        return Ok(Redirect::to(&format!("/work/a/{id}/done")).into_response());
    }
    // Ran out of time: the task stays on the page (what was chosen kept),
    // with the reason and the way to a new questionnaire beside it.
    let expired = ran_out || (state == AssignmentState::Expired && matches!(shown, Shown::At(_)));
    let (refusal, chosen) = match shown {
        Shown::At(_) if expired => (Some(time_ran_out(false)), None),
        Shown::At(_) => (None, None),
        Shown::Refused { reason, chosen, .. } => (Some(reason), chosen),
        Shown::Expired { item, chosen, .. } => (Some(time_ran_out(item.is_some())), chosen),
    };
    let total = task.total;
    let csrf_token = csrf::token(session).await?;
    let (Some(position), Some(item)) = (task.position, task.task.as_ref()) else {
        return render(&ReviewPage {
            campaign_name: campaign.name.clone(),
            assignment_id: id,
            total,
            csrf_token,
            goes_on: goes_on_after_submit(&campaign),
        });
    };
    let index = position - 1;
    let stored = task.answer.as_ref();
    let answer = chosen.as_ref().or(stored);
    let under_review = task.under_review.as_ref();
    let pages = s.pages.of(&campaign)?;
    let body = pages.render_task(&TaskView {
        item,
        next: task.next.as_ref(),
        answer,
        under_review,
        position,
        total,
        assignment_id: id,
        csrf_token: &csrf_token,
        shown_at: chrono::Utc::now().timestamp_millis(),
    })?;
    let answered = task.answered;
    let mine = match campaign.settings.crowd() {
        true => None,
        false => Some(progress::of_annotator_now(&s.pool, &s.kinds, &campaign, user.id).await?.0),
    };
    let page = TaskPage {
        mine,
        refusal,
        restart: expired.then_some(campaign.id),
        expert_header: (!campaign.settings.crowd()).then(|| csrf_token.clone()),
        campaign_name: campaign.name.clone(),
        assignment_id: id,
        position: index + 1,
        total,
        answered,
        percent: (answered * 100).checked_div(total).unwrap_or(0),
        body,
        previous: (index > 0).then_some(index),
        next: (index + 1 < total && stored.is_some()).then_some(index + 2),
        under_review: under_review.map(|a| pages.render_answer(&item.payload, a)),
    };
    // A refused answer is a client error: the page says so with its status.
    let status = match (expired, page.refusal.is_some()) {
        (true, _) => axum::http::StatusCode::CONFLICT,
        (false, true) => axum::http::StatusCode::UNPROCESSABLE_ENTITY,
        (false, false) => axum::http::StatusCode::OK,
    };
    render_with(status, &page)
}

/// Fields the task form posts for the page itself, not the kind's answer.
const BOOKKEEPING: [&str; 4] = ["csrf_token", "item_id", "shown_at", "change"];

fn field<'a>(fields: &'a [(String, String)], name: &str) -> Option<&'a str> {
    fields.iter().find(|(k, _)| k == name).map(|(_, v)| v.as_str())
}

async fn answer(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(fields): Form<Vec<(String, String)>>,
) -> PageResult {
    let user = annotator(user)?;
    let item_id: Uuid = field(&fields, "item_id")
        .and_then(|v| v.parse().ok())
        .ok_or_else(|| Error::invalid(Code::InvalidItem, "the form is missing the item"))?;
    let shown_at: Option<i64> = field(&fields, "shown_at").and_then(|v| v.parse().ok());
    let elapsed = shown_at.map(|t| (chrono::Utc::now().timestamp_millis() - t).clamp(0, 86_400_000) as i32);
    let change = field(&fields, "change") == Some("1");
    let posted: Vec<(String, String)> =
        fields.into_iter().filter(|(k, _)| !BOOKKEEPING.contains(&k.as_str())).collect();
    // The kind reads its form into an answer, validated as an API answer is.
    let kind = s.recorder.kind_of(&s.kinds, id, user.id).await?;
    let answer = s.pages.get(kind.name())?.answer_from_form(&posted);
    let sub = crate::core::work::responses::Submission { item_id, answer, time_on_task_ms: elapsed, change };
    match annotator::respond(&s.recorder, &s.kinds, id, user.id, &sub).await {
        Ok(_) => Ok(Redirect::to(&format!("/work/a/{id}")).into_response()),
        // A page left open (or reached with Back) after the questionnaire was
        // submitted: its page says so and shows the code.
        Err(Error::Rejected { code: Code::AlreadySubmitted, .. }) => {
            Ok(Redirect::to(&format!("/work/a/{id}/done")).into_response())
        }
        Err(Error::Rejected { code: Code::LeaseExpired, .. }) => {
            let chosen = chosen_answer(&s, id, user.id, &posted).await;
            refused(&session, RefusedAnswer { assignment: id, item: item_id, reason: None, chosen }).await
        }
        // Refusals the annotator can act on are shown beside the task, what
        // they chose kept (but the earlier answer, when that is what is
        // kept); the rest (gone, not theirs) as error pages.
        Err(Error::Rejected { code, message }) => {
            let (reason, chosen) = match code {
                Code::AlreadyAnswered => (
                    "You already answered this task (perhaps in another tab or window). Your earlier answer, \
                     marked below, is kept; choose again to replace it."
                        .to_owned(),
                    None,
                ),
                _ => (
                    format!("Your answer was not saved: {message}. Please check it and send it again."),
                    chosen_answer(&s, id, user.id, &posted).await,
                ),
            };
            refused(&session, RefusedAnswer { assignment: id, item: item_id, reason: Some(reason), chosen }).await
        }
        Err(e) => Err(e.into()),
    }
}

/// What the annotator chose on the page, as the kind reads the form (kept
/// on the page when the answer is refused).
async fn chosen_answer(s: &AppState, id: Uuid, user: Uuid, fields: &[(String, String)]) -> Option<serde_json::Value> {
    let assignment = assignments::get_own(&s.pool, id, user).await.ok()?;
    let campaign = campaigns::get(&s.pool, assignment.campaign_id).await.ok()?;
    Some(s.pages.of(&campaign).ok()?.answer_from_form(fields))
}

async fn complete(OnPage(user): OnPage<CurrentUser>, State(s): State<AppState>, Path(id): Path<Uuid>) -> PageResult {
    let user = annotator(user)?;
    let completed = annotator::complete(&s.pool, &s.kinds, id, user.id).await?;
    s.forget_submitted(id);
    // An MTurk HIT is submitted from the thank-you page; else the
    // platform's completion address, when the campaign has one, takes the
    // worker back to be paid; else the code is shown.
    let hit = super::mturk::HitSubmission::from_platform_ids(
        invitations::platform_ids_of(&s.pool, completed.assignment.campaign_id, user.id).await?.as_ref(),
    );
    match completed.completion_url {
        Some(url) if hit.is_none() => Ok(Redirect::to(&url).into_response()),
        _ => {
            // Where every expert labels every batch, an expert goes straight
            // on to their next one: one key ends a batch (the task page's
            // "done, remaining" says it was counted), and starting a batch
            // holds back nobody. The thank-you page comes when none is left.
            let next = next_batch(&s, &user, completed.assignment.campaign_id).await?;
            Ok(Redirect::to(&next.map_or(format!("/work/a/{id}/done"), |a| format!("/work/a/{a}"))).into_response())
        }
    }
}

/// Whether submitting a batch of `campaign` opens the annotator's next one:
/// only where every expert labels every batch. Crowd questionnaires end on
/// the thank-you page with their code, and a batch fewer experts share (a
/// review, a Fashionpedia batch) is taken only when the expert asks, so
/// one who stops holds none back.
fn goes_on_after_submit(campaign: &campaigns::Campaign) -> bool {
    use crate::core::campaign::settings::AnnotatorsPerBatch;
    !campaign.settings.crowd() && campaign.settings.annotators_per_batch == AnnotatorsPerBatch::Every
}

/// The expert's next batch, started, when the campaign goes on after a
/// submit ([`goes_on_after_submit`]) and one is left for them. A batch that
/// cannot be started is not an error here: the batch just submitted is
/// saved, and the thank-you page says what comes next.
async fn next_batch(s: &AppState, user: &users::User, campaign_id: Uuid) -> Result<Option<Uuid>, Error> {
    let campaign = campaigns::get(&s.pool, campaign_id).await?;
    if !goes_on_after_submit(&campaign) || annotate::ensure_may_start(s, user, campaign_id).await.is_err() {
        return Ok(None);
    }
    match annotator::start(&s.pool, &s.kinds, &campaign, user.id, &[], false).await {
        Ok(next) => Ok(next.map(|a| a.id)),
        Err(e) => {
            tracing::warn!(error = %e, %campaign_id, "the next batch after a submit did not start");
            Ok(None)
        }
    }
}

#[derive(Template)]
#[template(path = "work_done.html")]
struct DonePage {
    campaign_name: String,
    campaign_id: Uuid,
    completion_code: Option<String>,
    /// Experts continue with the next batch from here.
    expert: bool,
    csrf_token: String,
    /// The MTurk HIT this work was for, submitted from here.
    hit: Option<super::mturk::HitSubmission>,
}

async fn done(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    let user = annotator(user)?;
    let assignment = assignments::get_own(&s.pool, id, user.id).await?;
    if assignment.state != AssignmentState::Completed {
        return Ok(Redirect::to(&format!("/work/a/{id}")).into_response());
    }
    let campaign = campaigns::get(&s.pool, assignment.campaign_id).await?;
    render(&DonePage {
        campaign_name: campaign.name.clone(),
        campaign_id: campaign.id,
        completion_code: annotator::completion_code(&campaign, 1),
        expert: !campaign.settings.crowd(),
        csrf_token: csrf::token(&session).await?,
        hit: super::mturk::HitSubmission::from_platform_ids(
            invitations::platform_ids_of(&s.pool, campaign.id, user.id).await?.as_ref(),
        ),
    })
}

/// An image under its name in the annotator's own assignment (see
/// `core::work::handles::image_name`): an upload, or an image of the lab's
/// bucket an item names, streamed from the store; crowd workers never see
/// the content-hash names or bucket keys, which are the same in every
/// questionnaire.
async fn image(
    OnPage(user): OnPage<CurrentUser>,
    State(s): State<AppState>,
    Path((id, name)): Path<(Uuid, String)>,
    headers: axum::http::HeaderMap,
) -> PageResult {
    let user = annotator(user)?;
    let assignment = assignments::get_own(&s.pool, id, user.id).await?;
    let payloads = crate::core::item::items::payloads(&s.pool, &assignment.item_order()).await?;
    let file = crate::core::work::handles::image_named(id, &name, payloads.values()).ok_or(Error::NotFound("image"))?;
    let content_type = crate::core::item::images::content_type_of(&file);
    let object = match file.strip_prefix(crate::core::item::images::UPLOADED) {
        Some(upload) => crate::storage::Object::Upload(upload),
        None => crate::storage::Object::InBucket(crate::core::item::images::bucket_key(&s.config.storage, &file)?),
    };
    // Only this worker's browser keeps it (the address is theirs alone).
    Ok(crate::http::images::serve(&s, object, content_type, crate::http::images::Caching::Private, &headers).await?)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_left_leads_an_expert_back_to_their_campaigns_and_a_worker_to_their_platform() {
        let page = |crowd| NoneLeft { campaign_name: "C".to_owned(), completion_code: None, crowd }.render();
        let expert = page(false).expect("page");
        assert!(expert.contains("<a href=\"/expert\">Back to your campaigns</a>"), "{expert}");
        let worker = page(true).expect("page");
        assert!(!worker.contains("/expert") && worker.contains("return your submission"), "{worker}");
    }
}
