//! CSRF protection for cookie-authenticated, state-changing requests.
//!
//! The token lives in the server-side session; forms carry it in a hidden
//! `csrf_token` field and scripts send it as `X-CSRF-Token`. Requests with a
//! bearer token carry no ambient credentials and need none.

use super::error::AppError;
use super::AppState;
use crate::auth::Role;
use axum::body::Body;
use axum::extract::{Request, State};
use axum::http::{header, Method};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tower_sessions::Session;

/// Session key holding the CSRF token.
const CSRF_KEY: &str = "csrf";
/// Header scripts use to send the token.
pub const HEADER: &str = "x-csrf-token";
/// Largest login form read (anyone may post one): a name, a password (each
/// bounded far below this, even percent-encoded) and the token.
pub const MAX_LOGIN_FORM: usize = 16 * 1024;
/// Cookie holding the login form's token: the login page stores no
/// session for anonymous visitors, so the token is double-submitted
/// (cookie and form field must match).
pub const LOGIN_COOKIE: &str = "atelier_login_csrf";

/// At login, the login form's token becomes the session's, so a page opened
/// before logging in keeps working after.
pub async fn adopt(session: &Session, token: &str) -> Result<(), AppError> {
    session.insert(CSRF_KEY, token).await?;
    Ok(())
}

/// A fresh token for the login form and the cookie that pairs with it.
pub fn login_token(secure: bool) -> (String, String) {
    let token = crate::random::random_code(32);
    let cookie = format!(
        "{LOGIN_COOKIE}={token}; Path=/login; HttpOnly; SameSite=Strict; Max-Age=3600{}",
        if secure { "; Secure" } else { "" }
    );
    (token, cookie)
}

/// The session's CSRF token, created on first use.
pub async fn token(session: &Session) -> Result<String, AppError> {
    if let Some(t) = session.get::<String>(CSRF_KEY).await? {
        return Ok(t);
    }
    let t = crate::random::random_code(32);
    session.insert(CSRF_KEY, &t).await?;
    Ok(t)
}

/// Middleware: rejects state-changing cookie requests without the right token
/// (as a page for browser forms, as JSON for scripts).
pub async fn protect(State(state): State<AppState>, req: Request, next: Next) -> Response {
    let is_form = is_form(&req) || is_multipart(&req);
    match check(&state, req).await {
        Ok(req) => next.run(req).await,
        Err(e) if is_form => super::pages::PageError(e).into_response(),
        Err(e) => e.into_response(),
    }
}

fn is_multipart(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("multipart/form-data"))
}

/// The token in the query string (`?csrf_token=`): file-upload forms carry it
/// there, so the upload streams to its handler instead of being buffered here.
fn query_token(req: &Request) -> Option<String> {
    form_urlencoded_field(req.uri().query()?.as_bytes(), "csrf_token")
}

/// How far into a multipart body its first field is looked for.
const FIRST_FIELD_LIMIT: usize = 8 * 1024;

/// The token as the first field of a multipart body (`csrf_token`, as the
/// pages' upload forms put it first), read from the body's first few KB;
/// the request goes on with its body whole, the rest still streaming.
async fn multipart_token(req: Request) -> Result<(Option<String>, Request), AppError> {
    use futures_util::StreamExt;
    let boundary = req
        .headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.split(';').map(str::trim).find_map(|p| p.strip_prefix("boundary=")))
        .map(|b| b.trim_matches('"').to_owned());
    let Some(boundary) = boundary else { return Ok((None, req)) };
    let (parts, body) = req.into_parts();
    let mut stream = body.into_data_stream();
    let mut prefix = bytes::BytesMut::new();
    let token = loop {
        match first_field(&prefix, &boundary) {
            FirstField::Read(token) => break token,
            FirstField::Incomplete if prefix.len() > FIRST_FIELD_LIMIT => break None,
            FirstField::Incomplete => match stream.next().await {
                Some(Ok(chunk)) => prefix.extend_from_slice(&chunk),
                Some(Err(e)) => {
                    return Err(AppError::BadRequest {
                        code: crate::error::Code::UnreadableBody,
                        message: e.to_string(),
                    })
                }
                None => break None,
            },
        }
    };
    let head = futures_util::stream::once(async move { Ok::<_, axum::Error>(prefix.freeze()) });
    Ok((token, Request::from_parts(parts, Body::from_stream(head.chain(stream)))))
}

/// What the start of a multipart body says about its first field.
enum FirstField {
    /// More of the body is needed.
    Incomplete,
    /// The first field is whole: its value when it is `csrf_token`.
    Read(Option<String>),
}

fn first_field(body: &[u8], boundary: &str) -> FirstField {
    let find = |hay: &[u8], needle: &[u8]| hay.windows(needle.len()).position(|w| w == needle);
    let open = format!("--{boundary}\r\n");
    if body.len() < open.len() {
        return FirstField::Incomplete;
    }
    let Some(rest) = body.strip_prefix(open.as_bytes()) else { return FirstField::Read(None) };
    let Some(headers_end) = find(rest, b"\r\n\r\n") else { return FirstField::Incomplete };
    let value = &rest[headers_end + 4..];
    let Some(value_end) = find(value, format!("\r\n--{boundary}").as_bytes()) else { return FirstField::Incomplete };
    let headers = String::from_utf8_lossy(&rest[..headers_end]).to_ascii_lowercase();
    if !headers.contains("name=\"csrf_token\"") {
        return FirstField::Read(None);
    }
    FirstField::Read(std::str::from_utf8(&value[..value_end]).ok().map(str::to_owned))
}

fn is_form(req: &Request) -> bool {
    req.headers()
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("application/x-www-form-urlencoded"))
}

async fn check(state: &AppState, req: Request) -> Result<Request, AppError> {
    let safe = matches!(*req.method(), Method::GET | Method::HEAD | Method::OPTIONS);
    if safe || req.headers().contains_key(header::AUTHORIZATION) {
        return Ok(req);
    }
    let session = req.extensions().get::<Session>().cloned().ok_or(AppError::Csrf)?;
    // Without a logged-in user a cookie carries no authority to abuse, so the
    // request goes on (and protected routes answer 401). Logging in is the
    // exception: a forged login would sign the victim into the attacker's account.
    let user_id = session.get::<uuid::Uuid>(super::extract::USER_KEY).await?;
    let logged_in = user_id.is_some();
    if !logged_in && req.uri().path() != "/login" {
        return Ok(req);
    }
    // The login form is always double-submitted against its cookie, also
    // from a browser holding a session (a worker's, say): staff may log in
    // from it, and the login replaces that session.
    let expected = if logged_in && req.uri().path() != "/login" {
        session.get::<String>(CSRF_KEY).await?.ok_or(AppError::Csrf)?
    } else {
        super::cookie(req.headers(), LOGIN_COOKIE).ok_or(AppError::Csrf)?
    };
    if let Some(sent) = req.headers().get(HEADER).and_then(|v| v.to_str().ok()) {
        return if constant_time_eq(sent, &expected) { Ok(req) } else { Err(AppError::Csrf) };
    }
    if is_multipart(&req) {
        // The pages' upload forms send the token as their first field; a
        // client may still put it in the query string.
        let (sent, req) = match query_token(&req) {
            Some(sent) => (Some(sent), req),
            None => multipart_token(req).await?,
        };
        return match sent {
            Some(sent) if constant_time_eq(&sent, &expected) => Ok(req),
            _ => Err(AppError::Csrf),
        };
    }
    if !is_form(&req) {
        return Err(AppError::Csrf);
    }
    // The form is read whole to find the token: only an admin's may be large.
    let limit = match user_id {
        None => MAX_LOGIN_FORM,
        Some(id) => match state.users.get(state.statements.executor(), id).await? {
            Some(user) if user.role == Role::Admin => super::MAX_BODY,
            _ => super::MAX_ANNOTATOR_BODY,
        },
    };
    let (parts, body) = req.into_parts();
    let bytes = axum::body::to_bytes(body, limit).await.map_err(|_| AppError::TooLarge)?;
    let sent = form_urlencoded_field(&bytes, "csrf_token");
    if !sent.is_some_and(|s| constant_time_eq(&s, &expected)) {
        return Err(AppError::Csrf);
    }
    Ok(Request::from_parts(parts, Body::from(bytes)))
}

fn form_urlencoded_field(body: &[u8], name: &str) -> Option<String> {
    serde_urlencoded::from_bytes::<Vec<(String, String)>>(body)
        .ok()?
        .into_iter()
        .find(|(k, _)| k == name)
        .map(|(_, v)| v)
}

fn constant_time_eq(a: &str, b: &str) -> bool {
    a.len() == b.len() && a.bytes().zip(b.bytes()).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
}

#[cfg(test)]
mod first_field_tests {
    use super::{first_field, FirstField};

    fn read(body: &str) -> Option<Option<String>> {
        match first_field(body.as_bytes(), "XyZ") {
            FirstField::Incomplete => None,
            FirstField::Read(token) => Some(token),
        }
    }

    #[test]
    fn the_token_is_read_from_the_first_field_only() {
        let first = "--XyZ\r\nContent-Disposition: form-data; name=\"csrf_token\"\r\n\r\nabc123\r\n--XyZ\r\n";
        assert_eq!(read(first), Some(Some("abc123".into())));
        assert_eq!(read(&first[..40]), None, "more of the body is needed");
        let other = "--XyZ\r\nContent-Disposition: form-data; name=\"file\"\r\n\r\nx\r\n--XyZ\r\n";
        assert_eq!(read(other), Some(None), "another first field: no token");
        assert_eq!(read("preamble\r\n--XyZ\r\n"), Some(None), "not a body that starts with its boundary");
    }
}
