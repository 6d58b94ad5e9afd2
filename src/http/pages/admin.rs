//! The admin's pages: the campaign list and a campaign's page, with the
//! actions an admin takes there (create, open/close, form batches, invite).

use super::{render, render_with, OnPage, PageResult, Refusal};
use crate::core::crowd::invitations;
use crate::core::truth::progress::{self, CampaignProgress};
use crate::core::{campaign::campaigns, work::batches};
use crate::error::Code;
use crate::error::Error;
use crate::http::extract::{Admin, Path};
use crate::http::{csrf, flash, AppState};
use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Form, Router};
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin", get(list).post(super::settings::create))
        .route("/admin/new", get(super::settings::new_campaign))
        .route("/admin/campaigns/{id}", get(page))
        .route("/admin/campaigns/{id}/state", post(set_state))
        .route("/admin/campaigns/{id}/settings", post(super::settings::save_settings))
        .route("/admin/images", post(upload_image))
        .route("/admin/campaigns/{id}/archive", post(archive))
        .route("/admin/campaigns/{id}/unarchive", post(unarchive))
        .route("/admin/campaigns/{id}/delete", post(delete))
        .route("/admin/campaigns/{id}/batches", post(form_batches))
        .route("/admin/campaigns/{id}/invitations", post(invite))
        .route("/admin/campaigns/{id}/intro", post(save_intro))
        .route("/admin/campaigns/{id}/completion", post(save_completion))
        .route("/admin/campaigns/{id}/invitations/{token}/revoke", post(revoke_invitation))
        .route("/admin/campaigns/{id}/invitations/{token}/end", post(end_invitation))
        .route("/admin/campaigns/{id}/ended-workers/readmit", post(readmit_worker))
        .route(
            "/admin/campaigns/{id}/import",
            post(import).layer(axum::extract::DefaultBodyLimit::max(crate::http::import_limit())),
        )
}

#[derive(Template)]
#[template(path = "admin_campaigns.html")]
struct ListPage {
    archived: bool,
    admin: String,
    campaigns: Vec<(campaigns::Campaign, CampaignProgress)>,
    kinds: Vec<(&'static str, &'static str)>,
    csrf_token: String,
}

#[derive(serde::Deserialize, Default)]
struct ListQuery {
    #[serde(default)]
    archived: bool,
}

async fn list(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    axum::extract::Query(q): axum::extract::Query<ListQuery>,
) -> PageResult {
    let mut rows = Vec::new();
    for c in campaigns::list_by_archive(&s.pool, q.archived).await? {
        let p = progress::of_campaign(&s.pool, &s.kinds, &s.caches, &c).await?;
        rows.push((c, p));
    }
    render(&ListPage {
        archived: q.archived,
        admin: admin.display_name(),
        campaigns: rows,
        kinds: s.kinds.all().map(|k| (k.name(), k.title())).collect(),
        csrf_token: csrf::token(&session).await?,
    })
}

#[derive(Template)]
#[template(path = "admin_campaign.html")]
struct CampaignPage {
    campaign: campaigns::Campaign,
    kind_title: &'static str,
    import_hint: &'static str,
    /// Items come only through the kind's page (no generic import box).
    own_import: bool,
    kind_page: Option<&'static str>,
    progress: CampaignProgress,
    invitations: Vec<LinkRow>,
    /// Workers kept out of the campaign (their sessions ended through a link).
    ended_workers: Vec<invitations::EndedWorker>,
    releases: Vec<crate::core::releases::ReleaseSummary>,
    settings: Vec<super::settings::SettingRow>,
    annotators: Vec<progress::AnnotatorProgress>,
    annotators_shown: i64,
    csrf_token: String,
    /// What workers read before the first task.
    intro: crate::core::campaign::intro::Intro,
    /// A form the service refused, shown beside it with what was typed.
    refused: Option<Refusal>,
    /// Before the first batches: how many forming them would make, or what
    /// is missing.
    readiness: Option<Result<usize, String>>,
    /// An adaptive overlap's progress: decided and undecided items, ratings saved.
    adaptive: Option<crate::core::work::overlap::AdaptiveProgress>,
}

impl CampaignPage {
    /// The refusal of the form in section `form`, if it was refused.
    fn refusal(&self, form: &str) -> Option<String> {
        Refusal::of_form(&self.refused, form)
    }

    /// What the admin typed in field `field` of the refused form `form`.
    fn kept(&self, form: &str, field: &str) -> String {
        Refusal::kept_in(&self.refused, form, field)
    }
}

/// An invitation link as the campaign page lists it.
struct LinkRow {
    /// The whole link, as handed to the crowd platform.
    link: String,
    /// Prolific's study URL: the link with Prolific's placeholders.
    prolific: String,
    /// MTurk's ExternalQuestion XML naming the link.
    mturk: String,
    info: invitations::InvitationInfo,
}

/// Annotators listed on the campaign page at most (the API lists all).
const ANNOTATORS_SHOWN: i64 = 200;

async fn page(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    show(&s, &session, id, None).await
}

/// Runs a campaign-page form's outcome: success flashes its message and goes
/// back to the form's section; a refusal shows the page again, with the
/// refusal's status, the message beside the form and the fields as typed;
/// anything else is an error page.
pub async fn act(
    s: &AppState,
    session: &Session,
    id: Uuid,
    form: &'static str,
    kept: Vec<(String, String)>,
    outcome: Result<String, Error>,
) -> PageResult {
    let to = format!("/admin/campaigns/{id}");
    crate::http::pages::act(session, outcome, &to, form, kept, |r| show(s, session, id, Some(r))).await
}

/// The campaign page, with a refused form beside its section if any.
pub(super) async fn show(s: &AppState, session: &Session, id: Uuid, refused: Option<Refusal>) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let kind = s.kinds.of(&campaign)?;
    // Independent reads, side by side: on a crowd-sized campaign the counts
    // scan hundreds of thousands of responses.
    let (invitations, ended_workers, progress, releases, annotators, intro) = tokio::try_join!(
        invitations::list(&s.pool, id),
        invitations::ended_workers(&s.pool, id),
        progress::of_campaign(&s.pool, &s.kinds, &s.caches, &campaign),
        crate::core::releases::list(&s.pool, id),
        progress::per_annotator(&s.pool, &s.caches, id, Some(ANNOTATORS_SHOWN)),
        crate::core::campaign::intro::get(&s.pool, id),
    )?;
    let invitations = invitations
        .into_iter()
        .map(|info| {
            let base = format!("{}/join/{}", s.config.public_url, info.token);
            LinkRow {
                link: format!("{base}?{}=", info.id_param),
                prolific: format!(
                    "{base}?PROLIFIC_PID={{{{%PROLIFIC_PID%}}}}&STUDY_ID={{{{%STUDY_ID%}}}}&SESSION_ID={{{{%SESSION_ID%}}}}"
                ),
                mturk: external_question(&base),
                info,
            }
        })
        .collect();
    let mut settings: Vec<super::settings::SettingRow> =
        super::settings::core_rows(&campaign.settings, &kind.about().default_settings)
            .into_iter()
            .chain(super::settings::rows(campaigns::settings(&s.kinds, &campaign)?))
            .collect();
    // Refused settings show as the admin typed them.
    if let Some(r) = refused.as_ref().filter(|r| r.form == "settings") {
        super::settings::show_as_typed(&mut settings, &r.kept);
    }
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    let readiness = if progress.batches == 0 { batches::readiness(&s.pool, &s.kinds, &campaign).await? } else { None };
    let adaptive = crate::core::work::overlap::progress(&s.pool, &campaign).await?;
    render_with(
        status,
        &CampaignPage {
            kind_title: kind.title(),
            import_hint: kind.about().import.hint(),
            own_import: kind.about().import.on_own_page(),
            kind_page: s.pages.of(&campaign)?.admin_page(),
            progress,
            releases,
            settings,
            annotators,
            annotators_shown: ANNOTATORS_SHOWN,
            campaign,
            invitations,
            ended_workers,
            csrf_token: csrf::token(session).await?,
            intro,
            refused,
            readiness,
            adaptive,
        },
    )
}

#[derive(serde::Deserialize)]
struct IntroForm {
    #[serde(default)]
    text: String,
    #[serde(default)]
    estimated_minutes: String,
    #[serde(default)]
    pay: String,
    #[serde(default)]
    consent: String,
}

/// MTurk's ExternalQuestion for a link (MTurk appends `workerId`,
/// `assignmentId` and `hitId` itself; `&` is escaped as XML needs).
fn external_question(link: &str) -> String {
    let url = link.replace('&', "&amp;");
    format!(
        "<ExternalQuestion xmlns=\"http://mechanicalturk.amazonaws.com/AWSMechanicalTurkDataSchemas/2006-07-14/ExternalQuestion.xsd\">\n  \
         <ExternalURL>{url}</ExternalURL>\n  <FrameHeight>0</FrameHeight>\n</ExternalQuestion>"
    )
}

/// The completion form: the code and the platform's address, as typed.
#[derive(serde::Deserialize)]
struct CompletionForm {
    #[serde(default)]
    code: String,
    #[serde(default)]
    url: String,
}

async fn save_completion(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<CompletionForm>,
) -> PageResult {
    let kept = vec![("code".to_owned(), form.code.clone()), ("url".to_owned(), form.url.clone())];
    let outcome = campaigns::set_completion(&s.pool, id, Some(&form.code), Some(&form.url)).await.map(|c| {
        match c.completion_url {
            Some(url) => format!("Saved: finishing workers get the code {} and are sent to {url}.", c.completion_code),
            None => format!("Saved: finishing workers get the code {} to copy.", c.completion_code),
        }
    });
    act(&s, &session, id, "completion", kept, outcome).await
}

async fn save_intro(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<IntroForm>,
) -> PageResult {
    let kept = vec![
        ("text".to_owned(), form.text.clone()),
        ("estimated_minutes".to_owned(), form.estimated_minutes.clone()),
        ("pay".to_owned(), form.pay.clone()),
        ("consent".to_owned(), form.consent.clone()),
    ];
    let outcome = async {
        let estimated_minutes = match form.estimated_minutes.trim() {
            "" => None,
            text => Some(text.parse::<i32>().map_err(|_| {
                Error::invalid(Code::InvalidIntro, "the estimated time is a whole number of minutes (1 to 1,440)")
            })?),
        };
        let intro = crate::core::campaign::intro::Intro {
            text: form.text,
            estimated_minutes,
            pay: Some(form.pay),
            consent: Some(form.consent),
        };
        crate::core::campaign::intro::set(&s.pool, id, intro).await?;
        Ok("Introduction saved: workers see it before their first task.".to_owned())
    }
    .await;
    act(&s, &session, id, "intro", kept, outcome).await
}

#[derive(serde::Deserialize)]
struct StateForm {
    state: crate::core::campaign::states::CampaignState,
}

async fn set_state(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<StateForm>,
) -> PageResult {
    let outcome =
        campaigns::set_state(&s.pool, id, form.state).await.map(|_| format!("The campaign is now {}.", form.state));
    act(&s, &session, id, "actions", Vec::new(), outcome).await
}

async fn form_batches(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
) -> PageResult {
    let outcome =
        batches::form(&s.pool, &s.kinds, id, rand::random()).await.map(|formed| format!("{formed} batch(es) formed."));
    act(&s, &session, id, "actions", Vec::new(), outcome).await
}

/// The new-link form: places, optional (an empty field is no limit).
#[derive(serde::Deserialize)]
struct InviteForm {
    #[serde(default)]
    places: String,
    #[serde(default)]
    id_param: String,
}

async fn invite(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<InviteForm>,
) -> PageResult {
    let kept = vec![("places".to_owned(), form.places.clone()), ("id_param".to_owned(), form.id_param.clone())];
    let outcome = async {
        let places = match form.places.trim() {
            "" => None,
            text => Some(text.parse::<i32>().map_err(|_| {
                Error::invalid(
                    Code::InvalidPlaces,
                    format!("places must be a whole number from 1 to {}", invitations::MAX_PLACES),
                )
            })?),
        };
        let link = invitations::NewLink { places, id_param: Some(form.id_param.trim().to_owned()) };
        invitations::create(&s.pool, id, admin.id, &link).await?;
        Ok("Invitation link created (listed below).".to_owned())
    }
    .await;
    act(&s, &session, id, "invitations", kept, outcome).await
}

async fn archive(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    campaigns::archive(&s.pool, id, true).await?;
    Ok(flash::redirect(
        &session,
        "Campaign archived: closed, read-only, hidden from the list; exports still work.",
        &format!("/admin/campaigns/{id}"),
    )
    .await)
}

async fn unarchive(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    campaigns::archive(&s.pool, id, false).await?;
    Ok(flash::redirect(&session, "Campaign unarchived (still closed).", &format!("/admin/campaigns/{id}")).await)
}

async fn delete(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    campaigns::delete(&s.pool, id).await?;
    Ok(flash::redirect(&session, "Campaign deleted.", "/admin").await)
}

async fn end_invitation(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path((id, token)): Path<(Uuid, String)>,
) -> PageResult {
    let workers = invitations::revoke_and_end(&s.pool, id, &token).await?;
    let ended = crate::http::session_store::end_sessions_of(&s.pool, &s.sessions, &workers).await?;
    flash::set(
        &session,
        format!(
            "Invitation link revoked and its sessions ended ({ended} session(s) of {} worker(s)): nobody gets in \
             through it again, and those who joined through it are kept out of the campaign through every link \
             (let one back in below).",
            workers.len()
        ),
    )
    .await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}")).into_response())
}

/// The worker a "let back in" form names.
#[derive(serde::Deserialize)]
struct ReadmitForm {
    #[serde(default)]
    worker_id: String,
}

/// Lets a worker whose sessions were ended back into the campaign.
async fn readmit_worker(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    Form(form): Form<ReadmitForm>,
) -> PageResult {
    campaigns::ensure_writable(&s.pool, id).await?;
    invitations::readmit(&s.pool, id, &form.worker_id).await?;
    flash::set(&session, format!("Worker {} may come back through a link that is still open.", form.worker_id.trim()))
        .await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}#invitations")).into_response())
}

async fn revoke_invitation(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path((id, token)): Path<(Uuid, String)>,
) -> PageResult {
    invitations::revoke(&s.pool, id, &token).await?;
    flash::set(
        &session,
        "Invitation link revoked: nobody new can join through it, and those who joined through it start no new \
         questionnaire. A worker holding one may finish it, and everyone still sees a code they earned.",
    )
    .await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}")).into_response())
}

#[derive(serde::Deserialize)]
struct UploadQuery {
    campaign: Option<Uuid>,
}

/// Stores an image chosen in the page's file field and says its URL (to
/// use in item payloads).
async fn upload_image(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    axum::extract::Query(q): axum::extract::Query<UploadQuery>,
    mut parts: axum::extract::Multipart,
) -> PageResult {
    use crate::http::error::AppError;
    // Several files may be chosen at once: all are checked before any is stored.
    let mut chosen = Vec::new();
    while let Some(field) = parts
        .next_field()
        .await
        .map_err(|e| AppError::BadRequest { code: Code::UnreadableUpload, message: e.body_text() })?
    {
        if field.name() == Some("image") {
            let (content_type, name) =
                (field.content_type().unwrap_or_default().to_owned(), field.file_name().unwrap_or("image").to_owned());
            let bytes = field
                .bytes()
                .await
                .map_err(|e| AppError::BadRequest { code: Code::UnreadableUpload, message: e.body_text() })?;
            if !bytes.is_empty() {
                chosen.push((name, content_type, bytes));
            }
        }
    }
    if chosen.is_empty() {
        return Err(crate::error::Error::invalid(Code::MissingImage, "choose an image file to upload").into());
    }
    let mut checked = Vec::with_capacity(chosen.len());
    for (name, content_type, bytes) in &chosen {
        checked.push(crate::core::item::images::check(content_type, bytes).await.map_err(|e| match e {
            crate::error::Error::Rejected { code, message } => {
                crate::error::Error::invalid(code, format!("{name}: {message}; no image was stored"))
            }
            other => other,
        })?);
    }
    let mut urls = Vec::with_capacity(checked.len());
    for image in checked {
        urls.push(crate::core::item::images::store_checked(&s.config.storage, image).await?.url);
    }
    let message = match urls.as_slice() {
        [one] => format!("Image uploaded: use {one} in your items."),
        many => format!("{} images uploaded: use {} in your items.", many.len(), many.join(", ")),
    };
    flash::set(&session, message).await;
    let back = q.campaign.map_or_else(|| "/admin".to_owned(), |c| format!("/admin/campaigns/{c}"));
    Ok(Redirect::to(&back).into_response())
}

/// Imports items from the campaign page: pasted text (a form) or an uploaded
/// file (multipart), in the kind's import format.
async fn import(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    req: axum::extract::Request,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let upload = super::upload::read(req).await?;
    let kept = Refusal::keep_pasted(&upload);
    let outcome = async {
        let kind = s.kinds.of(&campaign)?.about();
        let items = kind.import.parse(kind.title, upload.text()?).map_err(Error::from)?;
        let n = crate::core::item::items::import_with_store(&s.pool, &s.config.storage, &s.kinds, id, &items).await?;
        Ok(format!("{n} item(s) imported."))
    }
    .await;
    act(&s, &session, id, "import", kept, outcome).await
}
