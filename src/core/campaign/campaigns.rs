//! Campaigns: a kind, a configuration and a state.

use crate::core::campaign::settings::{CoreSettings, Participants};
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
#[derive(Debug, Clone, serde::Serialize, utoipa::ToSchema)]
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

/// A `campaigns` row as the checked statements read it, the settings'
/// columns flat (each field is its column); [`CampaignRow::read`] makes
/// the [`Campaign`].
pub(in crate::core) struct CampaignRow {
    pub id: Uuid,
    pub kind: String,
    pub name: String,
    pub state: CampaignState,
    pub config: Value,
    pub participants: Participants,
    pub lease_minutes: i32,
    pub annotators_per_batch: Option<i32>,
    pub review: bool,
    pub joins_per_address: i32,
    pub first_answer_within: i32,
    pub ground_truth_from: String,
    pub overlap: Value,
    pub completion_code: String,
    pub completion_url: Option<String>,
    pub created_at: DateTime<Utc>,
    pub archived_at: Option<DateTime<Utc>>,
    pub version: i64,
}

impl CampaignRow {
    /// The campaign; a stored setting that no longer reads is a decode
    /// error naming it (the schema's checks make that a bug).
    pub fn read(self) -> std::result::Result<Campaign, sqlx::Error> {
        let decode = |e: String| sqlx::Error::Decode(e.into());
        Ok(Campaign {
            settings: CoreSettings {
                participants: self.participants,
                lease_minutes: self.lease_minutes,
                annotators_per_batch: self.annotators_per_batch.into(),
                review: self.review,
                joins_per_address: self.joins_per_address,
                first_answer_within: self.first_answer_within,
                ground_truth_from: self.ground_truth_from.try_into().map_err(decode)?,
                overlap: self.overlap.try_into().map_err(decode)?,
            },
            id: self.id,
            kind: self.kind,
            name: self.name,
            state: self.state,
            config: self.config,
            completion_code: self.completion_code,
            completion_url: self.completion_url,
            created_at: self.created_at,
            archived_at: self.archived_at,
            version: self.version,
        })
    }
}

/// `SELECT` of every [`CampaignRow`] column `FROM campaigns`, then the
/// statement's tail: checked against the schema when compiled.
macro_rules! select_campaigns {
    ($tail:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            CampaignRow,
            r#"SELECT id, kind, name, state AS "state: CampaignState", config,
                      participants AS "participants: Participants", lease_minutes, annotators_per_batch, review,
                      joins_per_address, first_answer_within, ground_truth_from, overlap, completion_code,
                      completion_url, created_at AS "created_at: crate::db::Time",
                      archived_at AS "archived_at: crate::db::Time", version
                 FROM campaigns "# + $tail
            $(, $arg)*
        )
    };
}

/// A statement that writes one campaign and returns its [`CampaignRow`],
/// checked against the schema when compiled.
macro_rules! returning_campaign {
    ($head:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            CampaignRow,
            $head + r#" RETURNING id, kind, name, state AS "state: CampaignState", config,
                      participants AS "participants: Participants", lease_minutes, annotators_per_batch, review,
                      joins_per_address, first_answer_within, ground_truth_from, overlap, completion_code,
                      completion_url, created_at AS "created_at: crate::db::Time",
                      archived_at AS "archived_at: crate::db::Time", version"#
            $(, $arg)*
        )
    };
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
    let campaign = returning_campaign!(
        "INSERT INTO campaigns (id, kind, name, config, completion_code, participants, lease_minutes, annotators_per_batch, review,
                                joins_per_address, first_answer_within, ground_truth_from, overlap)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)",
        Uuid::new_v4(),
        plugin.name(),
        name,
        &config,
        code,
        settings.participants as Participants,
        settings.lease_minutes,
        settings.annotators_per_batch.to_column(),
        settings.review,
        settings.joins_per_address,
        settings.first_answer_within,
        settings.ground_truth_from.as_str(),
        settings.overlap.to_json(),
    )
    .fetch_one(pool)
    .await?
    .read()?;
    Ok(campaign)
}

/// Loads a campaign.
pub async fn get<'e>(db: impl sqlx::PgExecutor<'e>, id: Uuid) -> Result<Campaign> {
    Ok(select_campaigns!("WHERE id = $1", id).fetch_optional(db).await?.ok_or(Error::NotFound("campaign"))?.read()?)
}

/// All campaigns, newest first.
pub async fn list(pool: &PgPool) -> Result<Vec<Campaign>> {
    read_all(select_campaigns!("ORDER BY created_at DESC").fetch_all(pool).await?)
}

/// Open expert campaigns, newest first (an expert's home page).
pub async fn open_for_experts(pool: &PgPool) -> Result<Vec<Campaign>> {
    read_all(
        select_campaigns!("WHERE state = 'open' AND participants = 'experts' ORDER BY created_at DESC")
            .fetch_all(pool)
            .await?,
    )
}

/// Campaigns without the archived ones (or only those), newest first.
pub async fn list_by_archive(pool: &PgPool, archived: bool) -> Result<Vec<Campaign>> {
    read_all(
        select_campaigns!("WHERE (archived_at IS NOT NULL) = $1 ORDER BY created_at DESC", archived)
            .fetch_all(pool)
            .await?,
    )
}

/// Campaigns from their rows.
fn read_all(rows: Vec<CampaignRow>) -> Result<Vec<Campaign>> {
    Ok(rows.into_iter().map(CampaignRow::read).collect::<std::result::Result<_, _>>()?)
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
    Ok(returning_campaign!(
        "UPDATE campaigns SET archived_at = CASE WHEN $2 THEN coalesce(archived_at, now()) END,
                              state = CASE WHEN $2 THEN 'closed' ELSE state END
         WHERE id = $1",
        id,
        archived,
    )
    .fetch_one(pool)
    .await?
    .read()?)
}

/// Deletes a campaign that has no responses and no releases, with its
/// items, batches, invitations and empty assignments. Anything with
/// answers is archived instead, never deleted.
pub async fn delete(pool: &PgPool, id: Uuid) -> Result<()> {
    let mut tx = pool.begin().await?;
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", id)
        .fetch_optional(&mut *tx)
        .await?
        .ok_or(Error::NotFound("campaign"))?;
    let held = sqlx::query!(
        r#"SELECT EXISTS (SELECT FROM responses WHERE campaign_id = $1) AS "responses!",
                  EXISTS (SELECT FROM releases WHERE campaign_id = $1) AS "releases!""#,
        id
    )
    .fetch_one(&mut *tx)
    .await?;
    if held.responses || held.releases {
        return Err(Error::conflict(
            Code::CampaignHasData,
            "only campaigns without responses or releases can be deleted; archive this one instead",
        ));
    }
    sqlx::query!("DELETE FROM batch_items WHERE batch_id IN (SELECT id FROM batches WHERE campaign_id = $1)", id)
        .execute(&mut *tx)
        .await?;
    sqlx::query!("DELETE FROM assignments WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM batches WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM items WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM invitations WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM participant_profiles WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM annotator_blocks WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM model_scores WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM payouts WHERE campaign_id = $1", id).execute(&mut *tx).await?;
    sqlx::query!("DELETE FROM campaigns WHERE id = $1", id).execute(&mut *tx).await?;
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
    let updated = returning_campaign!(
        "UPDATE campaigns SET config = $2, participants = $3, lease_minutes = $4, annotators_per_batch = $5, review = $6,
                joins_per_address = $7, first_answer_within = $8, ground_truth_from = $9, overlap = $10
         WHERE id = $1",
        id,
        &config,
        settings.participants as Participants,
        settings.lease_minutes,
        settings.annotators_per_batch.to_column(),
        settings.review,
        settings.joins_per_address,
        settings.first_answer_within,
        settings.ground_truth_from.as_str(),
        settings.overlap.to_json(),
    )
    .fetch_one(pool)
    .await?
    .read()?;
    // Whose work counts changed: the platform's exclusions follow.
    if updated.settings.ground_truth_from != campaign.settings.ground_truth_from {
        crate::core::campaign::marks::remark(pool, id).await?;
    }
    Ok(updated)
}

/// Moves a campaign to another state. Opening needs at least one batch.
pub async fn set_state(pool: &PgPool, id: Uuid, state: CampaignState) -> Result<Campaign> {
    let campaign = ensure_writable(pool, id).await?;
    if state == CampaignState::Open {
        let batched =
            sqlx::query_scalar!(r#"SELECT EXISTS (SELECT FROM batches WHERE campaign_id = $1) AS "batched!""#, id)
                .fetch_one(pool)
                .await?;
        if !batched {
            return Err(Error::conflict(Code::NoBatches, "form batches before opening the campaign"));
        }
    }
    if campaign.state == state {
        return Ok(campaign);
    }
    Ok(returning_campaign!("UPDATE campaigns SET state = $2 WHERE id = $1", id, state as CampaignState)
        .fetch_one(pool)
        .await?
        .read()?)
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
    Ok(returning_campaign!(
        "UPDATE campaigns SET completion_code = $2, completion_url = $3 WHERE id = $1",
        id,
        code,
        url
    )
    .fetch_one(pool)
    .await?
    .read()?)
}
