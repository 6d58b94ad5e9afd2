//! The admin's preview of a study: the landing page's instructions and the
//! first questionnaire's tasks one at a time, exactly as a worker sees them,
//! with every answer control disabled. Nothing is recorded and the admin
//! stays an admin.

use super::{render, OnPage, PageResult};
use crate::core::{campaign::campaigns, work::annotator};
use crate::http::extract::{Admin, Path};
use crate::http::task_pages::TaskView;
use crate::http::AppState;
use askama::Template;
use axum::extract::{Query, State};
use axum::routing::get;
use axum::Router;
use uuid::Uuid;

/// The preview's route.
pub fn router() -> Router<AppState> {
    Router::new().route("/admin/campaigns/{id}/preview", get(preview))
}

#[derive(serde::Deserialize)]
struct PreviewQuery {
    /// The task shown (1-based).
    #[serde(default = "first")]
    task: i64,
}

fn first() -> i64 {
    1
}

#[derive(Template)]
#[template(path = "admin_preview.html")]
struct PreviewPage {
    campaign_id: Uuid,
    campaign_name: String,
    kind_title: &'static str,
    instructions: Option<&'static str>,
    position: i64,
    total: i64,
    body: Option<String>,
}

async fn preview(
    OnPage(Admin(_)): OnPage<Admin>,
    State(s): State<AppState>,
    Path(id): Path<Uuid>,
    Query(q): Query<PreviewQuery>,
) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let kind = s.kinds.of(&campaign)?;
    let pages = s.pages.of(&campaign)?;
    let shown = annotator::batch_item_preview(&s.pool, &s.kinds, &campaign, q.task).await?;
    let (body, total, position) = match &shown {
        Some((item, total)) => {
            let position = q.task.clamp(1, *total);
            let view = TaskView {
                item,
                next: None,
                answer: None,
                under_review: None,
                position: usize::try_from(position).unwrap_or(1),
                total: usize::try_from(*total).unwrap_or(1),
                assignment_id: Uuid::nil(),
                csrf_token: "",
                shown_at: 0,
            };
            (Some(pages.render_task(&view)?), *total, position)
        }
        None => (None, 0, 0),
    };
    render(&PreviewPage {
        campaign_id: campaign.id,
        campaign_name: campaign.name,
        kind_title: kind.title(),
        instructions: pages.instructions(),
        position,
        total,
        body,
    })
}
