//! Models scored against a campaign's ground truth: each model's answers as
//! submitted and the kind's result, one row per model name (a rescore
//! replaces it). Kinds score; this module owns the table.

use crate::db::Time;
use crate::error::{Code, Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// The longest model name, in bytes.
pub const MAX_NAME_BYTES: usize = 200;

/// A stored model score.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct ModelScore {
    /// Model name.
    pub model: String,
    /// The kind's scoring output.
    pub result: Value,
    /// When it was scored.
    pub created_at: chrono::DateTime<chrono::Utc>,
}

/// A model's name, trimmed: 1 to [`MAX_NAME_BYTES`] bytes.
pub fn model_name(model: &str) -> Result<&str> {
    let model = model.trim();
    if model.is_empty() || model.len() > MAX_NAME_BYTES {
        return Err(Error::invalid(Code::InvalidModel, "the model needs a name of 1 to 200 characters"));
    }
    Ok(model)
}

/// Stores a model's `answers` and the kind's `result` under its name,
/// replacing an earlier score of the same name; the row as stored.
#[tracing::instrument(level = "debug", skip(pool, answers, result))]
pub async fn store(
    pool: &PgPool,
    campaign_id: Uuid,
    by: Uuid,
    model: &str,
    answers: &Value,
    result: &Value,
) -> Result<ModelScore> {
    let model = model_name(model)?;
    Ok(sqlx::query_as!(
        ModelScore,
        r#"INSERT INTO model_scores (id, campaign_id, model, answers, result, created_by) VALUES ($1, $2, $3, $4, $5, $6)
           ON CONFLICT (campaign_id, model) DO UPDATE SET answers = EXCLUDED.answers, result = EXCLUDED.result,
               created_by = EXCLUDED.created_by, created_at = now()
           RETURNING model, result, created_at AS "created_at: Time""#,
        Uuid::new_v4(),
        campaign_id,
        model,
        answers,
        result,
        by,
    )
    .fetch_one(pool)
    .await?)
}

/// Every scored model of a campaign, by name.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<ModelScore>> {
    Ok(sqlx::query_as!(
        ModelScore,
        r#"SELECT model, result, created_at AS "created_at: Time" FROM model_scores WHERE campaign_id = $1 ORDER BY model"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?)
}

/// Every scored model's answers as submitted, by name (what releases keep
/// and scoring reports re-read).
pub async fn answers<'e>(db: impl sqlx::PgExecutor<'e>, campaign_id: Uuid) -> Result<Vec<(String, Value)>> {
    Ok(sqlx::query!("SELECT model, answers FROM model_scores WHERE campaign_id = $1 ORDER BY model", campaign_id)
        .fetch_all(db)
        .await?
        .into_iter()
        .map(|r| (r.model, r.answers))
        .collect())
}
