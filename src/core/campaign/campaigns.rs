//! Campaigns: a kind, a configuration and a state.

use crate::core::campaign::settings::CoreSettings;
use crate::core::campaign::states::CampaignState;
use crate::core::kind::contract::TaskKind;
use crate::core::Registry;
use crate::error::Code;
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// A campaign as stored.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct Campaign {
    /// Campaign id.
    pub id: Uuid,
    /// Task kind (a registered kind's name).
    pub kind: String,
    /// Display name.
    pub name: String,
    /// Draft, open or closed.
    pub state: CampaignState,
    /// The kind's configuration (validated, defaults filled in).
    pub config: Value,
    /// The core's settings.
    #[sqlx(flatten)]
    pub settings: CoreSettings,
    /// Code shown to crowd workers when they finish.
    #[serde(skip)]
    pub completion_code: String,
    /// Where a crowd worker is sent when they finish (the platform's
    /// completion address), if set.
    #[serde(skip)]
    pub completion_url: Option<String>,
    /// Creation time.
    pub created_at: DateTime<Utc>,
    /// When it was archived (read-only, hidden from the default list).
    pub archived_at: Option<DateTime<Utc>>,
    /// Bumped by every change to the row (a trigger, 0037): what a copy a
    /// service keeps is checked against.
    #[serde(skip)]
    pub version: i64,
}

/// Minutes a new campaign's assignments are leased unless the kind says otherwise.
pub const DEFAULT_LEASE_MINUTES: i32 = 60;

/// Splits a posted configuration into the kind's part and the core's
/// settings found in it (older clients sent `lease_minutes` and `review`
/// inside the configuration; both are the core's now).
fn split_legacy(config: &Value) -> (Value, serde_json::Map<String, Value>) {
    let mut kind_config = if config.is_null() { Value::Object(Default::default()) } else { config.clone() };
    let mut core = serde_json::Map::new();
    if let Some(obj) = kind_config.as_object_mut() {
        for key in ["lease_minutes", "review"] {
            if let Some(v) = obj.remove(key) {
                core.insert(key.to_owned(), v);
            }
        }
    }
    (kind_config, core)
}

/// The core's settings and the kind's configuration of a new or changed
/// campaign, both checked, defaults filled in.
fn validated(
    plugin: &dyn TaskKind,
    base: CoreSettings,
    config: &Value,
    settings: &serde_json::Map<String, Value>,
) -> Result<(CoreSettings, Value)> {
    let (kind_config, mut changes) = split_legacy(config);
    changes.extend(settings.iter().map(|(k, v)| (k.clone(), v.clone())));
    let settings = base.with_changes(&changes)?;
    if settings.overlap != crate::core::campaign::settings::Overlap::Fixed && !plugin.about().adaptive_overlap {
        return Err(Error::invalid(
            Code::InvalidSettings,
            format!("an adaptive overlap needs a decision rule, which `{}` has none of (fixed only)", plugin.name()),
        ));
    }
    Ok((settings, plugin.validate_config(&kind_config)?))
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
    /// What it is, what it means, its unit and the source of its default
    /// (when the kind says).
    pub help: Option<crate::core::campaign::setting_help::SettingHelp>,
}

/// A campaign's kind settings with their defaults and meanings, for the form.
pub fn settings(kinds: &Registry, campaign: &Campaign) -> Result<Vec<Setting>> {
    settings_of(kinds, &campaign.kind, &campaign.config)
}

/// The kind settings of a kind with these values (a new campaign: its defaults).
pub fn settings_of(kinds: &Registry, kind: &str, config: &Value) -> Result<Vec<Setting>> {
    let plugin = kinds.get(kind)?;
    let defaults = plugin.validate_config(&serde_json::json!({}))?;
    let config = if config.is_object() { config } else { &defaults };
    let mut keys: std::collections::BTreeSet<String> =
        defaults.as_object().into_iter().flatten().map(|(k, _)| k.clone()).collect();
    keys.extend(config.as_object().into_iter().flatten().map(|(k, _)| k.clone()));
    let help = |key: &str| plugin.about().settings_help.iter().find(|h| h.key == key).copied();
    Ok(keys
        .into_iter()
        .map(|key| Setting {
            value: config.get(&key).cloned().unwrap_or_else(|| defaults.get(&key).cloned().unwrap_or(Value::Null)),
            default: defaults.get(&key).cloned().unwrap_or(Value::Null),
            help: help(&key),
            key,
        })
        .collect())
}

/// Creates a campaign after the core has checked its settings and the kind
/// its configuration; settings not given take the kind's defaults.
pub async fn create(
    pool: &PgPool,
    kinds: &Registry,
    kind: &str,
    name: &str,
    config: &Value,
    settings: &serde_json::Map<String, Value>,
) -> Result<Campaign> {
    let plugin = kinds.get(kind)?;
    let name = name.trim();
    if name.is_empty() || name.len() > 200 {
        return Err(Error::invalid(Code::InvalidName, "name must be 1 to 200 characters"));
    }
    let (settings, config) = validated(plugin, plugin.about().default_settings, config, settings)?;
    let code = crate::random::completion_code();
    let campaign = sqlx::query_as::<_, Campaign>(
        "INSERT INTO campaigns (id, kind, name, config, completion_code, participants, lease_minutes, annotators_per_batch, review,
                                joins_per_address, first_answer_within, ground_truth_from, overlap)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13) RETURNING *",
    )
    .bind(Uuid::new_v4())
    .bind(plugin.name())
    .bind(name)
    .bind(&config)
    .bind(code)
    .bind(settings.participants)
    .bind(settings.lease_minutes)
    .bind(settings.annotators_per_batch.to_column())
    .bind(settings.review)
    .bind(settings.joins_per_address)
    .bind(settings.first_answer_within)
    .bind(settings.ground_truth_from.as_str())
    .bind(settings.overlap.to_json())
    .fetch_one(pool)
    .await?;
    Ok(campaign)
}

/// Loads a campaign.
pub async fn get<'e>(db: impl sqlx::PgExecutor<'e>, id: Uuid) -> Result<Campaign> {
    sqlx::query_as::<_, Campaign>("SELECT * FROM campaigns WHERE id = $1")
        .bind(id)
        .fetch_optional(db)
        .await?
        .ok_or(Error::NotFound("campaign"))
}

/// All campaigns, newest first.
pub async fn list(pool: &PgPool) -> Result<Vec<Campaign>> {
    Ok(sqlx::query_as::<_, Campaign>("SELECT * FROM campaigns ORDER BY created_at DESC").fetch_all(pool).await?)
}

/// Open expert campaigns, newest first (an expert's home page).
pub async fn open_for_experts(pool: &PgPool) -> Result<Vec<Campaign>> {
    Ok(sqlx::query_as::<_, Campaign>(
        "SELECT * FROM campaigns WHERE state = 'open' AND participants = 'experts' ORDER BY created_at DESC",
    )
    .fetch_all(pool)
    .await?)
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
            Code::CampaignArchived,
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
            Code::CampaignHasData,
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

/// Replaces a campaign's kind configuration, validated as at creation
/// (core settings found in it, as older clients send them, are applied too).
pub async fn set_kind_config(pool: &PgPool, kinds: &Registry, id: Uuid, kind_config: &Value) -> Result<Campaign> {
    update(pool, kinds, id, Some(kind_config), &Default::default()).await
}

/// Changes some of a campaign's core settings (a JSON object of the keys
/// to change); the rest stay.
pub async fn set_settings(
    pool: &PgPool,
    kinds: &Registry,
    id: Uuid,
    changes: &serde_json::Map<String, Value>,
) -> Result<Campaign> {
    update(pool, kinds, id, None, changes).await
}

/// Changes a campaign's kind configuration (when given) and some of its
/// core settings in one step, both checked as at creation.
pub async fn update(
    pool: &PgPool,
    kinds: &Registry,
    id: Uuid,
    kind_config: Option<&Value>,
    changes: &serde_json::Map<String, Value>,
) -> Result<Campaign> {
    let campaign = ensure_writable(pool, id).await?;
    let plugin = kinds.of(&campaign)?;
    let (settings, config) = validated(plugin, campaign.settings, kind_config.unwrap_or(&campaign.config), changes)?;
    let updated = sqlx::query_as::<_, Campaign>(
        "UPDATE campaigns SET config = $2, participants = $3, lease_minutes = $4, annotators_per_batch = $5, review = $6,
                joins_per_address = $7, first_answer_within = $8, ground_truth_from = $9, overlap = $10
         WHERE id = $1 RETURNING *",
    )
    .bind(id)
    .bind(&config)
    .bind(settings.participants)
    .bind(settings.lease_minutes)
    .bind(settings.annotators_per_batch.to_column())
    .bind(settings.review)
    .bind(settings.joins_per_address)
    .bind(settings.first_answer_within)
    .bind(settings.ground_truth_from.as_str())
    .bind(settings.overlap.to_json())
    .fetch_one(pool)
    .await?;
    // Whose work counts changed: the platform's exclusions follow.
    if updated.settings.ground_truth_from != campaign.settings.ground_truth_from {
        crate::core::crowd::marks::remark(pool, id).await?;
    }
    Ok(updated)
}

/// Moves a campaign to another state. Opening needs at least one batch.
pub async fn set_state(pool: &PgPool, id: Uuid, state: CampaignState) -> Result<Campaign> {
    let campaign = ensure_writable(pool, id).await?;
    if state == CampaignState::Open {
        let batches: i64 =
            sqlx::query_scalar("SELECT count(*) FROM batches WHERE campaign_id = $1").bind(id).fetch_one(pool).await?;
        if batches == 0 {
            return Err(Error::conflict(Code::NoBatches, "form batches before opening the campaign"));
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

/// Sets what a crowd worker gets on finishing: the code (e.g. the one
/// Prolific gives the study; 4 to 64 letters, digits, `-` or `_`) and the
/// platform's completion address (`http(s)://`, or none).
pub async fn set_completion(pool: &PgPool, id: Uuid, code: Option<&str>, url: Option<&str>) -> Result<Campaign> {
    let campaign = ensure_writable(pool, id).await?;
    let code = match code.map(str::trim) {
        None => campaign.completion_code.clone(),
        Some(c)
            if (4..=64).contains(&c.len())
                && c.chars().all(|ch| ch.is_ascii_alphanumeric() || ch == '-' || ch == '_') =>
        {
            c.to_owned()
        }
        Some(c) => {
            return Err(Error::invalid(
                Code::InvalidCompletionCode,
                format!("completion code `{c}`: 4 to 64 letters, digits, `-` or `_`"),
            ))
        }
    };
    let url = url.map(str::trim).filter(|u| !u.is_empty());
    if let Some(u) = url {
        // https only: the code in its query string would otherwise cross the network in the clear.
        let host = u.strip_prefix("https://").and_then(|rest| rest.split(['/', '?', '#']).next());
        if host.is_none_or(|h| h.is_empty() || h.contains(char::is_whitespace)) || u.len() > 2000 {
            return Err(Error::invalid(Code::InvalidCompletionUrl, "the completion address must start with https://"));
        }
    }
    Ok(sqlx::query_as::<_, Campaign>(
        "UPDATE campaigns SET completion_code = $2, completion_url = $3 WHERE id = $1 RETURNING *",
    )
    .bind(id)
    .bind(code)
    .bind(url)
    .fetch_one(pool)
    .await?)
}
