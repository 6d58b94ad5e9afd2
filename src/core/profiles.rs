//! Participants' background answers (e.g. fashion background, age band),
//! asked once per campaign before the first task.

use super::{Error, Result};
use serde_json::{Map, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// A background question configured on a campaign.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct BackgroundQuestion {
    /// Key under which the answer is stored.
    pub id: String,
    /// The question as shown.
    pub question: String,
    /// The allowed answers.
    pub options: Vec<String>,
}

/// Checks submitted answers against the questions; returns what to store.
pub fn validate(questions: &[BackgroundQuestion], submitted: &[(String, String)]) -> Result<Value> {
    let mut answers = Map::new();
    for q in questions {
        let given = submitted.iter().find(|(k, _)| *k == format!("bg_{}", q.id)).map(|(_, v)| v.as_str());
        match given {
            Some(v) if q.options.iter().any(|o| o == v) => {
                answers.insert(q.id.clone(), Value::from(v));
            }
            _ => return Err(Error::invalid("background_required", format!("please answer: {}", q.question))),
        }
    }
    Ok(Value::Object(answers))
}

/// Stores a participant's answers (first answers win; a retry changes nothing).
pub async fn save(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid, answers: &Value) -> Result<()> {
    sqlx::query(
        "INSERT INTO participant_profiles (campaign_id, annotator_id, answers) VALUES ($1, $2, $3)
         ON CONFLICT (campaign_id, annotator_id) DO NOTHING",
    )
    .bind(campaign_id)
    .bind(annotator_id)
    .bind(answers)
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether the participant already answered the background questions.
pub async fn exists(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar::<_, i32>("SELECT 1 FROM participant_profiles WHERE campaign_id = $1 AND annotator_id = $2")
        .bind(campaign_id)
        .bind(annotator_id)
        .fetch_optional(pool)
        .await?
        .is_some())
}
