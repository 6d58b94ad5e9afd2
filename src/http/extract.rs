//! Extractors: JSON bodies and paths whose rejections use our error format,
//! and the authenticated user with role checks.

use super::error::AppError;
use super::AppState;
use crate::auth::users::User;
use crate::auth::{tokens, Role};
use crate::error::Code;
use crate::error::Error;
use axum::extract::rejection::{JsonRejection, PathRejection};
use axum::extract::{FromRequest, FromRequestParts, Request};
use axum::http::request::Parts;
use serde::de::DeserializeOwned;
use tower_sessions::Session;
use uuid::Uuid;

/// Session key holding the logged-in user's id.
pub const USER_KEY: &str = "user_id";

/// `axum::Json` with our error body on rejection, taking a body that starts
/// with a byte order mark too (JSON files saved by Windows editors).
pub struct Json<T>(pub T);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for Json<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        if !is_json(req.headers()) {
            return Err(AppError::UnsupportedMediaType(
                "Expected request with `Content-Type: application/json`".to_owned(),
            ));
        }
        let body = body_bytes(req, state).await?;
        parse_json(&body).map(Json)
    }
}

/// A JSON body that may be left out: `None` for an empty body (with or
/// without a content type) or `null`, else as [`Json`].
pub struct MaybeJson<T>(pub Option<T>);

impl<T: DeserializeOwned, S: Send + Sync> FromRequest<S> for MaybeJson<T> {
    type Rejection = AppError;

    async fn from_request(req: Request, state: &S) -> Result<Self, Self::Rejection> {
        let declared_json = is_json(req.headers());
        let body = body_bytes(req, state).await?;
        if crate::text::bytes_without_bom(&body).iter().all(u8::is_ascii_whitespace) {
            return Ok(MaybeJson(None));
        }
        if !declared_json {
            return Err(AppError::UnsupportedMediaType(
                "Expected request with `Content-Type: application/json`".to_owned(),
            ));
        }
        parse_json::<Option<T>>(&body).map(MaybeJson)
    }
}

async fn body_bytes<S: Send + Sync>(req: Request, state: &S) -> Result<axum::body::Bytes, AppError> {
    axum::body::Bytes::from_request(req, state).await.map_err(|e| {
        if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
            AppError::TooLarge
        } else {
            AppError::BadRequest { code: Code::UnreadableBody, message: e.body_text() }
        }
    })
}

fn parse_json<T: DeserializeOwned>(body: &[u8]) -> Result<T, AppError> {
    let body = crate::text::bytes_without_bom(body);
    // serde reads a struct from a JSON array too (`[46066]` as `{"places":
    // 46066}`): a top-level array must be what the route takes.
    if body.iter().find(|b| !b.is_ascii_whitespace()) == Some(&b'[') {
        let mut de = serde_json::Deserializer::from_slice(body);
        if let Err(e) = T::deserialize(no_struct_from_array::Strict(&mut de)) {
            if e.to_string().contains("expected a map") || e.to_string().contains("invalid type: sequence") {
                return Err(crate::error::Error::invalid(
                    Code::InvalidBody,
                    format!("the body must be a JSON object: {e}"),
                )
                .into());
            }
        }
    }
    match axum::Json::<T>::from_bytes(body) {
        Ok(axum::Json(v)) => Ok(v),
        // `1901.0` is an integer to JSON Schema (and to JavaScript): read
        // integral floats as integers, on this failure path only.
        Err(e @ JsonRejection::JsonDataError(_)) if e.body_text().contains("invalid type: floating point") => {
            let mut value: serde_json::Value = serde_json::from_slice(body).map_err(|_| json_rejection(e))?;
            integral_floats_as_integers(&mut value);
            serde_json::from_value(value).map_err(|e| Error::invalid(Code::InvalidBody, e.to_string()).into())
        }
        Err(e) => Err(json_rejection(e)),
    }
}

/// Replaces every float without a fraction (`3.0`) by the integer it is.
fn integral_floats_as_integers(value: &mut serde_json::Value) {
    match value {
        serde_json::Value::Number(n) if n.is_f64() => {
            let integer = n.as_f64().filter(|f| f.fract() == 0.0 && f.abs() < 9.0e15);
            if let Some(f) = integer {
                *n = serde_json::Number::from(f as i64);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(integral_floats_as_integers),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(integral_floats_as_integers),
        _ => {}
    }
}

/// Whether the content type is JSON (`application/json` or `application/*+json`),
/// as `axum::Json` decides it.
fn is_json(headers: &axum::http::HeaderMap) -> bool {
    let Some(value) = headers.get(axum::http::header::CONTENT_TYPE).and_then(|v| v.to_str().ok()) else {
        return false;
    };
    let essence = value.split(';').next().unwrap_or_default().trim();
    let starts = |prefix: &str| essence.get(..prefix.len()).is_some_and(|p| p.eq_ignore_ascii_case(prefix));
    let ends = |suffix: &str| {
        essence
            .len()
            .checked_sub(suffix.len())
            .and_then(|at| essence.get(at..))
            .is_some_and(|s| s.eq_ignore_ascii_case(suffix))
    };
    essence.eq_ignore_ascii_case("application/json") || (starts("application/") && ends("+json"))
}

fn json_rejection(e: JsonRejection) -> AppError {
    if e.status() == axum::http::StatusCode::PAYLOAD_TOO_LARGE {
        return AppError::TooLarge;
    }
    if let JsonRejection::JsonDataError(_) = e {
        // Well-formed JSON of the wrong shape: unprocessable, like any invalid input.
        return AppError::Core(Error::invalid(Code::InvalidBody, e.body_text()));
    }
    if let JsonRejection::MissingJsonContentType(_) = e {
        return AppError::UnsupportedMediaType(e.body_text());
    }
    let code = match e {
        JsonRejection::JsonSyntaxError(_) => Code::MalformedJson,
        _ => Code::UnreadableBody,
    };
    AppError::BadRequest { code, message: e.body_text() }
}

/// `axum::extract::Path` with our error body on rejection.
pub struct Path<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Path<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &S) -> Result<Self, Self::Rejection> {
        axum::extract::Path::<T>::from_request_parts(parts, state)
            .await
            .map(|p| Path(p.0))
            .map_err(|e: PathRejection| AppError::BadRequest { code: Code::InvalidPath, message: e.body_text() })
    }
}

/// `axum::extract::Query` with our error body on rejection.
pub struct Query<T>(pub T);

impl<T: DeserializeOwned + Send, S: Send + Sync> FromRequestParts<S> for Query<T> {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, _: &S) -> Result<Self, Self::Rejection> {
        // Read as axum's `Query` reads it, with our error body.
        serde_urlencoded::from_str(parts.uri.query().unwrap_or_default()).map(Query).map_err(|e| {
            AppError::Core(Error::invalid(Code::InvalidQuery, format!("Failed to deserialize query string: {e}")))
        })
    }
}

/// The caller: from a bearer token, else from the session cookie.
#[derive(Debug, Clone)]
pub struct CurrentUser(pub User);

impl CurrentUser {
    /// Fails with 403 unless the user has one of the roles.
    pub fn require(self, roles: &[Role]) -> Result<User, AppError> {
        match self.0.role {
            r if roles.contains(&r) => Ok(self.0),
            _ => Err(Error::Forbidden(format!(
                "this needs the {} role",
                roles.iter().map(|r| r.as_str()).collect::<Vec<_>>().join(" or ")
            ))
            .into()),
        }
    }
}

/// Finds the caller, if any.
pub async fn current_user(parts: &mut Parts, state: &AppState) -> Result<Option<User>, AppError> {
    if let Some(value) = parts.headers.get(axum::http::header::AUTHORIZATION) {
        // The scheme's name is case-insensitive (RFC 7235).
        let token = value
            .to_str()
            .ok()
            .and_then(|v| v.split_once(' '))
            .filter(|(scheme, _)| scheme.eq_ignore_ascii_case("bearer"))
            .map(|(_, token)| token.trim());
        let Some(token) = token else {
            return Err(AppError::BadRequest {
                code: Code::InvalidAuthorization,
                message: "use `Authorization: Bearer <token>`".into(),
            });
        };
        return match tokens::authenticate(&state.pool, token).await? {
            Some(u) => Ok(Some(u)),
            None => Err(Error::Unauthenticated.into()),
        };
    }
    let Ok(session) = Session::from_request_parts(parts, state).await else {
        return Ok(None);
    };
    let Some(id) = session.get::<Uuid>(USER_KEY).await? else {
        return Ok(None);
    };
    Ok(state.users.get(state.statements.executor(), id).await?)
}

impl FromRequestParts<AppState> for CurrentUser {
    type Rejection = AppError;

    async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
        current_user(parts, state).await?.map(CurrentUser).ok_or(Error::Unauthenticated.into())
    }
}

macro_rules! role_extractor {
    ($(#[$doc:meta])* $name:ident, $($role:expr),+) => {
        $(#[$doc])*
        #[derive(Debug, Clone)]
        pub struct $name(pub User);

        impl FromRequestParts<AppState> for $name {
            type Rejection = AppError;

            async fn from_request_parts(parts: &mut Parts, state: &AppState) -> Result<Self, Self::Rejection> {
                let user = CurrentUser::from_request_parts(parts, state).await?.require(&[$($role),+])?;
                if user.role == Role::Admin {
                    super::request_time::allow_admin_upload(parts);
                }
                Ok($name(user))
            }
        }
    };
}

role_extractor!(
    /// An authenticated admin (401 anonymous, 403 other roles).
    Admin, Role::Admin
);
role_extractor!(
    /// An authenticated crowd worker.
    Worker, Role::Worker
);
role_extractor!(
    /// An authenticated expert.
    Expert, Role::Expert
);

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_content_types_are_recognised_as_axum_does() {
        let with = |value: &str| {
            let mut headers = axum::http::HeaderMap::new();
            headers.insert(axum::http::header::CONTENT_TYPE, value.parse().expect("header"));
            is_json(&headers)
        };
        for yes in ["application/json", "Application/JSON; charset=utf-8", "application/problem+json"] {
            assert!(with(yes), "{yes}");
        }
        for no in ["text/csv", "application/jsonx", "text/json", "+json", "application/ü+jso"] {
            assert!(!with(no), "{no}");
        }
        assert!(!is_json(&axum::http::HeaderMap::new()));
    }

    #[derive(serde::Deserialize, Debug, PartialEq)]
    struct Counted {
        seed: u64,
        weights: Vec<f64>,
    }

    #[test]
    fn integral_floats_are_integers_and_fractions_are_refused() {
        let read = |body: &str| parse_json::<Counted>(body.as_bytes()).map_err(|e| e.to_string());
        assert_eq!(
            read(r#"{"seed": 1901.0, "weights": [0.5, 2.0]}"#),
            Ok(Counted { seed: 1901, weights: vec![0.5, 2.0] })
        );
        let refused = read(r#"{"seed": 1901.5, "weights": []}"#).expect_err("a fraction");
        assert!(refused.contains("floating point"), "{refused}");
        assert!(read(r#"{"seed": -1.0, "weights": []}"#).is_err(), "still a u64");
    }
}

/// A JSON deserializer that reads a struct only from a JSON object (serde's
/// derived structs also take an array of their fields, in order).
mod no_struct_from_array {
    use serde::de::{Deserializer, Visitor};

    /// The strict deserializer over serde_json's own.
    pub struct Strict<'a, 'de>(pub &'a mut serde_json::Deserializer<serde_json::de::SliceRead<'de>>);

    macro_rules! forward {
        ($($method:ident),*) => {
            $(fn $method<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
                self.0.$method(visitor)
            })*
        };
    }

    impl<'de> Deserializer<'de> for Strict<'_, 'de> {
        type Error = serde_json::Error;

        forward!(
            deserialize_any,
            deserialize_bool,
            deserialize_i8,
            deserialize_i16,
            deserialize_i32,
            deserialize_i64,
            deserialize_u8,
            deserialize_u16,
            deserialize_u32,
            deserialize_u64,
            deserialize_f32,
            deserialize_f64,
            deserialize_char,
            deserialize_str,
            deserialize_string,
            deserialize_bytes,
            deserialize_byte_buf,
            deserialize_unit,
            deserialize_seq,
            deserialize_map,
            deserialize_identifier,
            deserialize_ignored_any
        );

        fn deserialize_unit_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.deserialize_unit_struct(name, visitor)
        }

        fn deserialize_newtype_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.deserialize_newtype_struct(name, visitor)
        }

        fn deserialize_tuple<V: Visitor<'de>>(self, len: usize, visitor: V) -> Result<V::Value, Self::Error> {
            self.0.deserialize_tuple(len, visitor)
        }

        fn deserialize_tuple_struct<V: Visitor<'de>>(
            self,
            name: &'static str,
            len: usize,
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.deserialize_tuple_struct(name, len, visitor)
        }

        /// Only used on a body that starts with `[`: never `null`, so the
        /// value inside an `Option` is read as strictly.
        fn deserialize_option<V: Visitor<'de>>(self, visitor: V) -> Result<V::Value, Self::Error> {
            visitor.visit_some(self)
        }

        /// A struct only from an object: serde_json's map reading refuses an array.
        fn deserialize_struct<V: Visitor<'de>>(
            self,
            _name: &'static str,
            _fields: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.deserialize_map(visitor)
        }

        fn deserialize_enum<V: Visitor<'de>>(
            self,
            name: &'static str,
            variants: &'static [&'static str],
            visitor: V,
        ) -> Result<V::Value, Self::Error> {
            self.0.deserialize_enum(name, variants, visitor)
        }
    }
}
