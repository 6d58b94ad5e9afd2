//! Admin routes: campaigns, items, batches, invitations, responses, users, tokens.

use crate::auth::users::{self, User};
use crate::auth::{tokens, Role};
use crate::core::campaign::campaigns::{self, Campaign};
use crate::core::campaign::states::CampaignState;
use crate::core::crowd::invitations;
use crate::core::item::items::{self, Item};
use crate::core::item::new_item::NewItem;
use crate::core::truth::progress::{self, CampaignProgress};
use crate::core::work::batches;
use crate::core::work::responses::{self, Response};
use crate::error::Error;
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, MaybeJson, Path};
use crate::http::AppState;
use axum::extract::State;
use axum::http::StatusCode;
use serde_json::Value;
use uuid::Uuid;

/// A new campaign.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct NewCampaign {
    /// Task kind, e.g. `vton`.
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Kind-specific configuration; defaults fill what is left out.
    #[serde(default)]
    pub config: Value,
    /// The core's settings (`participants`, `lease_minutes`,
    /// `annotators_per_batch`, `review`); the kind's defaults fill what is left out.
    #[serde(default)]
    #[schema(value_type = Object)]
    pub settings: serde_json::Map<String, Value>,
}

/// Which campaigns to list.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
pub struct ListQuery {
    /// `true`: the archived campaigns instead of the others.
    #[serde(default)]
    pub archived: bool,
}

/// List campaigns (archived ones only with `?archived=true`).
#[utoipa::path(get, path = "/api/v1/admin/campaigns", tag = "admin", params(ListQuery),
    responses((status = 200, body = Vec<Campaign>), (status = 401, body = ErrorBody), (status = 403, body = ErrorBody)))]
pub async fn list_campaigns(
    _: Admin,
    State(s): State<AppState>,
    crate::http::extract::Query(q): crate::http::extract::Query<ListQuery>,
) -> AppResult<axum::Json<Vec<Campaign>>> {
    Ok(axum::Json(campaigns::list_by_archive(&s.pool, q.archived).await?))
}

/// Archive a campaign: closed, read-only, hidden from the default list, still exportable.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/archive", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Campaign), (status = 404, body = ErrorBody)))]
pub async fn archive_campaign(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Campaign>> {
    Ok(axum::Json(campaigns::archive(&s.pool, id, true).await?))
}

/// Bring an archived campaign back (it stays closed).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/unarchive", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Campaign), (status = 404, body = ErrorBody)))]
pub async fn unarchive_campaign(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Campaign>> {
    Ok(axum::Json(campaigns::archive(&s.pool, id, false).await?))
}

/// Delete a campaign without responses or releases (others can only be archived).
#[utoipa::path(delete, path = "/api/v1/admin/campaigns/{id}", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 204), (status = 404, body = ErrorBody), (status = 409, body = ErrorBody)))]
pub async fn delete_campaign(_: Admin, State(s): State<AppState>, Path(id): Path<Uuid>) -> AppResult<StatusCode> {
    campaigns::delete(&s.pool, id).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// Create a campaign (state `draft`).
#[utoipa::path(post, path = "/api/v1/admin/campaigns", tag = "admin", request_body = NewCampaign,
    responses((status = 201, body = Campaign), (status = 422, body = ErrorBody)))]
pub async fn create_campaign(
    _: Admin,
    State(s): State<AppState>,
    Json(body): Json<NewCampaign>,
) -> AppResult<(StatusCode, axum::Json<Campaign>)> {
    let c = campaigns::create(&s.pool, &s.kinds, &body.kind, &body.name, &body.config, &body.settings).await?;
    Ok((StatusCode::CREATED, axum::Json(c)))
}

/// A campaign with its progress and completion code.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct CampaignDetail {
    /// The campaign.
    pub campaign: Campaign,
    /// Code workers see when they finish.
    pub completion_code: String,
    /// Where workers are sent when they finish, if set.
    pub completion_url: Option<String>,
    /// Progress.
    pub progress: CampaignProgress,
    /// Invitation links.
    pub invitations: Vec<String>,
    /// Each annotator's progress (every expert, in an expert campaign).
    pub annotators: Vec<progress::AnnotatorProgress>,
}

/// Get a campaign and its progress.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = CampaignDetail), (status = 404, body = ErrorBody)))]
pub async fn get_campaign(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<CampaignDetail>> {
    let campaign = campaigns::get(&s.pool, id).await?;
    let invitations = invitations::tokens_of(&s.pool, id)
        .await?
        .into_iter()
        .map(|t| format!("{}/join/{t}?worker_id=", s.config.public_url))
        .collect();
    Ok(axum::Json(CampaignDetail {
        completion_code: campaign.completion_code.clone(),
        completion_url: campaign.completion_url.clone(),
        progress: progress::of_campaign(&s.pool, &s.kinds, &s.caches, &campaign).await?,
        annotators: progress::per_annotator(&s.pool, &s.caches, id, None).await?,
        campaign,
        invitations,
    }))
}

/// A state change.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct StateChange {
    /// `draft`, `open` or `closed`.
    pub state: CampaignState,
}

/// Open, close or return a campaign to draft.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/state", tag = "admin", params(("id" = Uuid, Path)), request_body = StateChange,
    responses((status = 200, body = Campaign), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn set_state(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<StateChange>,
) -> AppResult<axum::Json<Campaign>> {
    Ok(axum::Json(campaigns::set_state(&s.pool, id, body.state).await?))
}

/// Items to import.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct ItemImport {
    /// The items; all are validated before any is stored.
    pub items: Vec<NewItem>,
}

/// How many items were imported.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Imported {
    /// Count.
    pub imported: usize,
}

/// Import items (all or nothing).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/items", tag = "admin", params(("id" = Uuid, Path)), request_body = ItemImport,
    responses((status = 201, body = Imported), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn import_items(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<ItemImport>,
) -> AppResult<(StatusCode, axum::Json<Imported>)> {
    let imported = items::import_with_store(&s.pool, &s.config.storage, &s.kinds, id, &body.items).await?;
    Ok((StatusCode::CREATED, axum::Json(Imported { imported })))
}

/// List items with their gold answers.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/items", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<Item>)))]
pub async fn list_items(_: Admin, State(s): State<AppState>, Path(id): Path<Uuid>) -> AppResult<axum::Json<Vec<Item>>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(items::list(&s.pool, id).await?))
}

/// Batch formation options.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct FormBatches {
    /// Seed for the kind's random choices, for reproducible formation.
    #[serde(default)]
    pub seed: Option<u64>,
}

/// How many batches were formed.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Formed {
    /// Count.
    pub batches: usize,
}

/// Form batches of the campaign's items not yet in one (call again after
/// adding items, e.g. a VSD pool grown by a new model's rankings).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/batches", tag = "admin", params(("id" = Uuid, Path)), request_body = FormBatches,
    responses((status = 201, body = Formed), (status = 409, body = ErrorBody)))]
pub async fn form_batches(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<FormBatches>,
) -> AppResult<(StatusCode, axum::Json<Formed>)> {
    let seed = body.seed.unwrap_or_else(rand::random);
    let batches = batches::form(&s.pool, &s.kinds, id, seed).await?;
    Ok((StatusCode::CREATED, axum::Json(Formed { batches })))
}

/// A new invitation link.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct Invitation {
    /// The token.
    pub token: String,
    /// The link to hand to the crowd platform; it appends the worker id.
    pub url: String,
    /// Workers the link admits at most (none: no limit).
    pub places: Option<i32>,
}

/// What a new invitation link may say (the body may be left out).
#[derive(Default, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct NewInvitation {
    /// Workers the link admits at most, as a crowd platform's study has
    /// places; those who joined may always return. Left out: no limit.
    #[schema(minimum = 1, maximum = 1_000_000)]
    pub places: Option<i32>,
    /// The query parameter the link reads the worker's id from, as the
    /// crowd platform appends it (default `worker_id`; Prolific's
    /// `PROLIFIC_PID` and MTurk's `workerId` are read on every link).
    #[schema(pattern = r"^([A-Za-z][A-Za-z0-9_.\-]{0,63})?$")]
    pub id_param: Option<String>,
}

/// Create an invitation link for crowd workers (crowd campaigns only).
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/invitations", tag = "admin", params(("id" = Uuid, Path)),
    request_body(content = Option<NewInvitation>, description = "optional"),
    responses((status = 201, body = Invitation), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_invitation(
    Admin(admin): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    MaybeJson(body): MaybeJson<NewInvitation>,
) -> AppResult<(StatusCode, axum::Json<Invitation>)> {
    let body = body.unwrap_or_default();
    let places = body.places;
    let link = invitations::NewLink { places, id_param: body.id_param };
    let token = invitations::create(&s.pool, id, admin.id, &link).await?;
    let id_param = link.id_param.as_deref().filter(|p| !p.is_empty());
    let url = format!("{}/join/{token}?{}=", s.config.public_url, id_param.unwrap_or(invitations::DEFAULT_ID_PARAM));
    Ok((StatusCode::CREATED, axum::Json(Invitation { token, url, places })))
}

/// All responses of a campaign, excluded ones included.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/responses", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<Response>)))]
pub async fn list_responses(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<Response>>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(responses::in_campaign(&s.pool, id).await?))
}

/// Why a response is excluded.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct Exclusion {
    /// The reason, recorded with the response.
    #[schema(pattern = r"\S")]
    pub reason: String,
}

/// Exclude a response from ground truth (it is kept, marked).
#[utoipa::path(post, path = "/api/v1/admin/responses/{id}/exclude", tag = "admin", params(("id" = Uuid, Path)), request_body = Exclusion,
    responses((status = 204), (status = 404, body = ErrorBody)))]
pub async fn exclude_response(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<Exclusion>,
) -> AppResult<StatusCode> {
    responses::exclude(&s.pool, id, &body.reason).await?;
    Ok(StatusCode::NO_CONTENT)
}

/// A new admin or expert account.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct NewUser {
    /// `admin` or `expert`.
    #[schema(inline)]
    pub role: AccountRole,
    /// Login name: 1-64 letters, digits, or `. _ - @`.
    #[schema(pattern = "^[A-Za-z0-9._@-]{1,64}$")]
    pub name: String,
    /// Password (at least 8 characters).
    #[schema(min_length = 8)]
    pub password: String,
}

/// The roles that have accounts (workers join through invitation links).
#[derive(Clone, Copy, serde::Deserialize, utoipa::ToSchema)]
#[serde(rename_all = "lowercase")]
pub enum AccountRole {
    /// An administrator.
    Admin,
    /// An expert annotator.
    Expert,
}

/// Create an admin or expert account.
#[utoipa::path(post, path = "/api/v1/admin/users", tag = "admin", request_body = NewUser,
    responses((status = 201, body = User), (status = 409, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn create_user(
    _: Admin,
    State(s): State<AppState>,
    Json(body): Json<NewUser>,
) -> AppResult<(StatusCode, axum::Json<User>)> {
    let role = match body.role {
        AccountRole::Admin => Role::Admin,
        AccountRole::Expert => Role::Expert,
    };
    let user = users::create(&s.pool, role, &body.name, &body.password).await?;
    Ok((StatusCode::CREATED, axum::Json(user)))
}

/// A request for an API token.
#[derive(serde::Deserialize, utoipa::ToSchema)]
pub struct TokenRequest {
    /// The user the token acts as (the caller, or an expert); defaults to the caller.
    #[serde(default)]
    pub user: Option<String>,
    /// Days until the token stops working by itself (default and most: 365, or `ATELIER_TOKEN_MAX_DAYS`).
    #[serde(default)]
    #[schema(minimum = 1, maximum = 365)]
    pub expires_in_days: Option<u32>,
}

/// A new API token, shown once.
#[derive(serde::Serialize, utoipa::ToSchema)]
pub struct NewToken {
    /// The token's id, to list and revoke it.
    pub id: Uuid,
    /// Send as `Authorization: Bearer <token>`.
    pub token: String,
}

/// Create a personal API token.
#[utoipa::path(post, path = "/api/v1/admin/tokens", tag = "admin", request_body = TokenRequest,
    responses((status = 201, body = NewToken), (status = 404, body = ErrorBody)))]
pub async fn create_token(
    Admin(admin): Admin,
    State(s): State<AppState>,
    Json(body): Json<TokenRequest>,
) -> AppResult<(StatusCode, axum::Json<NewToken>)> {
    let user = match body.user {
        Some(name) => users::by_name(&s.pool, &name).await?.ok_or(Error::NotFound("user"))?,
        None => admin.clone(),
    };
    let (id, token) = tokens::create_for(&s.pool, &admin, &user, body.expires_in_days).await?;
    Ok((StatusCode::CREATED, axum::Json(NewToken { id, token })))
}

/// The campaign's ground truth as its kind aggregates it (JSON).
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/ground-truth", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Object), (status = 404, body = ErrorBody)))]
pub async fn ground_truth(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::response::Response> {
    use axum::response::IntoResponse;
    // Sent as the cache keeps it: already JSON.
    let json = crate::core::truth::ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?;
    Ok(([(axum::http::header::CONTENT_TYPE, "application/json")], json).into_response())
}

/// Whether an export includes results not yet final.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
pub struct PartialQuery {
    /// `true`: include results not yet final (e.g. VSD pairs not every
    /// expert has answered), marked in a `complete` column.
    #[serde(default)]
    pub partial: bool,
}

/// The campaign's ground truth as CSV (final results only unless `partial=true`).
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/ground-truth.csv", tag = "admin",
    params(("id" = Uuid, Path), PartialQuery),
    responses((status = 200, content_type = "text/csv", body = String), (status = 404, body = ErrorBody)))]
pub async fn ground_truth_csv(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    crate::http::extract::Query(query): crate::http::extract::Query<PartialQuery>,
) -> AppResult<axum::response::Response> {
    let chunks = crate::core::truth::ground_truth::csv(&s.pool, &s.kinds, &s.caches, id, query.partial).await?;
    let campaign = campaigns::get(&s.pool, id).await?;
    let name = super::export_file_name(&campaign, "ground-truth", "csv");
    Ok(super::chunks_attachment("text/csv; charset=utf-8", &name, chunks))
}

/// Every response as CSV, excluded ones with their reason.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/responses.csv", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, content_type = "text/csv", body = String), (status = 404, body = ErrorBody)))]
pub async fn responses_csv(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::response::Response> {
    let campaign = campaigns::get(&s.pool, id).await?;
    let chunks = crate::core::truth::responses_export::csv_chunks(&s.pool, id).await?;
    let name = super::export_file_name(&campaign, "responses", "csv");
    Ok(super::streamed_attachment("text/csv; charset=utf-8", &name, chunks))
}

/// Upload an image (PNG, JPEG, GIF or WebP; at most 5 MB) as the raw request
/// body with its Content-Type; returns the URL to use in item payloads.
#[utoipa::path(post, path = "/api/v1/admin/images", tag = "admin",
    request_body(content = Vec<u8>, content_type = "image/png", description = "The image bytes"),
    responses((status = 201, body = crate::core::item::images::StoredImage), (status = 413, body = ErrorBody), (status = 422, body = ErrorBody)))]
pub async fn upload_image(
    _: Admin,
    State(s): State<AppState>,
    headers: axum::http::HeaderMap,
    body: axum::body::Bytes,
) -> AppResult<(StatusCode, axum::Json<crate::core::item::images::StoredImage>)> {
    let content_type = headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()).unwrap_or_default();
    let stored = crate::core::item::images::store(&s.config.storage, content_type, &body).await?;
    Ok((StatusCode::CREATED, axum::Json(stored)))
}

/// The campaign's introduction for workers: instructions, time, pay, consent.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/intro", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = crate::core::campaign::intro::Intro), (status = 404, body = ErrorBody)))]
pub async fn get_intro(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<crate::core::campaign::intro::Intro>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(crate::core::campaign::intro::get(&s.pool, id).await?))
}

/// Replace the campaign's introduction: shown before the first task, with a
/// consent box to tick when `consent` is set (workers who started before
/// keep going).
#[utoipa::path(put, path = "/api/v1/admin/campaigns/{id}/intro", tag = "admin", params(("id" = Uuid, Path)),
    request_body = crate::core::campaign::intro::Intro,
    responses((status = 200, body = crate::core::campaign::intro::Intro), (status = 422, body = ErrorBody)))]
pub async fn set_intro(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<crate::core::campaign::intro::Intro>,
) -> AppResult<axum::Json<crate::core::campaign::intro::Intro>> {
    Ok(axum::Json(crate::core::campaign::intro::set(&s.pool, id, body).await?))
}

/// What a crowd worker gets on finishing.
#[derive(Debug, serde::Deserialize, serde::Serialize, utoipa::ToSchema)]
pub struct Completion {
    /// The completion code (e.g. the one the platform gives the study);
    /// unchanged when absent. 4 to 64 letters, digits, `-` or `_`.
    #[serde(default)]
    #[schema(pattern = r"^\s*[A-Za-z0-9_-]{4,64}\s*$")]
    pub code: Option<String>,
    /// The platform's completion address workers are sent to (none: the
    /// code is shown with a copy button).
    #[serde(default)]
    #[schema(pattern = r"^\s*(https://\S*)?\s*$")]
    pub url: Option<String>,
}

/// Set the completion code and address of a crowd campaign.
#[utoipa::path(put, path = "/api/v1/admin/campaigns/{id}/completion", tag = "admin", params(("id" = Uuid, Path)),
    request_body = Completion, responses((status = 200, body = Completion), (status = 422, body = ErrorBody)))]
pub async fn set_completion(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<Completion>,
) -> AppResult<axum::Json<Completion>> {
    let c = campaigns::set_completion(&s.pool, id, body.code.as_deref(), body.url.as_deref()).await?;
    Ok(axum::Json(Completion { code: Some(c.completion_code), url: c.completion_url }))
}
