//! Loading pilot rounds from the database and exporting the selection.

use super::pilot::PilotAnswer;
use super::question::from_item;
use crate::error::{Error, Result};
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// The answers of the rounds (campaign ids in round order): submitted,
/// counted questionnaires only, attention checks left out. Members are known
/// by their worker id (experts by name).
pub async fn answers(pool: &PgPool, rounds: &[Uuid]) -> Result<Vec<PilotAnswer>> {
    let mut out = Vec::new();
    for (round, campaign) in rounds.iter().enumerate() {
        let rows = sqlx::query!(
            r#"SELECT coalesce(u.external_id, u.name, u.id::text) AS "member!", i.external_id AS question,
                      r.answer->>'choice' AS "choice!"
                 FROM responses r JOIN assignments a ON a.id = r.assignment_id
                 JOIN users u ON u.id = r.annotator_id JOIN items i ON i.id = r.item_id
                WHERE r.campaign_id = $1 AND a.state = 'completed' AND r.excluded_reason IS NULL
                  AND i.gold IS NULL AND r.answer ? 'choice'
                ORDER BY 1, 2"#,
            campaign
        )
        .fetch_all(pool)
        .await?;
        out.extend(rows.into_iter().map(|r| PilotAnswer {
            round,
            member: r.member,
            question: r.question,
            choice: r.choice,
        }));
    }
    Ok(out)
}

/// The selected questions, in the given order, as a question set to import
/// as the final LAT (taken from the first round's items).
pub async fn selection_set(pool: &PgPool, first_round: Uuid, selected: &[String]) -> Result<Value> {
    let items = crate::core::item::items::list(pool, first_round).await?;
    let mut questions = Vec::with_capacity(selected.len());
    for id in selected {
        let Some(item) = items.iter().find(|i| &i.external_id == id) else { continue };
        let mut q =
            from_item(&item.payload, item.gold.as_ref()).map_err(|e| Error::internal("a stored A100 question", e))?;
        q.answer = None;
        q.attention_check = false;
        questions.push(q);
    }
    Ok(json!({ "questions": questions }))
}
