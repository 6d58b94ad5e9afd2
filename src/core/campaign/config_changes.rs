//! Changing a campaign's kind configuration once answers exist: a change is
//! refused unless the admin confirms it, and every change is recorded
//! (before, after, who, how many answers it came after).

use crate::core::campaign::campaigns::{self, Campaign};
use crate::core::Registry;
use crate::db::Time;
use crate::error::Code;
use crate::error::{Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// One recorded change.
#[derive(Debug, Clone, serde::Serialize, sqlx::FromRow, utoipa::ToSchema)]
pub struct ConfigChange {
    /// When.
    pub changed_at: chrono::DateTime<chrono::Utc>,
    /// Who (an account; none for a change the service made on an admin's request).
    pub changed_by: Option<Uuid>,
    /// The configuration before.
    pub before: Value,
    /// And after.
    pub after: Value,
    /// Answers the campaign held when it changed.
    pub responses: i64,
}

/// RFC 7396 JSON merge patch: objects merge key by key, `null` removes a
/// key, anything else replaces.
pub fn merge_patch(target: &mut Value, patch: &Value) {
    let Value::Object(changes) = patch else {
        *target = patch.clone();
        return;
    };
    if !target.is_object() {
        *target = Value::Object(Default::default());
    }
    if let Value::Object(map) = target {
        for (k, v) in changes {
            if v.is_null() {
                map.remove(k);
            } else {
                merge_patch(map.entry(k.clone()).or_insert(Value::Null), v);
            }
        }
    }
}

/// The top-level keys whose values differ.
fn changed_keys(before: &Value, after: &Value) -> Vec<String> {
    let empty = serde_json::Map::new();
    let (b, a) = (before.as_object().unwrap_or(&empty), after.as_object().unwrap_or(&empty));
    let mut keys: Vec<String> = b.keys().chain(a.keys()).filter(|k| b.get(*k) != a.get(*k)).cloned().collect();
    keys.sort();
    keys.dedup();
    keys
}

/// Sets a campaign's kind configuration to `config` (validated as at
/// creation). With answers already given, a change is refused unless
/// `confirmed` (409 `confirm_change`, naming what would change); every
/// change is recorded.
pub async fn change(
    pool: &PgPool,
    kinds: &Registry,
    id: Uuid,
    config: &Value,
    by: Option<Uuid>,
    confirmed: bool,
) -> Result<Campaign> {
    let campaign = campaigns::get(pool, id).await?;
    let responses = answers(pool, id).await?;
    let keys = changed_keys(&campaign.config, config);
    if responses > 0 && !keys.is_empty() && !confirmed {
        return Err(Error::conflict(
            Code::ConfirmChange,
            format!(
                "the campaign already has {responses} answers; changing `{}` changes what annotators see or how the \
                 ground truth is computed: send the change again with confirm=true (it is recorded)",
                keys.join("`, `")
            ),
        ));
    }
    let updated = campaigns::set_kind_config(pool, kinds, id, config).await?;
    record(pool, &campaign, &updated, by, responses).await?;
    Ok(updated)
}

/// Answers a campaign holds.
pub async fn answers(pool: &PgPool, id: Uuid) -> Result<i64> {
    Ok(sqlx::query_scalar!(r#"SELECT count(*) AS "count!" FROM responses WHERE campaign_id = $1"#, id)
        .fetch_one(pool)
        .await?)
}

/// Records a change of configuration (nothing when nothing changed).
pub async fn record(
    pool: &PgPool,
    before: &Campaign,
    after: &Campaign,
    by: Option<Uuid>,
    responses: i64,
) -> Result<()> {
    if before.config == after.config {
        return Ok(());
    }
    sqlx::query!(
        "INSERT INTO campaign_changes (id, campaign_id, changed_by, before, after, responses) VALUES ($1, $2, $3, $4, $5, $6)",
        Uuid::new_v4(),
        before.id,
        by,
        before.config,
        after.config,
        responses,
    )
    .execute(pool)
    .await?;
    Ok(())
}

/// A campaign's recorded changes, oldest first.
pub async fn history(pool: &PgPool, id: Uuid) -> Result<Vec<ConfigChange>> {
    campaigns::get(pool, id).await?;
    Ok(sqlx::query_as!(
        ConfigChange,
        r#"SELECT changed_at AS "changed_at: Time", changed_by, before, after, responses FROM campaign_changes
           WHERE campaign_id = $1 ORDER BY changed_at, id"#,
        id,
    )
    .fetch_all(pool)
    .await?)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_merge_patch_changes_only_what_it_names() {
        let mut config = json!({"background": [1], "curation": {"min_alpha": 0.4, "preset": "paper"}, "k": 6});
        merge_patch(&mut config, &json!({"curation": {"min_alpha": 0.1}, "k": null}));
        assert_eq!(config, json!({"background": [1], "curation": {"min_alpha": 0.1, "preset": "paper"}}));
        assert_eq!(changed_keys(&json!({"a": 1, "b": 2}), &json!({"a": 1, "b": 3, "c": 4})), vec!["b", "c"]);
    }
}
