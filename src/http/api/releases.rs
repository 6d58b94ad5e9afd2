//! Ground-truth releases: cut, list, download (streamed), compare; and the
//! campaign's settings, which releases record.

use crate::core::campaign::campaigns;
use crate::core::releases::diff::ReleaseDiff;
use crate::core::releases::{self, Author, ReleaseSummary};
use crate::error::Error;
use crate::http::error::{AppResult, ErrorBody};
use crate::http::extract::{Admin, Json, Path};
use crate::http::AppState;
use axum::extract::State;
use axum::http::{header, StatusCode};
use axum::response::{IntoResponse, Response};
use serde_json::Value;
use uuid::Uuid;

/// A release to cut.
#[derive(Debug, Default, serde::Deserialize, utoipa::ToSchema)]
pub struct NewRelease {
    /// A note stored with the release (what changed, why it was cut).
    #[serde(default)]
    #[schema(max_length = 2000)]
    pub note: String,
    /// The licence the data is published under, as the Hugging Face Hub
    /// names it (`cc-by-4.0`, `mit`, `other`); `unknown` when absent.
    #[serde(default)]
    #[schema(pattern = r"^\s*[A-Za-z0-9.+-]{0,64}\s*$")]
    pub license: Option<String>,
}

/// Cut the next release: an immutable, numbered snapshot of the ground truth,
/// the raw responses (pseudonymous), a manifest and a datasheet.
#[utoipa::path(post, path = "/api/v1/admin/campaigns/{id}/releases", tag = "releases", params(("id" = Uuid, Path)),
    request_body = NewRelease, responses((status = 201, body = ReleaseSummary), (status = 404, body = ErrorBody)))]
pub async fn create_release(
    Admin(user): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(body): Json<NewRelease>,
) -> AppResult<(StatusCode, axum::Json<ReleaseSummary>)> {
    let release = releases::create(
        &s.pool,
        &s.config.storage,
        &s.kinds,
        id,
        &Author::User(user.id),
        &body.note,
        body.license.as_deref(),
    )
    .await?;
    Ok((StatusCode::CREATED, axum::Json(release)))
}

/// A campaign's releases, newest first.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/releases", tag = "releases", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<ReleaseSummary>), (status = 404, body = ErrorBody)))]
pub async fn list_releases(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<ReleaseSummary>>> {
    campaigns::get(&s.pool, id).await?;
    Ok(axum::Json(releases::list(&s.pool, id).await?))
}

/// One release's summary. Releases are immutable: the other methods on a
/// release answer 405.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/releases/{number}", tag = "releases",
    params(("id" = Uuid, Path), ("number" = i32, Path)),
    responses((status = 200, body = ReleaseSummary), (status = 404, body = ErrorBody)))]
pub async fn get_release(
    _: Admin,
    State(s): State<AppState>,
    Path((id, number)): Path<(Uuid, i32)>,
) -> AppResult<axum::Json<ReleaseSummary>> {
    campaigns::get(&s.pool, id).await?;
    let release = releases::list(&s.pool, id).await?.into_iter().find(|r| r.number == number);
    Ok(axum::Json(release.ok_or(crate::error::Error::NotFound("release"))?))
}

/// Chunk size when streaming an archive out of the database.
const CHUNK: i64 = 1024 * 1024;

/// Download a release as one `.tar.gz`, streamed.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/releases/{number}/archive", tag = "releases",
    params(("id" = Uuid, Path), ("number" = i32, Path)),
    responses((status = 200, content_type = "application/gzip", body = Vec<u8>), (status = 404, body = ErrorBody)))]
pub async fn download_release(
    _: Admin,
    State(s): State<AppState>,
    Path((id, number)): Path<(Uuid, i32)>,
) -> AppResult<Response> {
    let name = format!("attachment; filename=\"release-{id}-v{number}.tar.gz\"");
    let size = match releases::archive_at(&s.pool, id, number).await? {
        releases::ArchiveAt::Table(size) => size,
        releases::ArchiveAt::Store { key, .. } => {
            // Streamed from the store as it comes (never held whole here).
            let fetched = s.config.storage.get(crate::storage::Object::Release(&key)).await.map_err(Error::from)?;
            let mut response = crate::http::images::stream(
                fetched,
                "application/gzip",
                crate::http::images::Caching::Private,
                &format!("\"{key}\""),
            );
            let disposition = axum::http::HeaderValue::from_str(&name).map_err(|e| Error::internal("naming", e))?;
            response.headers_mut().insert(header::CONTENT_DISPOSITION, disposition);
            // Admin data: no cache keeps it.
            response.headers_mut().insert(header::CACHE_CONTROL, axum::http::HeaderValue::from_static("no-store"));
            return Ok(response);
        }
    };
    let pool = s.pool.clone();
    let chunks = futures_util::stream::unfold(0i64, move |offset| {
        let pool = pool.clone();
        async move {
            if offset >= size {
                return None;
            }
            let chunk = releases::archive_chunk(&pool, id, number, offset, CHUNK)
                .await
                .map(axum::body::Bytes::from)
                .map_err(|e| std::io::Error::other(e.to_string()));
            Some((chunk, offset + CHUNK))
        }
    });
    Ok((
        [
            (header::CONTENT_TYPE, "application/gzip".to_owned()),
            (header::CONTENT_DISPOSITION, name),
            (header::CONTENT_LENGTH, size.to_string()),
        ],
        axum::body::Body::from_stream(chunks),
    )
        .into_response())
}

/// What changed between two releases: the campaign's state, items added or
/// removed, parameters and counts with both values, labels with the reasons
/// (new votes, new exclusions, changed parameters), and exclusions added and
/// removed with their reasons.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/releases/{from}/diff/{to}", tag = "releases",
    params(("id" = Uuid, Path), ("from" = i32, Path), ("to" = i32, Path)),
    responses((status = 200, body = ReleaseDiff), (status = 404, body = ErrorBody)))]
pub async fn diff_releases(
    _: Admin,
    State(s): State<AppState>,
    Path((id, from, to)): Path<(Uuid, i32, i32)>,
) -> AppResult<axum::Json<ReleaseDiff>> {
    Ok(axum::Json(releases::diff(&s.pool, &s.config.storage, &s.kinds, id, from, to).await?))
}

/// Whether a change after answers exist is confirmed.
#[derive(Debug, Default, serde::Deserialize, utoipa::IntoParams)]
pub struct Confirm {
    /// `true`: make the change although the campaign has answers (recorded).
    #[serde(default)]
    pub confirm: bool,
}

/// Replace the kind's settings of a campaign (validated as at creation; the
/// core's settings stay, except `lease_minutes` and `review` given here as
/// older clients send them). Once the campaign has answers a change is
/// refused (409 `confirm_change`) unless `confirm=true`; every change is
/// recorded (`GET .../config/history`), and releases record the settings
/// they used.
#[utoipa::path(put, path = "/api/v1/admin/campaigns/{id}/config", tag = "admin", params(("id" = Uuid, Path), Confirm),
    request_body = Object, responses((status = 200, body = campaigns::Campaign), (status = 409, body = ErrorBody),
                                     (status = 422, body = ErrorBody)))]
pub async fn set_config(
    Admin(user): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    crate::http::extract::Query(q): crate::http::extract::Query<Confirm>,
    Json(config): Json<serde_json::Map<String, Value>>,
) -> AppResult<axum::Json<campaigns::Campaign>> {
    let config = Value::Object(config);
    let changed =
        crate::core::campaign::config_changes::change(&s.pool, &s.kinds, id, &config, Some(user.id), q.confirm).await?;
    Ok(axum::Json(changed))
}

/// Change some of the kind's settings of a campaign: a JSON merge patch
/// (RFC 7396: keys given replace, `null` removes, the rest stay), checked
/// and recorded as `PUT .../config`.
#[utoipa::path(patch, path = "/api/v1/admin/campaigns/{id}/config", tag = "admin", params(("id" = Uuid, Path), Confirm),
    request_body = Object, responses((status = 200, body = campaigns::Campaign), (status = 409, body = ErrorBody),
                                     (status = 422, body = ErrorBody)))]
pub async fn patch_config(
    Admin(user): Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    crate::http::extract::Query(q): crate::http::extract::Query<Confirm>,
    Json(patch): Json<serde_json::Map<String, Value>>,
) -> AppResult<axum::Json<campaigns::Campaign>> {
    let mut config = campaigns::get(&s.pool, id).await?.config;
    crate::core::campaign::config_changes::merge_patch(&mut config, &Value::Object(patch));
    let changed =
        crate::core::campaign::config_changes::change(&s.pool, &s.kinds, id, &config, Some(user.id), q.confirm).await?;
    Ok(axum::Json(changed))
}

/// A campaign's configuration changes, oldest first.
#[utoipa::path(get, path = "/api/v1/admin/campaigns/{id}/config/history", tag = "admin", params(("id" = Uuid, Path)),
    responses((status = 200, body = Vec<crate::core::campaign::config_changes::ConfigChange>), (status = 404, body = ErrorBody)))]
pub async fn config_history(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
) -> AppResult<axum::Json<Vec<crate::core::campaign::config_changes::ConfigChange>>> {
    Ok(axum::Json(crate::core::campaign::config_changes::history(&s.pool, id).await?))
}

/// Change some of the core's settings of a campaign (`participants`,
/// `lease_minutes`, `annotators_per_batch`, `review`, and for crowd
/// campaigns `joins_per_address`, `first_answer_within`,
/// `ground_truth_from`); the rest stay.
#[utoipa::path(put, path = "/api/v1/admin/campaigns/{id}/settings", tag = "admin", params(("id" = Uuid, Path)),
    request_body = Object, responses((status = 200, body = campaigns::Campaign), (status = 422, body = ErrorBody)))]
pub async fn set_settings(
    _: Admin,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Json(changes): Json<serde_json::Map<String, Value>>,
) -> AppResult<axum::Json<campaigns::Campaign>> {
    Ok(axum::Json(campaigns::set_settings(&s.pool, &s.kinds, id, &changes).await?))
}
