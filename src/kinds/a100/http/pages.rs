//! The A100 page of a campaign: questions by consistency with their vote
//! distributions, and models scored side by side.

use super::A100Campaign;
use crate::core::{campaign::campaigns, truth::ground_truth};
use crate::error::Error;
use crate::http::extract::{Admin, Path};
use crate::http::kind_routes::KindCampaign;
use crate::http::kind_routes::{asset, CSS};
use crate::http::pages::paging::{PageQuery, Pager};
use crate::http::pages::{render, render_with, OnPage, PageResult};
use crate::http::{csrf, AppState};
use crate::kinds::a100::models;
use crate::kinds::a100::result::A100Result;
use askama::Template;
use axum::extract::State;
use axum::http::StatusCode;
use axum::routing::get;
use axum::{Form, Router};
use std::collections::{HashMap, HashSet};
use tower_sessions::Session;
use uuid::Uuid;

pub fn router() -> Router<AppState> {
    Router::new()
        .route("/admin/campaigns/{id}/a100", get(page).post(score))
        .route("/admin/campaigns/{id}/a100/pilot", get(pilot_page))
        .route("/kinds/a100/style.css", asset(CSS, include_str!("../style.css")))
}

#[derive(Template)]
#[template(path = "kinds/a100/templates/pilot.html")]
struct PilotPage {
    campaign: campaigns::Campaign,
    /// Other A100 campaigns that can be rounds: (id, name, selected).
    candidates: Vec<(Uuid, String, bool)>,
    report: crate::kinds::a100::pilot::PilotReport,
    /// This page's questions, each with whether the selection keeps it.
    questions: Vec<(crate::kinds::a100::pilot::PilotQuestion, bool)>,
    questions_pager: Pager,
    /// This page's members.
    members: Vec<crate::kinds::a100::pilot::PilotMember>,
    members_pager: Pager,
    /// The query string of the download link (rounds and cut-offs).
    selection_query: String,
    top: String,
}

/// Pilot curation: this campaign and the chosen others as rounds (the same
/// members, by worker id), questions ranked by consistency, members'
/// consistency across rounds, and the paper's selection as cut-offs.
async fn pilot_page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    KindCampaign { id, campaign, .. }: A100Campaign,
    // Repeated `round=` parameters: read the raw query (Query cannot collect them).
    query: axum::extract::RawQuery,
) -> PageResult {
    let query = PageQuery::parse(query.0.as_deref());
    let chosen: Vec<Uuid> = query.values("round").filter_map(|v| v.parse().ok()).collect();
    let top = query.value("top").and_then(|t| t.parse::<usize>().ok());
    let min_consistency =
        query.value("min_consistency").and_then(|m| m.parse::<f64>().ok()).unwrap_or(1.0).clamp(0.0, 1.0);
    let mut candidates = Vec::new();
    let mut rounds = vec![id];
    for c in campaigns::list(&s.pool).await? {
        if c.id == id || ![super::super::LAT, super::super::AAT].contains(&c.kind.as_str()) {
            continue;
        }
        let selected = chosen.contains(&c.id);
        if selected {
            rounds.push(c.id);
        }
        candidates.push((c.id, c.name, selected));
    }
    let answers = crate::kinds::a100::pilot_data::answers(&s.pool, &rounds).await?;
    let selection = crate::kinds::a100::pilot::Selection { top, min_consistency };
    let mut report = crate::kinds::a100::pilot::report(&answers, rounds.len(), selection);
    let questions_pager = Pager::new(report.questions.len(), &query, "questions", "questions");
    let members_pager = Pager::new(report.members.len(), &query, "members", "members");
    let selected: HashSet<&str> = report.selected.iter().map(String::as_str).collect();
    let questions =
        questions_pager.rows(&report.questions).iter().map(|q| (q.clone(), selected.contains(q.id.as_str()))).collect();
    let members = members_pager.keep(std::mem::take(&mut report.members));
    let ids: Vec<String> = rounds.iter().map(Uuid::to_string).collect();
    let mut selection_query = format!("rounds={}&min_consistency={min_consistency}", ids.join(","));
    if let Some(t) = top {
        selection_query.push_str(&format!("&top={t}"));
    }
    render(&PilotPage {
        campaign,
        candidates,
        report,
        questions,
        questions_pager,
        members,
        members_pager,
        selection_query,
        top: top.map(|t| t.to_string()).unwrap_or_default(),
    })
}

/// One question row: id, participants, consistency, majority, and
/// (choice, votes, percent) bars.
struct Row {
    id: String,
    participants: u64,
    consistency: f64,
    majority: String,
    /// (choice, votes, percent, the choice's image).
    bars: Vec<(String, u64, u32, String)>,
    /// The partial outfit's images, as the question shows them.
    outfit: Vec<String>,
}

/// One model row: name, headline scores, then per-dimension indexes.
struct ModelRow {
    model: String,
    headline: Vec<(String, f64)>,
    indexes: Vec<(String, f64)>,
}

#[derive(Template)]
#[template(path = "kinds/a100/templates/admin.html")]
struct A100Page {
    campaign: campaigns::Campaign,
    /// This page's questions, most consistent first.
    rows: Vec<Row>,
    rows_pager: Pager,
    models: Vec<ModelRow>,
    dimensions: Vec<String>,
    csrf_token: String,
    /// A refused score: the message, and the form as the admin filled it.
    error: Option<String>,
    form: ScoreForm,
}

async fn build(
    s: &AppState,
    id: Uuid,
    session: &Session,
    query: &PageQuery,
    refused: Option<(StatusCode, String, ScoreForm)>,
) -> PageResult {
    let (status, error, form) = match refused {
        Some((status, message, form)) => (status, Some(message), form),
        None => (StatusCode::OK, None, ScoreForm::default()),
    };
    let campaign = A100Campaign::of(s, id).await?;
    let gt = A100Result::from_json(&ground_truth::aggregate(&s.pool, &s.kinds, &s.caches, id).await?)?;
    let mut rows: Vec<Row> = gt
        .questions
        .iter()
        .map(|q| {
            let bars = q
                .choices
                .iter()
                .map(|c| {
                    let v = q.votes.get(c).copied().unwrap_or(0);
                    (c.clone(), v, (v * 100).checked_div(q.participants).unwrap_or(0) as u32, String::new())
                })
                .collect();
            let majority = match &q.majority {
                Some(m) => m.clone(),
                None if q.participants > 0 => format!("tie: {}", q.tied.join(", ")),
                None => "no votes".to_owned(),
            };
            Row {
                id: q.id.clone(),
                participants: q.participants,
                consistency: q.consistency,
                majority,
                bars,
                outfit: Vec::new(),
            }
        })
        .collect();
    rows.sort_by(|a, b| b.consistency.total_cmp(&a.consistency).then_with(|| a.id.cmp(&b.id)));
    let rows_pager = Pager::new(rows.len(), query, "page", "questions");
    let mut rows = rows_pager.keep(rows);
    // Images, not ids: this page's questions' outfits and choices.
    let ids: Vec<String> = rows.iter().map(|r| r.id.clone()).collect();
    let payloads = crate::core::item::items::payloads_by_external_id(&s.pool, id, &ids).await?;
    for row in &mut rows {
        let Some(p) = payloads.get(&row.id) else { continue };
        let image = |v: &serde_json::Value| v["image"].as_str().unwrap_or_default().to_owned();
        row.outfit = p["outfit"].as_array().into_iter().flatten().map(image).collect();
        let choices: HashMap<&str, String> =
            p["choices"].as_array().into_iter().flatten().filter_map(|c| Some((c["id"].as_str()?, image(c)))).collect();
        for bar in &mut row.bars {
            bar.3 = choices.get(bar.0.as_str()).cloned().unwrap_or_default();
        }
    }
    let scored = models::list(&s.pool, id).await?;
    let mut dimensions: Vec<String> = scored
        .iter()
        .flat_map(|m| m.result["indexes"].as_object().into_iter().flatten().map(|(k, _)| k.clone()))
        .collect();
    dimensions.sort();
    dimensions.dedup();
    let models = scored
        .iter()
        .map(|m| {
            let headline = ["lats", "mlats", "aats"]
                .iter()
                .filter_map(|k| Some(((*k).to_owned(), m.result[*k].as_f64()?)))
                .collect();
            let indexes =
                dimensions.iter().map(|d| (d.clone(), m.result["indexes"][d].as_f64().unwrap_or(f64::NAN))).collect();
            ModelRow { model: m.model.clone(), headline, indexes }
        })
        .collect();
    render_with(
        status,
        &A100Page {
            campaign,
            rows,
            rows_pager,
            models,
            dimensions,
            csrf_token: csrf::token(session).await?,
            error,
            form,
        },
    )
}

async fn page(
    _: OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    Path(id): Path<Uuid>,
    query: axum::extract::RawQuery,
) -> PageResult {
    build(&s, id, &session, &PageQuery::parse(query.0.as_deref()), None).await
}

/// The score form: a model's name and its answers as pasted CSV.
#[derive(serde::Deserialize)]
struct ScoreForm {
    model: String,
    answers: String,
}

impl Default for ScoreForm {
    fn default() -> Self {
        Self { model: String::new(), answers: "question_id,choice_id\n".to_owned() }
    }
}

/// Scores a model from a pasted `question_id,choice_id` CSV.
async fn score(
    OnPage(Admin(admin)): OnPage<Admin>,
    State(s): State<AppState>,
    session: Session,
    KindCampaign { id, .. }: A100Campaign,
    Form(form): Form<ScoreForm>,
) -> PageResult {
    let answers = match pasted_answers(&form.answers) {
        Ok(answers) => answers,
        Err(message) => {
            let refused = Some((StatusCode::UNPROCESSABLE_ENTITY, message, form));
            return build(&s, id, &session, &PageQuery::default(), refused).await;
        }
    };
    match models::score(&s.pool, &s.kinds, &s.caches, id, admin.id, &form.model, &answers).await {
        Ok(_) => Ok(crate::http::flash::redirect(
            &session,
            format!("Model `{}` scored.", form.model.trim()),
            &format!("/admin/campaigns/{id}/a100#models"),
        )
        .await),
        Err(Error::Rejected { code, message }) => {
            build(&s, id, &session, &PageQuery::default(), Some((code.status(), message, form))).await
        }
        Err(e) => Err(e.into()),
    }
}

/// Reads pasted `question_id,choice_id` lines; the message names the line.
fn pasted_answers(text: &str) -> Result<HashMap<String, String>, String> {
    let mut answers = HashMap::new();
    let mut reader = csv::ReaderBuilder::new().has_headers(true).from_reader(text.as_bytes());
    for (i, record) in reader.records().enumerate() {
        let line = i + 2;
        let parsed = record.ok().filter(|r| r.len() == 2).map(|r| (r[0].trim().to_owned(), r[1].trim().to_owned()));
        let Some((q, c)) = parsed else {
            return Err(format!("line {line}: expected `question_id,choice_id`"));
        };
        if answers.insert(q.clone(), c).is_some() {
            return Err(format!("line {line}: question `{q}` answered twice"));
        }
    }
    Ok(answers)
}
