//! Amazon Mechanical Turk's ExternalQuestion, as its documentation has it:
//! the HIT shows our link in an iframe with `assignmentId`, `hitId`,
//! `turkSubmitTo` and, once accepted, `workerId`. A preview
//! (`assignmentId=ASSIGNMENT_ID_NOT_AVAILABLE`) shows the instructions and
//! one sample task read-only and creates no session or identity; an
//! accepted HIT ends with a form posted to `turkSubmitTo` +
//! `/mturk/externalSubmit` carrying the assignment id.

use super::{render, PageResult};
use crate::core::{campaign::campaigns, work::annotator};
use crate::http::task_pages::TaskView;
use crate::http::AppState;
use askama::Template;
use axum::http::{HeaderMap, HeaderValue};
use uuid::Uuid;

/// The `assignmentId` MTurk sends while a worker previews the HIT.
pub const PREVIEW_ASSIGNMENT: &str = "ASSIGNMENT_ID_NOT_AVAILABLE";

/// Where MTurk's HITs live (production and the sandbox): the only places a
/// HIT may be submitted to and the only pages that may frame worker pages.
pub const ORIGINS: [&str; 2] = ["https://www.mturk.com", "https://workersandbox.mturk.com"];

/// The Content-Security-Policy of worker pages: the service's own, except
/// that MTurk may show them in its HIT frame and they may submit the HIT.
pub const WORKER_CSP: &str =
    "default-src 'self'; script-src 'self'; style-src 'self'; img-src 'self' https: http: data:; \
     object-src 'none'; base-uri 'none'; form-action 'self' https://www.mturk.com https://workersandbox.mturk.com; \
     frame-ancestors 'self' https://www.mturk.com https://workersandbox.mturk.com";

/// The worker pages' policy as a header value.
pub fn worker_csp() -> HeaderValue {
    HeaderValue::from_static(WORKER_CSP)
}

/// `turkSubmitTo` when it is one of MTurk's own origins (a link naming any
/// other site is never submitted to), without a trailing slash.
pub fn submit_origin(turk_submit_to: &str) -> Option<&'static str> {
    let given = turk_submit_to.trim().trim_end_matches('/');
    ORIGINS.into_iter().find(|o| o.eq_ignore_ascii_case(given))
}

/// The HIT's submission form: where it posts and the assignment it submits.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct HitSubmission {
    /// `https://…mturk.com/mturk/externalSubmit`.
    pub action: String,
    /// MTurk's assignment id.
    pub assignment_id: String,
}

impl HitSubmission {
    /// The submission for a worker's join, when it came from an accepted MTurk HIT.
    pub fn from_platform_ids(ids: Option<&serde_json::Value>) -> Option<Self> {
        let ids = ids?;
        let origin = submit_origin(ids.get("turk_submit_to")?.as_str()?)?;
        let assignment_id = ids.get("assignment_id")?.as_str()?.to_owned();
        (assignment_id != PREVIEW_ASSIGNMENT && !assignment_id.is_empty())
            .then(|| Self { action: format!("{origin}/mturk/externalSubmit"), assignment_id })
    }
}

/// Whether the browser is loading the page inside a frame (the HIT's).
pub fn in_frame(headers: &HeaderMap) -> bool {
    headers.get("sec-fetch-dest").is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"iframe"))
}

#[derive(Template)]
#[template(path = "work_preview.html")]
struct PreviewPage<'a> {
    campaign_name: &'a str,
    kind_title: &'a str,
    instructions: Option<&'static str>,
    sample: Option<String>,
}

/// The preview: what the HIT is, and one sample task that cannot be
/// answered. Nothing is stored, no cookie is set.
pub async fn preview(s: &AppState, campaign_id: Uuid) -> PageResult {
    let campaign = campaigns::get(&s.pool, campaign_id).await?;
    let kind = s.kinds.of(&campaign)?;
    let pages = s.pages.of(&campaign)?;
    let sample = match annotator::sample_item(&s.pool, &s.kinds, &campaign).await? {
        Some(item) => Some(pages.render_task(&TaskView {
            item: &item,
            next: None,
            answer: None,
            under_review: None,
            position: 1,
            total: 1,
            assignment_id: Uuid::nil(),
            csrf_token: "",
            shown_at: 0,
        })?),
        None => None,
    };
    render(&PreviewPage {
        campaign_name: &campaign.name,
        kind_title: kind.title(),
        instructions: s.pages.of(&campaign)?.instructions(),
        sample,
    })
}

#[derive(Template)]
#[template(path = "work_new_tab.html")]
struct NewTabPage<'a> {
    link: &'a str,
}

/// Inside the HIT's frame the browser keeps no cookie for this site (it is
/// a third party there), so the work happens in a tab of its own: the same
/// link, opened at the top.
pub fn open_in_new_tab(link: &str) -> PageResult {
    render(&NewTabPage { link })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_mturks_own_origins_are_submitted_to() {
        assert_eq!(submit_origin("https://workersandbox.mturk.com/"), Some("https://workersandbox.mturk.com"));
        assert_eq!(submit_origin("https://www.mturk.com"), Some("https://www.mturk.com"));
        for other in ["https://evil.example", "https://www.mturk.com.evil.example", "http://www.mturk.com", ""] {
            assert_eq!(submit_origin(other), None, "{other}");
        }
        let ids = serde_json::json!({"turk_submit_to": "https://www.mturk.com", "assignment_id": "A1"});
        assert_eq!(
            HitSubmission::from_platform_ids(Some(&ids)),
            Some(HitSubmission {
                action: "https://www.mturk.com/mturk/externalSubmit".into(),
                assignment_id: "A1".into()
            })
        );
        let preview =
            serde_json::json!({"turk_submit_to": "https://www.mturk.com", "assignment_id": PREVIEW_ASSIGNMENT});
        assert_eq!(HitSubmission::from_platform_ids(Some(&preview)), None);
    }
}
