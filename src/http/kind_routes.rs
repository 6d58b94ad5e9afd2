//! What a task kind adds to the HTTP surface. Each kind builds one of these
//! in its own folder; the application merges them, so this layer never
//! names a kind.

use super::error::AppError;
use super::extract::Path;
use super::AppState;
use crate::core::campaign::campaigns::{self, Campaign};
use crate::error::{Code, Error};
use axum::extract::FromRequestParts;
use axum::http::request::Parts;
use axum::Router;
use std::marker::PhantomData;
use utoipa_axum::router::OpenApiRouter;

/// A kind's own routes.
#[derive(Default)]
pub struct KindRoutes {
    /// JSON API routes, documented in the same OpenAPI document as the core's.
    pub api: OpenApiRouter<AppState>,
    /// JSON API routes that take import-sized bodies (see [`super::import_limit`]).
    pub imports: OpenApiRouter<AppState>,
    /// Page routes (admin pages of the kind).
    pub pages: Router<AppState>,
}

/// A file a kind keeps beside its code (its task page's styles or script),
/// served with a short cache lifetime: `asset("text/css", include_str!(...))`.
pub fn asset(content_type: &'static str, body: &'static str) -> axum::routing::MethodRouter<AppState> {
    axum::routing::get(move || async move {
        (
            [
                (axum::http::header::CONTENT_TYPE, content_type),
                (axum::http::header::CACHE_CONTROL, "public, max-age=300"),
            ],
            body,
        )
    })
}

/// The CSS content type of [`asset`].
pub const CSS: &str = "text/css; charset=utf-8";
/// The JavaScript content type of [`asset`].
pub const JAVASCRIPT: &str = "text/javascript; charset=utf-8";

/// The campaigns a kind's routes serve: the kind names they accept and how
/// an error calls the kind. Each kind's `http` folder implements it on a
/// marker type and takes [`KindCampaign`] of it in its handlers.
pub trait CampaignKind: Send + Sync + 'static {
    /// The `campaigns.kind` names served (A100 serves two).
    const KINDS: &'static [&'static str];
    /// The kind with its article ("a VTON"): "this is not a VTON campaign".
    const WHAT: &'static str;
    /// The kind's configuration type (its `TypedKind::Config`).
    type Config: Clone + Send + Sync + 'static;
}

/// The campaign the path's `{id}` names, when it is of kind `K`: a route of
/// one kind takes this instead of an id and a check by hand. A campaign of
/// another kind is a 422 `wrong_kind`; none at all a 404. Put it after the
/// role extractor, so a caller without the role learns nothing of the
/// campaign.
pub struct KindCampaign<K> {
    /// The campaign's id (the path's `{id}`).
    pub id: uuid::Uuid,
    /// The campaign (its typed configuration: [`KindCampaign::config`]).
    pub campaign: Campaign,
    kind: PhantomData<fn() -> K>,
}

/// The path's campaign id (other path parameters are the handler's).
#[derive(serde::Deserialize)]
struct CampaignId {
    id: uuid::Uuid,
}

impl<K: CampaignKind> FromRequestParts<AppState> for KindCampaign<K> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, s: &AppState) -> Result<Self, Self::Rejection> {
        let Path(CampaignId { id }) = Path::<CampaignId>::from_request_parts(parts, s).await?;
        Ok(Self { id, campaign: Self::of(s, id).await?, kind: PhantomData })
    }
}

impl<K: CampaignKind> KindCampaign<K> {
    /// Campaign `id` when it is of kind `K` (for a page shown again after
    /// one of its forms, outside an extractor).
    pub async fn of(s: &AppState, id: uuid::Uuid) -> Result<Campaign, AppError> {
        let campaign = campaigns::get(&s.pool, id).await?;
        if !K::KINDS.contains(&campaign.kind.as_str()) {
            return Err(Error::invalid(Code::WrongKind, format!("this is not {} campaign", K::WHAT)).into());
        }
        Ok(campaign)
    }

    /// The configuration of `campaign` (one of kind `K`), as parsed once
    /// for its version by the registry; one that no longer parses is a 409
    /// naming the campaign. Asked for by the handlers that read it, so the
    /// kind's other routes neither copy it nor fail on it.
    pub fn config(s: &AppState, campaign: &Campaign) -> Result<K::Config, AppError> {
        Ok(s.kinds.config::<K::Config>(campaign)?)
    }
}
