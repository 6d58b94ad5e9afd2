//! The VTON page of a campaign: what curation removed and why, alpha before
//! and after, model rankings, the human ceiling, and predictor scoring.

use super::VtonCampaign;
use crate::core::campaign::campaigns;
use crate::core::truth::ground_truth;
use crate::http::extract::{Admin, Path};
use crate::http::kind_routes::KindCampaign;
use crate::http::kind_routes::{asset, CSS};
use crate::http::pages::charts::histogram;
use crate::http::pages::{render_with, OnPage, PageResult, Refusal};
use crate::http::{csrf, AppState};
use crate::kinds::vton::curation::{Preset, Rule};
use crate::kinds::vton::result::VtonGroundTruth;
use askama::Template;
use axum::extract::State;
use axum::routing::{get, post};
use axum::Router;
use std::sync::Arc;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/vton", get(page))
        .route("/admin/campaigns/{id}/vton/curation", post(curate))
        .route("/admin/campaigns/{id}/vton/requeue", post(requeue))
        .route("/kinds/vton/style.css", asset(CSS, include_str!("../style.css")))
}

#[derive(Template)]
#[template(path = "kinds/vton/templates/admin.html")]
struct VtonPage {
    campaign: campaigns::Campaign,
    csrf_token: String,
    /// What the ground truth says, as shown (`None` while the first
    /// figures are computed).
    f: Option<Arc<Figures>>,
    /// The rules the figures shown were computed under (the configured
    /// ones while there are none).
    preset: String,
    /// Set when `f` is not current: what the page says about it.
    notice: Option<String>,
    /// The preset the campaign is set to now, when the figures shown were
    /// computed under another (right after a switch, until they are redone).
    switched_to: Option<String>,
    /// A form of the page the service refused, shown beside it.
    refused: Option<Refusal>,
}

/// The page's figures, derived once per change of the campaign from its
/// ground truth (tens of MB at VTON-QBench size) and kept beside it: a view
/// reads this, not the ground truth (see [`ground_truth::summary`]).
struct Figures {
    preset: String,
    rules: Vec<(String, usize)>,
    dropped_alpha: usize,
    dropped_total: usize,
    questionnaires: usize,
    means: Vec<(String, String)>,
    before_svg: String,
    after_svg: String,
    models: Vec<(u64, String, String, String, u64)>,
    ceiling: Vec<(String, String)>,
}

fn fmt(v: Option<f64>) -> String {
    v.map_or_else(|| "not defined (too few ratings, or every rating the same)".to_owned(), |x| format!("{x:.3}"))
}

/// The page's figures from the ground truth's JSON text.
fn figures(_kind: &dyn crate::core::kind::contract::TaskKind, json: &[u8]) -> crate::error::Result<Figures> {
    let gt = VtonGroundTruth::from_json(json)?;
    let c = &gt.curation;
    let preset = gt.thresholds.preset;
    let rules: &[Rule] = if preset == Preset::VtonQbenchCode {
        &[Rule::Run, Rule::Variance, Rule::Sanity, Rule::Troll]
    } else {
        &[Rule::Sanity, Rule::Identical, Rule::Disagreement]
    };
    let rules = rules
        .iter()
        .map(|r| (r.name().to_owned(), c.annotators.iter().filter(|a| a.excluded_by == Some(*r)).count()))
        .collect();
    let min_annotators = gt.thresholds.min_annotators;
    let dropped_total = c.questionnaires.iter().filter(|q| !q.kept).count();
    let too_few = c.questionnaires.iter().filter(|q| !q.kept && q.annotators_kept < min_annotators).count();
    let before: Vec<f64> = c.questionnaires.iter().filter_map(|q| q.alpha_before).collect();
    let after: Vec<f64> = c.questionnaires.iter().filter_map(|q| q.alpha_after).collect();
    let means = vec![
        ("before".to_owned(), fmt(c.alpha_mean_before)),
        ("after annotator rules".to_owned(), fmt(c.alpha_mean_after)),
        ("kept questionnaires".to_owned(), fmt(c.alpha_mean_kept)),
    ];
    let models = gt
        .models
        .get("all")
        .and_then(|m| m.get("all"))
        .into_iter()
        .flatten()
        .map(|m| {
            let ci = format!("[{}, {}]", fmt(Some(m.ci95[0])), fmt(Some(m.ci95[1])));
            (m.rank as u64, m.model.clone(), fmt(Some(m.mean)), ci, m.images as u64)
        })
        .collect();
    let h = &gt.human_ceiling;
    let ceiling = [
        ("PLCC", &h.plcc),
        ("SRCC", &h.srcc),
        ("R²", &h.r2),
        ("pairwise accuracy (micro)", &h.pairwise_micro),
        ("pairwise accuracy (macro)", &h.pairwise_macro),
    ]
    .iter()
    .map(|(label, m)| {
        let shown = match (m.mean, m.sd) {
            (Some(_), Some(_)) => format!("{} ± {}", fmt(m.mean), fmt(m.sd)),
            // One reason is enough; a mean without a spread is shown alone.
            _ => fmt(m.mean),
        };
        ((*label).to_owned(), shown)
    })
    .collect();
    Ok(Figures {
        preset: preset.name().to_owned(),
        rules,
        dropped_alpha: dropped_total - too_few,
        dropped_total,
        questionnaires: c.questionnaires.len(),
        means,
        before_svg: histogram(&before, 12, -0.2, 1.0, "alpha before curation", c.alpha_mean_before),
        after_svg: histogram(&after, 12, -0.2, 1.0, "alpha after the annotator rules", c.alpha_mean_after),
        models,
        ceiling,
    })
}

async fn page(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    show_page(&s, &session, id, None).await
}

/// The page, with a refused form beside its section (and the refusal's status).
async fn show_page(s: &AppState, session: &Session, id: Uuid, refused: Option<Refusal>) -> PageResult {
    let campaign = VtonCampaign::of(s, id).await?;
    let (f, freshness) = ground_truth::summary(&s.pool, &s.kinds, &s.caches, &campaign, "vton-page", figures).await?;
    let configured = VtonCampaign::config(s, &campaign)?.curation.preset.name();
    let preset = f.as_ref().map_or(configured, |f| f.preset.as_str()).to_owned();
    let switched_to = Some(configured).filter(|name| *name != preset).map(str::to_owned);
    let notice = freshness.notice();
    let status = refused.as_ref().map_or(axum::http::StatusCode::OK, |r| r.status);
    let csrf_token = csrf::token(session).await?;
    render_with(status, &VtonPage { campaign, csrf_token, f, preset, notice, switched_to, refused })
}

/// Template helpers.
impl VtonPage {
    /// The refusal of the form in section `form`, if it was refused.
    fn refusal(&self, form: &str) -> Option<String> {
        Refusal::of_form(&self.refused, form)
    }
}

#[derive(serde::Deserialize)]
struct CurateForm {
    preset: Option<crate::kinds::vton::curation::Preset>,
}

async fn curate(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VtonCampaign,
    axum::Form(form): axum::Form<CurateForm>,
) -> PageResult {
    let outcome = async {
        if let Some(preset) = form.preset {
            crate::kinds::vton::service::set_preset(&s.pool, &s.kinds, id, preset).await?;
        }
        let summary = crate::kinds::vton::service::run_curation(&s.pool, &s.kinds, &s.caches, id).await?;
        Ok(format!(
            "Curation ({}) recorded: {} responses excluded, {} changed since the last run ({} annotator-questionnaire pairs removed, {} questionnaires dropped).",
            summary.preset.name(),
            summary.responses_excluded,
            summary.responses_changed,
            summary.annotators_excluded,
            summary.questionnaires_dropped
        ))
    }
    .await;
    act(&s, &session, id, "curation", outcome).await
}

async fn requeue(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: VtonCampaign,
) -> PageResult {
    let outcome = crate::kinds::vton::service::requeue_dropped(&s.pool, &s.kinds, &s.caches, id)
        .await
        .map(|n| format!("{n} questionnaire(s) re-queued for new workers."));
    act(&s, &session, id, "curation", outcome).await
}

/// A page form's outcome: its message flashed and back to the page, or the
/// refusal beside the form (these forms take no typed input to keep).
async fn act(
    s: &AppState,
    session: &Session,
    id: Uuid,
    form: &'static str,
    outcome: Result<String, crate::error::Error>,
) -> PageResult {
    let to = format!("/admin/campaigns/{id}/vton");
    crate::http::pages::act(session, outcome, &to, form, Vec::new(), |r| show_page(s, session, id, Some(r))).await
}
