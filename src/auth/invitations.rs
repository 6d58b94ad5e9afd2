//! Invitation links: how crowd workers reach a campaign without an account.

use super::users::{self, User};
use crate::core::Code;
use crate::core::{Error, Result};
use serde_json::Value;
use sqlx::PgPool;
use uuid::Uuid;

/// Places a link may have at most (a bound on the number, not a quota anyone
/// would reach).
pub const MAX_PLACES: i32 = 1_000_000;

/// The query parameter a link reads the worker's id from unless told otherwise.
pub const DEFAULT_ID_PARAM: &str = "worker_id";

/// What a new link says: how many it admits and where the worker's id is.
#[derive(Debug, Clone, Default)]
pub struct NewLink {
    /// Workers the link admits at most (none: no limit).
    pub places: Option<i32>,
    /// The query parameter carrying the worker's id (default `worker_id`).
    pub id_param: Option<String>,
}

/// A usable name for the id parameter: a letter, then letters, digits,
/// `_`, `.` or `-`, 64 at most (the database holds the same rule).
fn valid_id_param(name: &str) -> bool {
    let mut chars = name.chars();
    chars.next().is_some_and(|c| c.is_ascii_alphabetic())
        && name.len() <= 64
        && chars.all(|c| c.is_ascii_alphanumeric() || "_.-".contains(c))
}

/// Creates an invitation token for a crowd campaign (experts log in and find
/// their campaigns on their own page; a worker link to an expert campaign
/// would only lead workers to a refusal). With `places`, the link admits
/// that many workers (those who joined may always return).
pub async fn create(pool: &PgPool, campaign_id: Uuid, created_by: Uuid, link: &NewLink) -> Result<String> {
    let places = link.places;
    if places.is_some_and(|p| !(1..=MAX_PLACES).contains(&p)) {
        return Err(Error::invalid(Code::InvalidPlaces, format!("places must be 1 to {MAX_PLACES}, or left out")));
    }
    // Exactly as given (the page trims what an admin typed; the API's schema says the pattern).
    let id_param = link.id_param.as_deref().filter(|p| !p.is_empty()).unwrap_or(DEFAULT_ID_PARAM);
    if !valid_id_param(id_param) {
        return Err(Error::invalid(
            Code::InvalidIdParam,
            "the id parameter is a name such as worker_id or participant (a letter, then letters, digits, `_`, `.` \
             or `-`; 64 at most)",
        ));
    }
    let campaign = crate::core::campaigns::ensure_writable(pool, campaign_id).await?;
    if !campaign.settings.crowd() {
        return Err(Error::conflict(
            Code::NotACrowdCampaign,
            "this campaign is for experts, who log in and find it on their page; invitation links are for crowd \
             campaigns (set participants to crowd to invite workers)",
        ));
    }
    let token = crate::random::random_code(24);
    sqlx::query(
        "INSERT INTO invitations (token, campaign_id, created_by, places, id_param) VALUES ($1, $2, $3, $4, $5)",
    )
    .bind(&token)
    .bind(campaign_id)
    .bind(created_by)
    .bind(places)
    .bind(id_param)
    .execute(pool)
    .await?;
    Ok(token)
}

/// Lets the worker with this crowd-platform id in through the link: their
/// identity (created on their first visit) once the link has a place for
/// them. A worker who joined through the link before always gets back in;
/// a new one is refused when its places are taken, before any identity is
/// made for them.
pub async fn admit(pool: &PgPool, token: &str, external_id: &str, platform_ids: Option<&Value>) -> Result<User> {
    let external_id = &users::normalize_worker_id(external_id)?;
    let mut tx = pool.begin().await?;
    let places: Option<i32> =
        sqlx::query_scalar::<_, Option<i32>>("SELECT places FROM invitations WHERE token = $1 AND revoked_at IS NULL")
            .bind(token)
            .fetch_optional(&mut *tx)
            .await?
            .ok_or(Error::NotFound("invitation"))?;
    if let Some(places) = places {
        // The link's row locked, so that two workers never take its last
        // place; the joins are counted by the next statement, whose snapshot
        // (taken after the lock) sees every join committed before it.
        sqlx::query("SELECT 1 FROM invitations WHERE token = $1 FOR UPDATE").bind(token).execute(&mut *tx).await?;
        let (returning, joined): (bool, i64) = sqlx::query_as(
            "SELECT EXISTS (SELECT 1 FROM invitation_joins j JOIN users u ON u.id = j.worker_id
                            WHERE j.token = $1 AND u.external_id = $2),
                    (SELECT count(*) FROM invitation_joins j WHERE j.token = $1)",
        )
        .bind(token)
        .bind(external_id.trim())
        .fetch_one(&mut *tx)
        .await?;
        if !returning && joined >= i64::from(places) {
            return Err(Error::conflict(
                Code::InvitationFull,
                "this study is full: all its places are taken. Thank you for your interest. Please return your \
                 submission on your crowd platform (Prolific: “return submission”; MTurk: “return HIT”) so that you \
                 are not timed out",
            ));
        }
    }
    let worker = users::worker(&mut *tx, external_id).await?;
    // The platform's ids of this visit (the last one's are kept).
    sqlx::query(
        "INSERT INTO invitation_joins (token, worker_id, platform_ids) VALUES ($1, $2, $3)
         ON CONFLICT (token, worker_id) DO UPDATE
         SET platform_ids = coalesce(EXCLUDED.platform_ids, invitation_joins.platform_ids)",
    )
    .bind(token)
    .bind(worker.id)
    .bind(platform_ids)
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(worker)
}

/// The campaign a valid invitation leads to.
pub async fn resolve(pool: &PgPool, token: &str) -> Result<Uuid> {
    sqlx::query_scalar("SELECT campaign_id FROM invitations WHERE token = $1 AND revoked_at IS NULL")
        .bind(token)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("invitation"))
}

/// Whether the worker was invited to the campaign (joined through one of its links).
pub async fn tokens_of(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar(
        "SELECT token FROM invitations WHERE campaign_id = $1 AND revoked_at IS NULL ORDER BY created_at",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?)
}

/// An invitation link as listed.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct InvitationInfo {
    /// The token in the link.
    pub token: String,
    /// Created.
    pub created_at: chrono::DateTime<chrono::Utc>,
    /// When it was revoked (the link no longer admits anyone).
    pub revoked_at: Option<chrono::DateTime<chrono::Utc>>,
    /// Workers the link admits at most (none: no limit).
    pub places: Option<i32>,
    /// Workers who joined through it.
    pub joined: i64,
    /// The query parameter the link reads the worker's id from.
    pub id_param: String,
    /// When its workers' sessions were ended (nobody gets back in).
    pub sessions_ended_at: Option<chrono::DateTime<chrono::Utc>>,
}

/// Every invitation link of a campaign, revoked ones included.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<InvitationInfo>> {
    Ok(sqlx::query_as::<_, InvitationInfo>(
        "SELECT i.token, i.created_at, i.revoked_at, i.places, i.id_param, i.sessions_ended_at,
                (SELECT count(*) FROM invitation_joins j WHERE j.token = i.token) AS joined
         FROM invitations i WHERE i.campaign_id = $1 ORDER BY i.created_at",
    )
    .bind(campaign_id)
    .fetch_all(pool)
    .await?)
}

/// A link as a worker's visit meets it.
#[derive(Debug, Clone, sqlx::FromRow)]
pub struct Link {
    /// The campaign it leads to.
    pub campaign_id: Uuid,
    /// Whether it was revoked.
    pub revoked: bool,
    /// The query parameter it reads the worker's id from.
    pub id_param: String,
    /// Whether its workers' sessions were ended ([`revoke_and_end`]): nobody
    /// gets back in through it.
    pub sessions_ended: bool,
}

/// The link, revoked or not.
pub async fn lookup(pool: &PgPool, token: &str) -> Result<Link> {
    sqlx::query_as(
        "SELECT campaign_id, revoked_at IS NOT NULL AS revoked, id_param, sessions_ended_at IS NOT NULL AS sessions_ended
         FROM invitations WHERE token = $1",
    )
        .bind(token)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("invitation"))
}

/// The worker who joined through this link before, by their platform id
/// (normalised), if any: a revoked link still lets them back in.
pub async fn returning_worker(pool: &PgPool, token: &str, external_id: &str) -> Result<Option<User>> {
    let external_id = users::normalize_worker_id(external_id)?;
    Ok(sqlx::query_as::<_, User>(
        "SELECT u.id, u.role, u.name, u.external_id FROM invitation_joins j JOIN users u ON u.id = j.worker_id
         WHERE j.token = $1 AND u.external_id = $2",
    )
    .bind(token)
    .bind(&external_id)
    .fetch_optional(pool)
    .await?)
}

/// Whether a worker may start new questionnaires in a campaign: not when
/// every link they joined it through is revoked (a leaked link's bots stop
/// at once; a questionnaire they hold they may still finish).
pub async fn may_start_new(pool: &PgPool, campaign_id: Uuid, worker_id: Uuid) -> Result<bool> {
    let (joins, open): (i64, i64) = sqlx::query_as(
        "SELECT count(*), count(*) FILTER (WHERE i.revoked_at IS NULL)
         FROM invitation_joins j JOIN invitations i ON i.token = j.token
         WHERE i.campaign_id = $1 AND j.worker_id = $2",
    )
    .bind(campaign_id)
    .bind(worker_id)
    .fetch_one(pool)
    .await?;
    // Workers from before joins were recorded have none: as before.
    Ok(joins == 0 || open > 0)
}

/// Revokes a link: nobody new can join through it, at once, and those who
/// joined through it start no new questionnaire (see [`may_start_new`]).
pub async fn revoke(pool: &PgPool, campaign_id: Uuid, token: &str) -> Result<()> {
    close(pool, campaign_id, token, false).await
}

/// Marks the link revoked (and, with `end_sessions`, its sessions ended);
/// the first time of each is kept.
async fn close(pool: &PgPool, campaign_id: Uuid, token: &str, end_sessions: bool) -> Result<()> {
    let done = sqlx::query(
        "UPDATE invitations SET revoked_at = coalesce(revoked_at, now()),
                sessions_ended_at = CASE WHEN $3 THEN coalesce(sessions_ended_at, now()) ELSE sessions_ended_at END
         WHERE campaign_id = $1 AND token = $2",
    )
    .bind(campaign_id)
    .bind(token)
    .bind(end_sessions)
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("invitation"));
    }
    Ok(())
}

/// Revokes the link and ends its workers' sessions for good: nobody gets in
/// through it again, not even those who joined through it (a leaked link's
/// bots). Returns the workers who joined through it, whose sessions the
/// caller ends.
pub async fn revoke_and_end(pool: &PgPool, campaign_id: Uuid, token: &str) -> Result<Vec<Uuid>> {
    close(pool, campaign_id, token, true).await?;
    Ok(sqlx::query_scalar("SELECT worker_id FROM invitation_joins WHERE token = $1")
        .bind(token)
        .fetch_all(pool)
        .await?)
}

/// The crowd platform's ids kept with the worker's join to a campaign (the
/// last visit's, through any of its links), if any.
pub async fn platform_ids_of(pool: &PgPool, campaign_id: uuid::Uuid, worker_id: uuid::Uuid) -> Result<Option<Value>> {
    Ok(sqlx::query_scalar::<_, Option<Value>>(
        "SELECT j.platform_ids FROM invitation_joins j JOIN invitations i ON i.token = j.token
         WHERE i.campaign_id = $1 AND j.worker_id = $2 AND j.platform_ids IS NOT NULL
         ORDER BY i.created_at DESC LIMIT 1",
    )
    .bind(campaign_id)
    .bind(worker_id)
    .fetch_optional(pool)
    .await?
    .flatten())
}
