//! Participants' background answers (e.g. fashion background, age band),
//! asked once per campaign before the first task.

use crate::error::Code;
use crate::error::{Error, Result};
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
/// A question left out is `background_required`; an answer that is not one
/// of its options, `invalid_background` (both name the question).
pub fn validate(questions: &[BackgroundQuestion], submitted: &[(String, String)]) -> Result<Value> {
    let mut answers = Map::new();
    for q in questions {
        let given = submitted.iter().find(|(k, _)| *k == format!("bg_{}", q.id)).map(|(_, v)| v.as_str());
        match given {
            Some(v) if q.options.iter().any(|o| o == v) => {
                answers.insert(q.id.clone(), Value::from(v));
            }
            Some(v) if !v.is_empty() => {
                return Err(Error::invalid(
                    Code::InvalidBackground,
                    format!("`{v}` is not an answer to \"{}\"; choose one of: {}", q.question, q.options.join(", ")),
                ))
            }
            // The id and options too: an API client has no form to read them from.
            _ => {
                return Err(Error::invalid(
                    Code::BackgroundRequired,
                    format!("please answer: {} (question `{}`, one of: {})", q.question, q.id, q.options.join(", ")),
                ))
            }
        }
    }
    Ok(Value::Object(answers))
}

/// Stores a participant's answers (first answers win; a retry changes nothing).
pub async fn save(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid, answers: &Value) -> Result<()> {
    sqlx::query!(
        "INSERT INTO participant_profiles (campaign_id, annotator_id, answers) VALUES ($1, $2, $3)
         ON CONFLICT (campaign_id, annotator_id) DO NOTHING",
        campaign_id,
        annotator_id,
        answers,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// Whether the participant already answered the background questions.
pub async fn exists(pool: &PgPool, campaign_id: Uuid, annotator_id: Uuid) -> Result<bool> {
    Ok(sqlx::query_scalar!(
        "SELECT 1 AS answered FROM participant_profiles WHERE campaign_id = $1 AND annotator_id = $2",
        campaign_id,
        annotator_id,
    )
    .fetch_optional(pool)
    .await?
    .is_some())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn gender() -> Vec<BackgroundQuestion> {
        vec![BackgroundQuestion {
            id: "gender".into(),
            question: "Your gender?".into(),
            options: vec!["female".into(), "male".into()],
        }]
    }

    fn code(result: Result<Value>) -> String {
        match result {
            Err(Error::Rejected { code, .. }) => code.to_string(),
            other => panic!("not refused as invalid: {other:?}"),
        }
    }

    #[test]
    fn a_missing_answer_and_an_answer_not_offered_are_told_apart() {
        assert_eq!(code(validate(&gender(), &[])), "background_required");
        let Err(Error::Rejected { message, .. }) = validate(&gender(), &[]) else { panic!("refused") };
        assert!(
            message.contains("`gender`") && message.contains("male"),
            "names the question and its options: {message}"
        );
        assert_eq!(code(validate(&gender(), &[("bg_gender".into(), String::new())])), "background_required");
        assert_eq!(code(validate(&gender(), &[("bg_gender".into(), "x".into())])), "invalid_background");
        let stored = validate(&gender(), &[("bg_gender".into(), "male".into())]).expect("valid");
        assert_eq!(stored, serde_json::json!({"gender": "male"}));
    }
}
