//! Releases on the campaign page: cut one, and compare two.

use super::{render, OnPage, PageResult};
use crate::core::releases::{self, Author};
use crate::core::Code;
use crate::core::{campaigns, Error};
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
    let r = releases::create(&s.pool, &s.kinds, id, &Author::User(admin.id), &form.note, Some(form.license.as_str()))
        .await?;
    crate::http::flash::set(&session, format!("Release v{} cut ({} bytes); download it below.", r.number, r.size))
        .await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}#releases")).into_response())
}

#[derive(serde::Deserialize)]
struct DiffQuery {
    from: i32,
    to: i32,
}

#[derive(Template)]
#[template(path = "admin_release_diff.html")]
struct DiffPage {
    campaign: campaigns::Campaign,
    from: i32,
    to: i32,
    added: Vec<String>,
    removed: Vec<String>,
    parameters: Vec<String>,
    /// (item, from, to, reasons)
    labels: Vec<(String, String, String, String)>,
}

fn strings(v: &Value) -> Vec<String> {
    v.as_array().into_iter().flatten().map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_owned)).collect()
}

async fn diff_page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Query(q): Query<DiffQuery>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    if q.from == q.to {
        return Err(Error::invalid(Code::SameRelease, "choose two different releases to compare").into());
    }
    let d = releases::diff(&s.pool, &s.kinds, id, q.from, q.to).await?;
    let label = |v: &Value| v.as_str().map_or_else(|| "none".to_owned(), str::to_owned);
    let labels = d["labels_changed"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|l| (label(&l["item"]), label(&l["from"]), label(&l["to"]), strings(&l["reasons"]).join("; ")))
        .collect();
    render(&DiffPage {
        campaign,
        from: q.from,
        to: q.to,
        added: strings(&d["items_added"]),
        removed: strings(&d["items_removed"]),
        parameters: strings(&d["parameters_changed"]),
        labels,
    })
}
