//! VTON operations on a running campaign: import triplets, run curation
//! (marking what it excludes), re-queue dropped questionnaires.

use super::curation::Preset;
use super::VtonConfig;
use crate::core::items::NewItem;
use crate::core::{batches, campaigns, ground_truth, responses, Error, Result};
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// A try-on triplet to rate (with its reference image), or a sanity task
/// when `expected` is given.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Triplet {
    /// Image id, unique in the campaign.
    pub id: String,
    /// Garment product image.
    pub garment: String,
    /// Person image.
    pub person: String,
    /// Try-on result to rate.
    pub tryon: String,
    /// The garment worn by a real person (context for length and fit).
    pub reference: String,
    /// Try-on model that produced the image.
    #[serde(default)]
    pub model: String,
    /// Garment category (tops, bottoms, dresses).
    #[serde(default)]
    pub category: String,
    /// Source dataset.
    #[serde(default)]
    pub dataset: String,
    /// For sanity tasks: the known rating (1, 2 or 3).
    #[serde(default)]
    pub expected: Option<u8>,
    /// For sanity tasks: |rating - expected| <= tolerance passes (default 0).
    #[serde(default)]
    pub tolerance: Option<u8>,
}

impl Triplet {
    /// The item to import.
    pub fn to_item(&self) -> NewItem {
        NewItem {
            external_id: self.id.clone(),
            payload: json!({
                "garment": self.garment, "person": self.person, "tryon": self.tryon, "reference": self.reference,
                "model": self.model, "category": self.category, "dataset": self.dataset,
            }),
            gold: self.expected.map(|e| match self.tolerance {
                Some(t) => json!({ "rating": e, "tolerance": t }),
                None => json!({ "rating": e }),
            }),
        }
    }
}

/// Parses triplets from CSV with a header naming the columns
/// (`id,garment,person,tryon,reference,model,category,dataset[,expected[,tolerance]]`).
pub fn parse_csv(text: &str) -> Result<Vec<Triplet>> {
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).from_reader(text.as_bytes());
    let mut out = Vec::new();
    for (i, row) in reader.deserialize::<Triplet>().enumerate() {
        out.push(row.map_err(|e| Error::invalid("invalid_csv", format!("line {}: {e}", i + 2)))?);
    }
    Ok(out)
}

/// Triplets as JSON.
#[derive(Debug, serde::Deserialize, utoipa::ToSchema)]
pub struct Triplets {
    /// The triplets; sanity tasks carry `expected`.
    pub triplets: Vec<Triplet>,
}

/// Parses triplets from CSV or JSON (`{"triplets": [...]}`) into items.
pub fn parse_triplets(text: &str) -> Result<Vec<NewItem>> {
    let triplets = if text.trim_start().starts_with('{') {
        serde_json::from_str::<Triplets>(text)
            .map_err(|e| Error::invalid("invalid_body", format!("line {}: {e}", e.line())))?
            .triplets
    } else {
        parse_csv(text)?
    };
    Ok(triplets.iter().map(Triplet::to_item).collect())
}

/// Scores a quality predictor against the campaign's curated scores (see
/// [`super::predictor`]); unknown images are refused.
pub async fn score_predictor(
    pool: &PgPool,
    campaign_id: Uuid,
    predictions: &std::collections::HashMap<String, f64>,
    options: &super::predictor::PredictorOptions,
) -> Result<Value> {
    let aggregate = ground_truth::aggregate(pool, campaign_id).await?;
    let known: std::collections::HashSet<&str> =
        aggregate["images"].as_array().into_iter().flatten().filter_map(|i| i["image"].as_str()).collect();
    let mut unknown: Vec<&String> = predictions.keys().filter(|k| !known.contains(k.as_str())).collect();
    unknown.sort();
    if let Some(u) = unknown.first() {
        return Err(Error::invalid("unknown_image", format!("`{u}` has no curated human score in this campaign")));
    }
    if !(options.temperature.is_finite() && options.temperature > 0.0) {
        return Err(Error::invalid("invalid_temperature", "temperature must be a positive number"));
    }
    let ratings = if options.labels == super::predictor::Labels::Half {
        let campaign = campaigns::get(pool, campaign_id).await?;
        let thresholds = VtonConfig::parse(&campaign.kind_config()).map(|c| c.curation).unwrap_or_default();
        let input = ground_truth::input(pool, campaign_id).await?;
        tokio::task::spawn_blocking(move || super::ground_truth::curated_ratings(&input, &thresholds))
            .await
            .map_err(|e| Error::Internal(e.to_string()))?
    } else {
        Vec::new()
    };
    Ok(super::predictor::score(&aggregate, predictions, options, &ratings))
}

/// Chooses the campaign's curation preset (kept in its configuration, so the
/// ground truth, exports and pages all use it).
pub async fn set_preset(pool: &PgPool, campaign_id: Uuid, preset: Preset) -> Result<()> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let mut config = campaign.kind_config();
    config["curation"]["preset"] = serde_json::to_value(preset).map_err(|e| Error::Internal(e.to_string()))?;
    campaigns::set_kind_config(pool, campaign_id, &config).await?;
    Ok(())
}

/// Runs curation and records its decisions on the responses (re-runnable:
/// earlier curation marks are replaced). Returns the summary.
pub async fn run_curation(pool: &PgPool, campaign_id: Uuid) -> Result<Value> {
    let aggregate = ground_truth::aggregate(pool, campaign_id).await?;
    let curation = &aggregate["curation"];
    let parse = |v: &Value| v.as_str().and_then(|s| s.parse::<Uuid>().ok());
    let mut exclusions = Vec::new();
    let dropped: Vec<Uuid> = curation["questionnaires"]
        .as_array()
        .into_iter()
        .flatten()
        .filter(|q| q["kept"] == false)
        .filter_map(|q| parse(&q["questionnaire"]))
        .collect();
    for a in curation["annotators"].as_array().into_iter().flatten() {
        let (Some(batch), Some(annotator)) = (parse(&a["questionnaire"]), parse(&a["annotator"])) else { continue };
        if let Some(rule) = a["excluded_by"].as_str() {
            exclusions.push((batch, annotator, rule.to_owned()));
        } else if dropped.contains(&batch) {
            exclusions.push((batch, annotator, "questionnaire_dropped".to_owned()));
        }
    }
    let marked = responses::set_curation_exclusions(pool, campaign_id, &exclusions).await?;
    Ok(json!({
        "preset": aggregate["thresholds"]["preset"],
        "responses_excluded": marked,
        "annotators_excluded": exclusions.iter().filter(|e| e.2 != "questionnaire_dropped").count(),
        "questionnaires_dropped": dropped.len(),
        "alpha_mean_before": curation["alpha_mean_before"],
        "alpha_mean_after": curation["alpha_mean_after"],
        "alpha_mean_kept": curation["alpha_mean_kept"],
    }))
}

/// Opens every questionnaire that has fewer reliable annotators than the
/// target to new workers, until the target can be met. Returns how many
/// questionnaires were re-queued.
pub async fn requeue_dropped(pool: &PgPool, campaign_id: Uuid) -> Result<usize> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let config = VtonConfig::parse(&campaign.kind_config()).map_err(Error::from)?;
    let aggregate = ground_truth::aggregate(pool, campaign_id).await?;
    let mut requeued = 0;
    for q in aggregate["curation"]["questionnaires"].as_array().into_iter().flatten() {
        let Some(batch) = q["questionnaire"].as_str().and_then(|s| s.parse::<Uuid>().ok()) else { continue };
        let reliable = if q["kept"] == true { q["annotators_kept"].as_i64().unwrap_or(0) as i32 } else { 0 };
        let missing = config.annotators_per_questionnaire - reliable;
        if missing > 0 {
            batches::requeue(pool, batch, missing).await?;
            requeued += 1;
        }
    }
    Ok(requeued)
}
