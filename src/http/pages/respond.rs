//! How a page answers: a rendered template, an error page, a refusal shown
//! beside its form with what was typed kept.

use crate::http::error::AppError;
use crate::http::AppState;
use askama::Template;
use axum::http::{header, HeaderValue, StatusCode};
use axum::response::{Html, IntoResponse, Redirect, Response};

/// Renders a template into an HTML response.
pub fn render<T: Template>(page: &T) -> Result<Response, PageError> {
    Ok(Html(page.render().map_err(AppError::from)?).into_response())
}

/// Renders a template into an HTML response with this status (a refusal
/// shown beside its form is a 4xx page, not a 200).
pub fn render_with<T: Template>(status: StatusCode, page: &T) -> Result<Response, PageError> {
    Ok((status, Html(page.render().map_err(AppError::from)?)).into_response())
}

/// An error shown as a page: the login page for anonymous visitors, a short
/// explanation otherwise.
#[derive(Debug)]
pub struct PageError(pub AppError);

impl<E: Into<AppError>> From<E> for PageError {
    fn from(e: E) -> Self {
        PageError(e.into())
    }
}

#[derive(Template)]
#[template(path = "error.html")]
struct ErrorPage {
    status: u16,
    message: String,
    /// Whether "Back to the start" (the staff's sign-in for a visitor)
    /// makes sense: not for a worker on a study link.
    home: bool,
}

impl ErrorPage {
    /// The page with this status (its message as plain text if the
    /// template cannot render).
    fn respond(self, status: StatusCode) -> Response {
        match self.render() {
            Ok(html) => (status, Html(html)).into_response(),
            Err(_) => (status, self.message).into_response(),
        }
    }
}

/// An error on a worker's study-link page: the explanation without a way
/// "back" into the service (a worker's way back is their crowd platform).
#[derive(Debug)]
pub struct StudyError(pub AppError);

impl IntoResponse for StudyError {
    fn into_response(self) -> Response {
        let status = self.0.code().status();
        if status.is_server_error() {
            return PageError(self.0).into_response();
        }
        ErrorPage { status: status.as_u16(), message: self.0.public_message(), home: false }.respond(status)
    }
}

impl IntoResponse for PageError {
    fn into_response(self) -> Response {
        let status = self.0.code().status();
        if status == StatusCode::UNAUTHORIZED {
            return Redirect::to("/login").into_response();
        }
        let mut response =
            ErrorPage { status: status.as_u16(), message: self.0.public_message(), home: true }.respond(status);
        if status == StatusCode::SERVICE_UNAVAILABLE {
            response
                .headers_mut()
                .insert(header::RETRY_AFTER, HeaderValue::from_static(crate::http::error::RETRY_AFTER_SECS));
        } else if status.is_server_error() {
            response.extensions_mut().insert(crate::http::error::ServerErrorCause::of(&self.0));
        }
        response
    }
}

/// An error page with this status and message (for errors raised outside
/// page handlers, e.g. by the framework).
pub fn error_page(status: StatusCode, message: String) -> Response {
    ErrorPage { status: status.as_u16(), message, home: true }.respond(status)
}

/// Wraps an API extractor so that its rejection becomes a page (anonymous
/// visitors are sent to the login page instead of getting JSON).
pub struct OnPage<E>(pub E);

impl<E> axum::extract::FromRequestParts<AppState> for OnPage<E>
where
    E: axum::extract::FromRequestParts<AppState, Rejection = AppError> + Send,
{
    type Rejection = PageError;

    async fn from_request_parts(
        parts: &mut axum::http::request::Parts,
        state: &AppState,
    ) -> Result<Self, Self::Rejection> {
        E::from_request_parts(parts, state).await.map(OnPage).map_err(PageError)
    }
}

/// Result of a page handler.
pub type PageResult = Result<Response, PageError>;

/// A page form's outcome: success flashes its message and sends the browser
/// to `to`; a refusal is shown by `again` (the page once more, the message
/// beside form `form`, the fields `kept` as typed); other errors are error
/// pages.
pub async fn act<Again, Shown>(
    session: &tower_sessions::Session,
    outcome: Result<String, crate::error::Error>,
    to: &str,
    form: &'static str,
    kept: Vec<(String, String)>,
    again: Again,
) -> PageResult
where
    Again: FnOnce(Refusal) -> Shown,
    Shown: std::future::Future<Output = PageResult>,
{
    match outcome {
        Ok(message) => Ok(crate::http::flash::redirect(session, message, &format!("{to}#{form}")).await),
        Err(e) => again(Refusal::of(form, kept, e)?).await,
    }
}

/// A form the service refused, to show again beside the form: its section's
/// id, why, the refusal's status, and the fields as the admin filled them.
#[derive(Debug, Clone)]
pub struct Refusal {
    /// The section id of the form (`import`, `settings`, `rankings`, ...).
    pub form: &'static str,
    /// Why, in words.
    pub message: String,
    /// The refusal's status (422 for bad input, 409 for a conflict, ...).
    pub status: StatusCode,
    /// The fields as posted.
    pub kept: Vec<(String, String)>,
}

impl Refusal {
    /// A refusal of `form` when `e` is one (the client can act on it); any
    /// other error stays an error (its page).
    pub fn of(form: &'static str, kept: Vec<(String, String)>, e: crate::error::Error) -> Result<Self, PageError> {
        match e {
            crate::error::Error::Rejected { code, message } => Ok(Self { form, message, status: code.status(), kept }),
            other => Err(other.into()),
        }
    }

    /// This refusal's message if it is of `form`.
    pub fn of_form(refused: &Option<Self>, form: &str) -> Option<String> {
        refused.as_ref().filter(|r| r.form == form).map(|r| r.message.clone())
    }

    /// What the admin typed in `field` of `form`, if that form was refused.
    pub fn kept_in(refused: &Option<Self>, form: &str, field: &str) -> String {
        refused
            .as_ref()
            .filter(|r| r.form == form)
            .and_then(|r| r.kept.iter().rev().find(|(k, _)| k == field))
            .map_or_else(String::new, |(_, v)| v.clone())
    }

    /// An import form's pasted text, to show again with a refusal (a chosen
    /// file cannot be; text over 1 MB is not sent back).
    pub fn keep_pasted(upload: &super::upload::Upload) -> Vec<(String, String)> {
        match &upload.file {
            None if upload.field("content").len() <= 1 << 20 => {
                vec![("content".to_owned(), upload.field("content").to_owned())]
            }
            _ => Vec::new(),
        }
    }
}
