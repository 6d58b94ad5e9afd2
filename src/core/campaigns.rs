//! Campaigns: a kind, a configuration and a state.

use super::{Error, Result};
use crate::kinds;
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// A campaign as stored.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct Campaign {
    /// Campaign id.
    pub id: Uuid,
    /// Task kind (`vton`, `a100-lat`, ...).
    pub kind: String,
    /// Display name.
    pub name: String,
    /// `draft`, `open` or `closed`.
    pub state: String,
    /// Kind-specific configuration (validated, defaults filled in).
    pub config: Value,
    /// Code shown to crowd workers when they finish.
    #[serde(skip)]
    pub completion_code: String,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// When it was archived (read-only, hidden from the default list).
    pub archived_at: Option<DateTime<Utc>>,
}

impl Campaign {
    /// The configuration as the kind sees it: without the core's own keys.
    pub fn kind_config(&self) -> Value {
        let mut c = self.config.clone();
        if let Some(obj) = c.as_object_mut() {
            obj.remove("review");
        }
        c
    }
}

/// The states a campaign moves through.
pub const STATES: [&str; 3] = ["draft", "open", "closed"];

/// Minutes an assignment is leased before it returns to the pool.
pub fn lease_minutes(config: &Value) -> i64 {
    config.get("lease_minutes").and_then(Value::as_i64).filter(|m| *m > 0).unwrap_or(60)
}

/// Whether every completed assignment is reviewed by a different annotator.
pub fn review(config: &Value) -> bool {
    config.get("review").and_then(Value::as_bool).unwrap_or(false)
}

/// The whole configuration checked: the core's settings (`review`,
/// `lease_minutes`) by the core, the rest by the kind, defaults filled in.
fn validated(plugin: &dyn crate::core::kind::TaskKind, config: &Value) -> Result<Value> {
    // `review` is the core's setting, not the kind's: take it out before the
    // kind validates the rest, and put it back after.
    let mut config = config.clone();
    let review = match config.as_object_mut().and_then(|o| o.remove("review")) {
        None => false,
        Some(serde_json::Value::Bool(b)) => b,
        Some(_) => return Err(Error::invalid("invalid_config", "review must be true or false")),
    };
    let mut config = plugin.validate_config(&config)?;
    let lease = config.get("lease_minutes").cloned().unwrap_or(Value::from(60));
    if !lease.as_i64().is_some_and(|m| (1..=7 * 24 * 60).contains(&m)) {
        return Err(Error::invalid(
            "invalid_config",
            "lease_minutes must be a whole number of minutes from 1 to 10080",
        ));
    }
    if let Some(obj) = config.as_object_mut() {
        obj.insert("lease_minutes".into(), lease);
        if review {
            obj.insert("review".into(), Value::Bool(true));
        }
    }
    Ok(config)
}

/// One setting as the settings form shows it.
#[derive(Debug, Clone, PartialEq)]
pub struct Setting {
    /// Configuration key.
    pub key: String,
    /// Current value.
    pub value: Value,
    /// The value a new campaign gets.
    pub default: Value,
    /// What it means.
    pub help: &'static str,
}

/// A campaign's settings with their defaults and meanings, for the form.
pub fn settings(campaign: &Campaign) -> Result<Vec<Setting>> {
    settings_of(&campaign.kind, &campaign.config)
}

/// The settings of a kind with these values (a new campaign: its defaults).
pub fn settings_of(kind: &str, config: &Value) -> Result<Vec<Setting>> {
    let plugin = kinds::find(kind).ok_or_else(|| {
        Error::invalid("unknown_kind", format!("unknown kind `{kind}`; known kinds: {}", kinds::names().join(", ")))
    })?;
    let defaults = validated(plugin, &serde_json::json!({}))?;
    let config = if config.is_object() { config } else { &defaults };
    let mut keys: std::collections::BTreeSet<String> =
        defaults.as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
    keys.extend(config.as_object().into_iter().flatten().map(|(k, _)| k.clone()));
    keys.insert("review".into());
    let help = |key: &str| plugin.settings_help().iter().find(|(k, _)| *k == key).map_or("", |(_, h)| h);
    Ok(keys
        .into_iter()
        .map(|key| Setting {
            value: config
                .get(&key)
                .cloned()
                .unwrap_or_else(|| defaults.get(&key).cloned().unwrap_or(Value::Bool(false))),
            default: defaults.get(&key).cloned().unwrap_or(Value::Bool(false)),
            help: help(&key),
            key,
        })
        .collect())
}

/// Creates a campaign after the kind has validated its configuration.
pub async fn create(pool: &PgPool, kind: &str, name: &str, config: &Value) -> Result<Campaign> {
    let plugin = kinds::find(kind).ok_or_else(|| {
        Error::invalid("unknown_kind", format!("unknown kind `{kind}`; known kinds: {}", kinds::names().join(", ")))
    })?;
    let name = name.trim();
    if name.is_empty() || name.len() > 200 {
        return Err(Error::invalid("invalid_name", "name must be 1 to 200 characters"));
    }
    let config = validated(plugin, config)?;
    let code = crate::auth::tokens::random_code(10);
    let campaign = sqlx::query_as::<_, Campaign>(
        "INSERT INTO campaigns (id, kind, name, config, completion_code) VALUES ($1, $2, $3, $4, $5) RETURNING *",
    )
    .bind(Uuid::new_v4())
    .bind(plugin.name())
    .bind(name)
    .bind(&config)
    .bind(code)
    .fetch_one(pool)
    .await?;
    Ok(campaign)
}

/// Loads a campaign.
pub async fn get(pool: &PgPool, id: Uuid) -> Result<Campaign> {
    sqlx::query_as::<_, Campaign>("SELECT * FROM campaigns WHERE id = $1")
        .bind(id)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("campaign"))
}

/// All campaigns, newest first.
pub async fn list(pool: &PgPool) -> Result<Vec<Campaign>> {
    Ok(sqlx::query_as::<_, Campaign>("SELECT * FROM campaigns ORDER BY created_at DESC").fetch_all(pool).await?)
}

/// Campaigns without the archived ones (or only those), newest first.
pub async fn list_by_archive(pool: &PgPool, archived: bool) -> Result<Vec<Campaign>> {
    Ok(sqlx::query_as::<_, Campaign>(
        "SELECT * FROM campaigns WHERE (archived_at IS NOT NULL) = $1 ORDER BY created_at DESC",
    )
    .bind(archived)
    .fetch_all(pool)
    .await?)
}

/// Refuses changes to an archived campaign (exports still work).
pub async fn ensure_writable(pool: &PgPool, id: Uuid) -> Result<Campaign> {
    let c = get(pool, id).await?;
    if c.archived_at.is_some() {
        return Err(Error::conflict(
            "campaign_archived",
            "this campaign is archived and read-only; unarchive it first",
        ));
    }
    Ok(c)
}

/// Archives a campaign: closed, read-only, hidden from the default list.
pub async fn archive(pool: &PgPool, id: Uuid, archived: bool) -> Result<Campaign> {
    get(pool, id).await?;
    Ok(sqlx::query_as::<_, Campaign>(
        "UPDATE campaigns SET archived_at = CASE WHEN $2 THEN coalesce(archived_at, now()) END,
                              state = CASE WHEN $2 THEN 'closed' ELSE state END
         WHERE id = $1 RETURNING *",
    )
    .bind(id)
    .bind(archived)
    .fetch_one(pool)
    .await?)
}

/// Deletes a campaign that has no responses and no releases, with its
/// items, batches, invitations and empty assignments. Anything with
/// answers is archived instead, never deleted.
pub async fn delete(pool: &PgPool, id: Uuid) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE")
        .bind(id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound("campaign"))?;
    let (responses, releases): (i64, i64) = sqlx::query_as(
        "SELECT (SELECT count(*) FROM responses WHERE campaign_id = $1), (SELECT count(*) FROM releases WHERE campaign_id = $1)",
    )
    .bind(id)
    .fetch_one(&mut *tx)
    .await?;
    if responses > 0 || releases > 0 {
        return Err(Error::conflict(
            "campaign_has_data",
            "only campaigns without responses or releases can be deleted; archive this one instead",
        ));
    }
    for statement in [
        "DELETE FROM batch_items WHERE batch_id IN (SELECT id FROM batches WHERE campaign_id = $1)",
        "DELETE FROM assignments WHERE campaign_id = $1",
        "DELETE FROM batches WHERE campaign_id = $1",
        "DELETE FROM items WHERE campaign_id = $1",
        "DELETE FROM invitations WHERE campaign_id = $1",
        "DELETE FROM participant_profiles WHERE campaign_id = $1",
        "DELETE FROM annotator_blocks WHERE campaign_id = $1",
        "DELETE FROM model_scores WHERE campaign_id = $1",
        "DELETE FROM payouts WHERE campaign_id = $1",
        "DELETE FROM campaigns WHERE id = $1",
    ] {
        sqlx::query(statement).bind(id).execute(&mut *tx).await?;
    }
    tx.commit().await?;
    Ok(())
}

/// Replaces a campaign's configuration, validated as at creation; the core's
/// own settings (lease, review) stay as they were unless given.
pub async fn set_kind_config(pool: &PgPool, id: Uuid, kind_config: &Value) -> Result<Campaign> {
    let campaign = ensure_writable(pool, id).await?;
    let plugin =
        kinds::find(&campaign.kind).ok_or_else(|| Error::Internal(format!("unknown kind {}", campaign.kind)))?;
    // The core's settings stay as they were unless given.
    let mut config = kind_config.clone();
    if let (Some(new), Some(old)) = (config.as_object_mut(), campaign.config.as_object()) {
        for key in ["lease_minutes", "review"] {
            if let Some(v) = old.get(key) {
                new.entry(key).or_insert_with(|| v.clone());
            }
        }
    }
    let config = validated(plugin, &config)?;
    Ok(sqlx::query_as::<_, Campaign>("UPDATE campaigns SET config = $2 WHERE id = $1 RETURNING *")
        .bind(id)
        .bind(&config)
        .fetch_one(pool)
        .await?)
}

/// Moves a campaign to another state. Opening needs at least one batch.
pub async fn set_state(pool: &PgPool, id: Uuid, state: &str) -> Result<Campaign> {
    if !STATES.contains(&state) {
        return Err(Error::invalid("invalid_state", format!("state must be one of {}", STATES.join(", "))));
    }
    let campaign = ensure_writable(pool, id).await?;
    if state == "open" {
        let batches: i64 =
            sqlx::query_scalar("SELECT count(*) FROM batches WHERE campaign_id = $1").bind(id).fetch_one(pool).await?;
        if batches == 0 {
            return Err(Error::conflict("no_batches", "form batches before opening the campaign"));
        }
    }
    if campaign.state == state {
        return Ok(campaign);
    }
    Ok(sqlx::query_as::<_, Campaign>("UPDATE campaigns SET state = $2 WHERE id = $1 RETURNING *")
        .bind(id)
        .bind(state)
        .fetch_one(pool)
        .await?)
}
