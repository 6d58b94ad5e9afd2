//! The expert's home page: the open expert campaigns with their own
//! progress in each (done and remaining) and the batches they could start.

use super::{render, OnPage, PageResult};
use crate::core::{campaign::campaigns, truth::progress};
use crate::http::extract::Expert;
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::State;
use axum::routing::get;
use axum::Router;
use tower_sessions::Session;

pub fn router() -> Router<AppState> {
    Router::new().route("/expert", get(home))
}

/// One open campaign as the expert sees it.
struct Row {
    campaign: campaigns::Campaign,
    kind_title: &'static str,
    progress: progress::AnnotatorProgress,
    /// Batches the expert could start now (others may take those shared
    /// with them first).
    open_batches: i64,
    /// Of those, batches reviewing another expert's answers.
    reviews: i64,
    /// Whether the campaign has a review step at all.
    reviewed: bool,
}

#[derive(Template)]
#[template(path = "expert_home.html")]
struct Home {
    expert: String,
    campaigns: Vec<Row>,
    csrf_token: String,
}

async fn home(OnPage(Expert(expert)): OnPage<Expert>, State(s): State<AppState>, session: Session) -> PageResult {
    let mut rows = Vec::new();
    for campaign in campaigns::open_for_experts(&s.pool).await? {
        let Some(kind) = s.kinds.find(&campaign.kind) else { continue };
        let (progress, open) = progress::of_annotator_now(&s.pool, &s.kinds, &campaign, expert.id).await?;
        let reviewed = campaign.settings.review;
        rows.push(Row {
            campaign,
            kind_title: kind.title(),
            progress,
            open_batches: open.batches,
            reviews: open.reviews,
            reviewed,
        });
    }
    render(&Home { expert: expert.display_name(), campaigns: rows, csrf_token: csrf::token(&session).await? })
}
