//! Model scoring against a campaign's current ground truth; scores of
//! several models are kept side by side.

use super::gt_file::GroundTruth;
use crate::core::{campaign::campaigns, truth::ground_truth, truth::model_scores};
use crate::error::Code;
use crate::error::{Error, Result};
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

pub use crate::core::truth::model_scores::ModelScore;

/// The campaign's ground truth in the file format.
pub async fn ground_truth_file(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
) -> Result<GroundTruth> {
    let aggregate = ground_truth::aggregate(pool, kinds, caches, campaign_id).await?;
    serde_json::from_slice::<GroundTruth>(&aggregate)
        .map_err(|e| Error::invalid(Code::WrongKind, format!("not an A100 campaign: {e}")))
}

/// Scores a model's answers (question id -> choice id) and stores the result
/// under the model's name (a rescore replaces it).
pub async fn score(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    caches: &crate::core::Caches,
    campaign_id: Uuid,
    by: Uuid,
    model: &str,
    answers: &HashMap<String, String>,
) -> Result<ModelScore> {
    let model = model_scores::model_name(model)?;
    campaigns::get(pool, campaign_id).await?;
    let gt = ground_truth_file(pool, kinds, caches, campaign_id).await?;
    let choices = gt.choices();
    let mut unknown: Vec<&String> = answers.keys().filter(|q| !choices.contains_key(q.as_str())).collect();
    unknown.sort();
    if let Some(q) = unknown.first() {
        return Err(Error::invalid(Code::UnknownQuestion, format!("`{q}` is not a question of this campaign")));
    }
    let mut sorted: Vec<(&String, &String)> = answers.iter().collect();
    sorted.sort();
    for (q, c) in sorted {
        if !choices[q.as_str()].contains(&c.as_str()) {
            return Err(Error::invalid(
                Code::UnknownChoice,
                format!("question `{q}`: `{c}` is not one of its choices"),
            ));
        }
    }
    let result = gt.score(answers, crate::stats::questionnaire::TieCredit::default());
    let answers = serde_json::to_value(answers).map_err(|e| Error::internal("storing the model's answers", e))?;
    let result = serde_json::to_value(&result).map_err(|e| Error::internal("storing the model's score", e))?;
    let stored = model_scores::store(pool, campaign_id, by, model, &answers, &result).await?;
    Ok(stored)
}

/// All scored models of a campaign, by name.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<ModelScore>> {
    model_scores::list(pool, campaign_id).await
}
