//! The VTON page of a campaign: what curation removed and why, alpha before
//! and after, model rankings, the human ceiling, and predictor scoring.

use crate::core::{campaigns, ground_truth};
use crate::http::extract::{Admin, Path};
use crate::http::pages::charts::histogram;
use crate::http::pages::{render, OnPage, PageResult};
use crate::http::{csrf, AppState};
use askama::Template;
use axum::extract::State;
use axum::response::{IntoResponse, Redirect};
use axum::routing::{get, post};
use axum::Router;
use serde_json::Value;
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/vton", get(page))
        .route("/admin/campaigns/{id}/vton/curation", post(curate))
        .route("/admin/campaigns/{id}/vton/requeue", post(requeue))
}

#[derive(Template)]
#[template(path = "kinds/vton/admin.html")]
struct VtonPage {
    preset: String,
    campaign: campaigns::Campaign,
    csrf_token: String,
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

fn fmt(v: &Value) -> String {
    v.as_f64()
        .map_or_else(|| "not defined (too few ratings, or every rating the same)".to_owned(), |x| format!("{x:.3}"))
}

async fn page(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    let campaign = campaigns::get(&s.pool, id).await?;
    let gt = ground_truth::aggregate(&s.pool, &s.kinds, id).await?;
    let c = &gt["curation"];
    let annotators = c["annotators"].as_array().cloned().unwrap_or_default();
    let preset = gt["thresholds"]["preset"].as_str().unwrap_or("paper").to_owned();
    let names: &[&str] = if preset == "vton-qbench-code" {
        &["run", "variance", "sanity", "troll"]
    } else {
        &["sanity", "identical", "disagreement"]
    };
    let rules =
        names.iter().map(|r| ((*r).to_owned(), annotators.iter().filter(|a| a["excluded_by"] == *r).count())).collect();
    let qs = c["questionnaires"].as_array().cloned().unwrap_or_default();
    let min_annotators = gt["thresholds"]["min_annotators"].as_u64().unwrap_or(2);
    let dropped_total = qs.iter().filter(|q| q["kept"] == false).count();
    let too_few =
        qs.iter().filter(|q| q["kept"] == false && q["annotators_kept"].as_u64().unwrap_or(0) < min_annotators).count();
    let alphas = |key: &str| -> Vec<f64> { qs.iter().filter_map(|q| q[key].as_f64()).collect() };
    let means = [
        ("before", "alpha_mean_before"),
        ("after annotator rules", "alpha_mean_after"),
        ("kept questionnaires", "alpha_mean_kept"),
    ]
    .iter()
    .map(|(label, key)| ((*label).to_owned(), fmt(&c[*key])))
    .collect();
    let models = gt["models"]["all"]["all"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|m| {
            let ci = format!("[{}, {}]", fmt(&m["ci95"][0]), fmt(&m["ci95"][1]));
            (
                m["rank"].as_u64().unwrap_or(0),
                m["model"].as_str().unwrap_or_default().to_owned(),
                fmt(&m["mean"]),
                ci,
                m["images"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    let h = &gt["human_ceiling"];
    let ceiling = [
        ("PLCC", "plcc"),
        ("SRCC", "srcc"),
        ("R²", "r2"),
        ("pairwise accuracy (micro)", "pairwise_micro"),
        ("pairwise accuracy (macro)", "pairwise_macro"),
    ]
    .iter()
    .map(|(label, key)| ((*label).to_owned(), format!("{} ± {}", fmt(&h[*key]["mean"]), fmt(&h[*key]["sd"]))))
    .collect();
    render(&VtonPage {
        preset,
        campaign,
        csrf_token: csrf::token(&session).await?,
        rules,
        dropped_alpha: dropped_total - too_few,
        dropped_total,
        questionnaires: qs.len(),
        means,
        before_svg: histogram(
            &alphas("alpha_before"),
            12,
            -0.2,
            1.0,
            "alpha before curation",
            c["alpha_mean_before"].as_f64(),
        ),
        after_svg: histogram(
            &alphas("alpha_after"),
            12,
            -0.2,
            1.0,
            "alpha after the annotator rules",
            c["alpha_mean_after"].as_f64(),
        ),
        models,
        ceiling,
    })
}

#[derive(serde::Deserialize)]
struct CurateForm {
    preset: Option<crate::kinds::vton::curation::Preset>,
}

async fn curate(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    axum::Form(form): axum::Form<CurateForm>,
) -> PageResult {
    if let Some(preset) = form.preset {
        crate::kinds::vton::service::set_preset(&s.pool, &s.kinds, id, preset).await?;
    }
    let summary = crate::kinds::vton::service::run_curation(&s.pool, &s.kinds, id).await?;
    let message = format!(
        "Curation ({}) recorded: {} responses excluded ({} annotator-questionnaire pairs removed, {} questionnaires dropped).",
        summary["preset"].as_str().unwrap_or("paper"),
        summary["responses_excluded"],
        summary["annotators_excluded"],
        summary["questionnaires_dropped"]
    );
    crate::http::flash::set(&session, message).await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}/vton")).into_response())
}

async fn requeue(_: OnPage<Admin>, State(s): State<AppState>, session: Session, Path(id): Path<Uuid>) -> PageResult {
    let n = crate::kinds::vton::service::requeue_dropped(&s.pool, &s.kinds, id).await?;
    crate::http::flash::set(&session, format!("{n} questionnaire(s) re-queued for new workers.")).await;
    Ok(Redirect::to(&format!("/admin/campaigns/{id}/vton")).into_response())
}
