//! Images out of the store, streamed (never held whole): uploads under
//! their content-addressed names at `/images/{name}`, and the response
//! every image route builds (a presigned redirect instead when the store is
//! a bucket and the operator asked for it).

use super::error::AppResult;
use super::AppState;
use crate::error::Error;
use crate::storage::{Fetched, Object};
use axum::body::Body;
use axum::extract::State;
use axum::http::{header, HeaderMap, HeaderValue, StatusCode};
use axum::response::{IntoResponse, Redirect, Response};

/// How an image response may be cached.
#[derive(Debug, Clone, Copy)]
pub enum Caching {
    /// Any cache, for ever (a content-addressed name).
    Public,
    /// Only the requester's browser (an address of one assignment).
    Private,
}

impl Caching {
    fn header(self) -> HeaderValue {
        HeaderValue::from_static(match self {
            Self::Public => "public, max-age=31536000, immutable",
            Self::Private => "private, max-age=86400, immutable",
        })
    }
}

/// An uploaded image by its content-addressed name.
pub async fn uploaded(
    State(s): State<AppState>,
    axum::extract::Path(name): axum::extract::Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    if !crate::storage::is_upload_name(&name) {
        return Err(Error::NotFound("image").into());
    }
    serve(&s, Object::Upload(&name), crate::core::item::images::content_type_of(&name), Caching::Public, &headers).await
}

/// An image of the lab's bucket, for an admin's pages (the data browser's
/// thumbnails): streamed through the service, the bucket staying private.
pub async fn in_bucket(
    _: super::pages::OnPage<super::extract::Admin>,
    State(s): State<AppState>,
    axum::extract::Path(key): axum::extract::Path<String>,
    headers: HeaderMap,
) -> AppResult<Response> {
    let content_type = crate::core::item::images::content_type_of(&key);
    serve(&s, Object::InBucket(&key), content_type, Caching::Private, &headers).await
}

/// Serves one image of the store: `304` when the browser holds it (names
/// never change content), a presigned redirect in redirect mode, else its
/// bytes as they stream in from the store.
pub async fn serve(
    s: &AppState,
    object: Object<'_>,
    content_type: &'static str,
    caching: Caching,
    headers: &HeaderMap,
) -> AppResult<Response> {
    let etag = etag_of(object);
    if headers.get(header::IF_NONE_MATCH).and_then(|v| v.to_str().ok()) == Some(etag.as_str()) {
        return Ok(StatusCode::NOT_MODIFIED.into_response());
    }
    if let Some(url) = s.config.storage.presigned(object).await.map_err(Error::from)? {
        return Ok(Redirect::temporary(&url).into_response());
    }
    let fetched = s.config.storage.get(object).await.map_err(Error::from)?;
    Ok(stream(fetched, content_type, caching, &etag))
}

/// The response that streams a fetched object.
pub fn stream(fetched: Fetched, content_type: &'static str, caching: Caching, etag: &str) -> Response {
    let mut response = Body::from_stream(fetched.stream).into_response();
    let headers = response.headers_mut();
    headers.insert(header::CONTENT_TYPE, HeaderValue::from_static(content_type));
    headers.insert(header::CONTENT_LENGTH, HeaderValue::from(fetched.size));
    headers.insert(header::CACHE_CONTROL, caching.header());
    if let Ok(tag) = HeaderValue::from_str(etag) {
        headers.insert(header::ETAG, tag);
    }
    response
}

/// A strong entity tag for an object (its name: content-addressed, or
/// immutable in a lab's bucket for the item that names it).
fn etag_of(object: Object<'_>) -> String {
    let name = match object {
        Object::Upload(n) | Object::Release(n) | Object::InBucket(n) | Object::Backup(n) => n,
    };
    let digest = <sha2::Sha256 as sha2::Digest>::digest(name.as_bytes());
    format!("\"{}\"", hex::encode(&digest[..12]))
}
