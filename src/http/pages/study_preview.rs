//! The admin's preview of a study: the screens a worker walks, in their
//! order and exactly as they are shown — the landing page (time and pay,
//! the introduction, the instructions, the background questions and the
//! consent), then the first questionnaire's tasks one at a time — with
//! every answer control disabled. Nothing is recorded and the admin stays
//! an admin.

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
    /// The task shown (1-based); none: the landing page, the first screen.
    task: Option<i64>,
}

#[derive(Template)]
#[template(path = "admin_preview.html")]
struct PreviewPage {
    campaign: campaigns::Campaign,
    kind_title: &'static str,
    instructions: Option<&'static str>,
    /// The landing page is shown (else a task).
    landing: bool,
    /// The campaign's own introduction: instructions, time, pay.
    intro: crate::core::campaign::intro::Intro,
    /// Its instructions as paragraphs and images.
    intro_blocks: Vec<crate::core::campaign::intro::Block>,
    /// The background questions a new worker answers.
    background: Vec<crate::core::campaign::profiles::BackgroundQuestion>,
    /// The consent text a new worker agrees to.
    consent: Option<String>,
    position: i64,
    total: i64,
    body: Option<String>,
}

impl PreviewPage {
    /// Nothing is chosen in the preview (the landing page's start form
    /// shows a refused form's choices; the preview has none).
    fn chosen(&self, _question: &str, _option: &str) -> bool {
        false
    }

    /// The consent box is never ticked in the preview.
    fn consent_ticked(&self) -> bool {
        false
    }
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
    let landing = q.task.is_none();
    // The study's page reads the introduction and the questions; a task
    // screen reads its task.
    let (intro, background) = if landing {
        let background = s.kinds.rules(&campaign)?.policy().background.clone();
        (crate::core::campaign::intro::get(&s.pool, id).await?, background)
    } else {
        Default::default()
    };
    let shown = annotator::batch_item_preview(&s.pool, &s.kinds, &campaign, q.task.unwrap_or(1)).await?;
    let (body, total, position) = match &shown {
        Some((_, total)) if landing => (None, *total, 0),
        Some((item, total)) => {
            let position = q.task.unwrap_or(1).clamp(1, *total);
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
        kind_title: kind.title(),
        instructions: pages.instructions(),
        landing,
        intro_blocks: intro.blocks(),
        consent: intro.consent.clone(),
        intro,
        background,
        campaign,
        position,
        total,
        body,
    })
}
