//! The expert's home page: the open expert campaigns.

use super::{render, OnPage, PageResult};
use crate::core::{campaigns, kinds_of};
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

#[derive(Template)]
#[template(path = "expert_home.html")]
struct Home {
    expert: String,
    campaigns: Vec<(campaigns::Campaign, &'static str)>,
    csrf_token: String,
}

async fn home(OnPage(Expert(expert)): OnPage<Expert>, State(s): State<AppState>, session: Session) -> PageResult {
    let mut open = Vec::new();
    for c in campaigns::list(&s.pool).await? {
        if let Ok(kind) = kinds_of(&c) {
            if c.state == "open" && !kind.crowd() {
                open.push((c, kind.title()));
            }
        }
    }
    render(&Home { expert: expert.display_name(), campaigns: open, csrf_token: csrf::token(&session).await? })
}
