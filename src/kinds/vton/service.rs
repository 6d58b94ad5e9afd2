//! VTON operations on a running campaign: import triplets, run curation
//! (marking what it excludes), re-queue dropped questionnaires.

use super::curation::Preset;
use super::result::VtonGroundTruth;
use super::VtonConfig;
use crate::core::item::new_item::NewItem;
use crate::core::{campaign::campaigns, truth::ground_truth, work::batches, work::responses};
use crate::error::Code;
use crate::error::{Error, Result};
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

/// The columns of a triplet CSV, required first.
const CSV_COLUMNS: [&str; 10] =
    ["id", "garment", "person", "tryon", "reference", "model", "category", "dataset", "expected", "tolerance"];
/// Columns every row must fill.
const REQUIRED: [&str; 5] = ["id", "garment", "person", "tryon", "reference"];

/// Parses triplets from CSV with a header naming the columns
/// (`id,garment,person,tryon,reference,model,category,dataset[,expected[,tolerance]]`).
/// Every problem names its line (as an editor counts them) and its column.
pub fn parse_csv(text: &str) -> Result<Vec<Triplet>> {
    let invalid = |line: u64, message: String| Error::invalid(Code::InvalidCsv, format!("line {line}: {message}"));
    let mut reader = csv::ReaderBuilder::new().trim(csv::Trim::All).flexible(true).from_reader(text.as_bytes());
    let header: Vec<String> =
        reader.headers().map_err(|e| invalid(1, e.to_string()))?.iter().map(str::to_ascii_lowercase).collect();
    if let Some(missing) = REQUIRED.iter().find(|c| !header.iter().any(|h| h == *c)) {
        return Err(invalid(
            1,
            format!(
                "the header has no column `{missing}` (expected {}, the last three optional)",
                CSV_COLUMNS.join(",")
            ),
        ));
    }
    if let Some(unknown) = header.iter().find(|h| !CSV_COLUMNS.contains(&h.as_str())) {
        return Err(invalid(1, format!("unknown column `{unknown}` (the columns are {})", CSV_COLUMNS.join(","))));
    }
    let at = |name: &str| header.iter().position(|h| h == name);
    let mut out = Vec::new();
    for record in reader.records() {
        let record = record.map_err(|e| invalid(e.position().map_or(0, |p| p.line()), e.to_string()))?;
        let line = record.position().map_or(0, |p| p.line());
        let field = |name: &str| at(name).and_then(|i| record.get(i)).unwrap_or("").to_owned();
        for name in REQUIRED {
            if field(name).is_empty() {
                return Err(invalid(line, format!("`{name}` is empty")));
            }
        }
        let number = |name: &str, allowed: std::ops::RangeInclusive<u8>| -> Result<Option<u8>> {
            match field(name).as_str() {
                "" => Ok(None),
                v => v.parse::<u8>().ok().filter(|n| allowed.contains(n)).map(Some).ok_or_else(|| {
                    invalid(
                        line,
                        format!("`{name}` is `{v}`; expected {} to {} or empty", allowed.start(), allowed.end()),
                    )
                }),
            }
        };
        out.push(Triplet {
            id: field("id"),
            garment: field("garment"),
            person: field("person"),
            tryon: field("tryon"),
            reference: field("reference"),
            model: field("model"),
            category: field("category"),
            dataset: field("dataset"),
            expected: number("expected", 1..=3)?,
            tolerance: number("tolerance", 0..=2)?,
        });
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
        // Say what was expected when the JSON is of another kind altogether.
        let value: Value = serde_json::from_str(text)
            .map_err(|e| Error::invalid(Code::InvalidBody, format!("line {}: not valid JSON: {e}", e.line())))?;
        if value.get("triplets").is_none() {
            let keys: Vec<&str> = value.as_object().map(|o| o.keys().map(String::as_str).collect()).unwrap_or_default();
            return Err(Error::invalid(
                Code::InvalidBody,
                format!(
                    "a VTON import is JSON {{\"triplets\": [...]}} or CSV with the header {}; this JSON has {}",
                    CSV_COLUMNS.join(","),
                    if keys.is_empty() { "no keys".to_owned() } else { format!("the keys {}", keys.join(", ")) }
                ),
            ));
        }
        serde_json::from_value::<Triplets>(value)
            .map_err(|e| Error::invalid(Code::InvalidBody, format!("triplets: {e}")))?
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
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
    predictions: &std::collections::HashMap<String, f64>,
    options: &super::predictor::PredictorOptions,
) -> Result<Value> {
    let gt = VtonGroundTruth::from_json(&ground_truth::aggregate(pool, kinds, caches, campaign_id).await?)?;
    let known: std::collections::HashSet<&str> = gt.images.iter().map(|i| i.image.as_str()).collect();
    let mut unknown: Vec<&String> = predictions.keys().filter(|k| !known.contains(k.as_str())).collect();
    unknown.sort();
    if let Some(u) = unknown.first() {
        return Err(Error::invalid(Code::UnknownImage, format!("`{u}` has no curated human score in this campaign")));
    }
    if !(options.temperature.is_finite() && options.temperature > 0.0) {
        return Err(Error::invalid(Code::InvalidTemperature, "temperature must be a positive number"));
    }
    let ratings = if options.labels == super::predictor::Labels::Half {
        let campaign = campaigns::get(pool, campaign_id).await?;
        let thresholds = kinds.config::<VtonConfig>(&campaign)?.curation;
        let input = ground_truth::input(pool, campaign_id).await?;
        tokio::task::spawn_blocking(move || {
            super::ground_truth::curated_ratings(&input.typed::<super::Vton>(), &thresholds)
        })
        .await
        .map_err(|e| Error::internal("the curation preset", e))?
    } else {
        Vec::new()
    };
    Ok(super::predictor::score(&gt.images, Some(&gt.human_ceiling), predictions, options, &ratings))
}

/// Chooses the campaign's curation preset (kept in its configuration, so the
/// ground truth, exports and pages all use it).
pub async fn set_preset(pool: &PgPool, kinds: &crate::core::Registry, campaign_id: Uuid, preset: Preset) -> Result<()> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let mut config = campaign.config.clone();
    config["curation"]["preset"] =
        serde_json::to_value(preset).map_err(|e| Error::internal("the curation preset", e))?;
    campaigns::set_kind_config(pool, kinds, campaign_id, &config).await?;
    Ok(())
}

/// What a curation run recorded (the API's answer and the page's message).
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
pub struct CurationSummary {
    /// The preset used.
    #[schema(value_type = String)]
    pub preset: Preset,
    /// Responses this curation excludes.
    pub responses_excluded: u64,
    /// Responses whose exclusion this run added, removed or changed (0 when
    /// nothing changed since the last run: then nothing is written).
    pub responses_changed: u64,
    /// (questionnaire, annotator) pairs removed by the annotator rules.
    pub annotators_excluded: usize,
    /// Questionnaires dropped (too little agreement or too few annotators).
    pub questionnaires_dropped: usize,
    /// Mean alpha before curation.
    pub alpha_mean_before: Option<f64>,
    /// Mean alpha after the annotator rules.
    pub alpha_mean_after: Option<f64>,
    /// Mean alpha of the kept questionnaires.
    pub alpha_mean_kept: Option<f64>,
}

/// Runs curation and records its decisions on the responses (re-runnable:
/// only marks that differ from the last run are written, so a re-run with
/// nothing new writes nothing and the cached ground truth stays). Returns
/// the summary.
pub async fn run_curation(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
) -> Result<CurationSummary> {
    let gt = VtonGroundTruth::from_json(&ground_truth::aggregate(pool, kinds, caches, campaign_id).await?)?;
    let curation = &gt.curation;
    let parse = |v: &str| v.parse::<Uuid>().ok();
    let dropped: Vec<Uuid> =
        curation.questionnaires.iter().filter(|q| !q.kept).filter_map(|q| parse(&q.questionnaire)).collect();
    let mut exclusions = Vec::new();
    for a in &curation.annotators {
        let (Some(batch), Some(annotator)) = (parse(&a.questionnaire), parse(&a.annotator)) else { continue };
        if let Some(rule) = a.excluded_by {
            exclusions.push((batch, annotator, rule.name().to_owned()));
        } else if dropped.contains(&batch) {
            exclusions.push((batch, annotator, "questionnaire_dropped".to_owned()));
        }
    }
    let marked = responses::set_curation_exclusions(pool, campaign_id, &exclusions).await?;
    Ok(CurationSummary {
        preset: gt.thresholds.preset,
        responses_excluded: marked.excluded,
        responses_changed: marked.changed,
        annotators_excluded: exclusions.iter().filter(|e| e.2 != "questionnaire_dropped").count(),
        questionnaires_dropped: dropped.len(),
        alpha_mean_before: curation.alpha_mean_before,
        alpha_mean_after: curation.alpha_mean_after,
        alpha_mean_kept: curation.alpha_mean_kept,
    })
}

/// Opens every questionnaire that has fewer reliable annotators than the
/// target to new workers, until the target can be met. Returns how many
/// questionnaires were re-queued.
pub async fn requeue_dropped(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
) -> Result<usize> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let config: VtonConfig = kinds.config(&campaign)?;
    let gt = VtonGroundTruth::from_json(&ground_truth::aggregate(pool, kinds, caches, campaign_id).await?)?;
    let mut requeued = 0;
    for q in &gt.curation.questionnaires {
        let Ok(batch) = q.questionnaire.parse::<Uuid>() else { continue };
        let reliable = if q.kept { i32::try_from(q.annotators_kept).unwrap_or(i32::MAX) } else { 0 };
        let missing = config.annotators_per_questionnaire - reliable;
        if missing > 0 {
            batches::requeue(pool, batch, missing).await?;
            requeued += 1;
        }
    }
    Ok(requeued)
}

#[cfg(test)]
mod tests {
    use super::*;

    const HEADER: &str = "id,garment,person,tryon,reference,model,category,dataset,expected\n";

    fn error_of(text: &str) -> String {
        parse_triplets(text).expect_err("refused").to_string()
    }

    #[test]
    fn csv_errors_name_the_line_an_editor_shows_and_the_column() {
        // The first data row spans two lines (a quoted newline): the bad row is on line 4.
        let text = format!("{HEADER}a,\"/g\nwrapped\",/p,/t,/r,m,tops,d,\nb,/g,/p,/t,/r,m,tops,d,7\n");
        let e = error_of(&text);
        assert!(e.contains("line 4") && e.contains("`expected` is `7`") && e.contains("1 to 3"), "{e}");
        let e = error_of(&format!("{HEADER}c,/g,,/t,/r,m,tops,d,\n"));
        assert!(e.contains("line 2") && e.contains("`person` is empty"), "{e}");
        let e = error_of("id,garment,tryon\nx,/g,/t\n");
        assert!(e.contains("line 1") && e.contains("no column `person`"), "{e}");
        let e = error_of("id,garment,person,tryon,reference,colour\n");
        assert!(e.contains("unknown column `colour`"), "{e}");
        assert_eq!(
            parse_triplets(&format!("{HEADER}s,/g,/p,/t,/r,m,tops,d,1\n")).expect("fine")[0].gold,
            Some(serde_json::json!({"rating": 1}))
        );
    }

    #[test]
    fn json_of_another_kind_is_explained() {
        let e = error_of(r#"{"questions": [{"id": "q1"}]}"#);
        assert!(e.contains("{\"triplets\": [...]}") && e.contains("the keys questions"), "{e}");
        assert!(!e.contains("missing field"), "{e}");
    }
}
