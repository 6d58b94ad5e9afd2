//! Model scoring against a campaign's current ground truth; scores of
//! several models are kept side by side.

use super::gt_file::GroundTruth;
use crate::core::Code;
use crate::core::{campaigns, ground_truth, Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use std::collections::HashMap;
use uuid::Uuid;

/// A stored model score.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct ModelScore {
    /// Model name.
    pub model: String,
    /// The scorer's output (as `atelier a100 score --json`).
    pub result: Value,
    /// When it was scored.
    pub created_at: chrono::DateTime<chrono::Utc>,
}

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
    let model = model.trim();
    if model.is_empty() || model.len() > 200 {
        return Err(Error::invalid(Code::InvalidModel, "the model needs a name of 1 to 200 characters"));
    }
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
    let stored = sqlx::query_as::<_, ModelScore>(
        "INSERT INTO model_scores (id, campaign_id, model, answers, result, created_by) VALUES ($1, $2, $3, $4, $5, $6)
         ON CONFLICT (campaign_id, model) DO UPDATE SET answers = EXCLUDED.answers, result = EXCLUDED.result,
             created_by = EXCLUDED.created_by, created_at = now()
         RETURNING model, result, created_at",
    )
    .bind(Uuid::new_v4())
    .bind(campaign_id)
    .bind(model)
    .bind(serde_json::to_value(answers).map_err(|e| Error::internal("storing the model's answers", e))?)
    .bind(&result)
    .bind(by)
    .fetch_one(pool)
    .await?;
    Ok(stored)
}

/// All scored models of a campaign, by name.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<ModelScore>> {
    Ok(sqlx::query_as::<_, ModelScore>(
        "SELECT model, result, created_at FROM model_scores WHERE campaign_id = $1 ORDER BY model",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?)
}
