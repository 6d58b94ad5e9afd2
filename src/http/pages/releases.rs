//! Releases on the campaign page: cut one, and compare two.

use super::paging::{PageQuery, Pager};
use super::{render, OnPage, PageResult};
use crate::core::campaign::campaigns;
use crate::core::releases::diff::{ExclusionChange, LabelChange, ReleaseDiff};
use crate::core::releases::{self, Author};
use crate::error::Code;
use crate::error::Error;
use crate::http::extract::{Admin, Path, Query};
use crate::http::AppState;
use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::{Form, Router};
use serde_json::Value;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/releases", post(cut))
        .route("/admin/campaigns/{id}/releases/diff", get(diff_page))
}

#[derive(serde::Deserialize)]
struct CutForm {
    #[serde(default)]
    note: String,
    #[serde(default)]
    license: String,
}

async fn cut(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: tower_sessions::Session,
    Path(id): Path<Uuid>,
    Form(form): Form<CutForm>,
) -> PageResult {
    let kept = vec![("note".to_owned(), form.note.clone()), ("license".to_owned(), form.license.clone())];
    let outcome = releases::create(
        &s.pool,
        &s.config.storage,
        &s.kinds,
        id,
        &Author::User(admin.id),
        &form.note,
        Some(form.license.as_str()),
    )
    .await
    .map(|r| format!("Release v{} cut ({} bytes); download it below.", r.number, r.size));
    super::admin::act(&s, &session, id, "releases", kept, outcome).await
}

/// The two releases to compare, as the campaign page's form sends them
/// (absent when the address was typed or kept without them).
#[derive(serde::Deserialize)]
struct DiffQuery {
    /// As typed in the address (checked by [`release_number`]).
    from: Option<String>,
    to: Option<String>,
}

/// A release number from the compare form or the address.
fn release_number(text: &str) -> Result<i32, Error> {
    text.trim().parse::<i32>().ok().filter(|n| *n > 0).ok_or_else(|| {
        let shown: String = text.chars().take(40).collect();
        Error::invalid(Code::InvalidRelease, format!("`{shown}` is not a release number (v1, v2, … are 1, 2, …)"))
    })
}

#[derive(Template)]
#[template(path = "admin_release_diff.html")]
struct DiffPage {
    campaign: campaigns::Campaign,
    diff: ReleaseDiff,
    /// This page's changed labels (the diff's list is emptied).
    labels: Vec<LabelChange>,
    labels_pager: Pager,
    /// This page's exclusions: (added, the change).
    exclusions: Vec<(bool, ExclusionChange)>,
    exclusions_pager: Pager,
}

impl DiffPage {
    /// A JSON value as the page writes it: text bare, absent as "none".
    fn show(&self, v: &Value) -> String {
        match v {
            Value::Null => "none".to_owned(),
            Value::String(s) => s.clone(),
            other => other.to_string(),
        }
    }
}

async fn diff_page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: tower_sessions::Session,
    Path(id): Path<Uuid>,
    Query(q): Query<DiffQuery>,
    query: axum::extract::RawQuery,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    // Without both, the form that picks them (on the campaign page).
    let (Some(from), Some(to)) = (q.from, q.to) else {
        return Ok(Redirect::to(&format!("/admin/campaigns/{id}#releases")).into_response());
    };
    let compared = async {
        let (from, to) = (release_number(&from)?, release_number(&to)?);
        if from == to {
            return Err(Error::invalid(Code::SameRelease, "choose two different releases to compare"));
        }
        releases::diff(&s.pool, &s.config.storage, &s.kinds, id, from, to).await
    }
    .await;
    // A refusal shows beside the compare form on the campaign page.
    let mut diff = match compared {
        Ok(diff) => diff,
        Err(Error::NotFound(what)) => {
            let refusal = super::Refusal {
                form: "compare",
                message: format!("no such {what} in this campaign"),
                status: axum::http::StatusCode::NOT_FOUND,
                kept: Vec::new(),
            };
            return super::admin::show(&s, &session, id, Some(refusal)).await;
        }
        Err(e) => {
            return super::admin::show(&s, &session, id, Some(super::Refusal::of("compare", Vec::new(), e)?)).await
        }
    };
    let query = PageQuery::parse(query.0.as_deref());
    let labels_pager = Pager::new(diff.labels_changed.len(), &query, "labels", "labels");
    let labels = labels_pager.keep(std::mem::take(&mut diff.labels_changed));
    let all: Vec<(bool, ExclusionChange)> = std::mem::take(&mut diff.exclusions_added)
        .into_iter()
        .map(|e| (true, e))
        .chain(std::mem::take(&mut diff.exclusions_removed).into_iter().map(|e| (false, e)))
        .collect();
    let exclusions_pager = Pager::new(all.len(), &query, "exclusions", "exclusions");
    let exclusions = exclusions_pager.keep(all);
    render(&DiffPage { campaign, diff, labels, labels_pager, exclusions, exclusions_pager })
}
