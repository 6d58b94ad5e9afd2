//! Invitation links: how crowd workers reach a campaign without an account.

use crate::auth::users::{self, User};
use crate::db::Time;
use crate::error::Code;
use crate::error::{Error, Result};
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
    let campaign = crate::core::campaign::campaigns::ensure_writable(pool, campaign_id).await?;
    if !campaign.settings.crowd() {
        return Err(Error::conflict(
            Code::NotACrowdCampaign,
            "this campaign is for experts, who log in and find it on their page; invitation links are for crowd \
             campaigns (set participants to crowd to invite workers)",
        ));
    }
    let token = crate::random::random_code(24);
    sqlx::query!(
        "INSERT INTO invitations (token, campaign_id, created_by, places, id_param) VALUES ($1, $2, $3, $4, $5)",
        token,
        campaign_id,
        created_by,
        places,
        id_param,
    )
    .execute(pool)
    .await?;
    Ok(token)
}

/// One visit through a study link: who says they are who, from where.
#[derive(Debug, Clone, Copy)]
pub struct Visit<'a> {
    /// The worker's id on their platform, as the link carried it.
    pub external_id: &'a str,
    /// The platform's other ids of this visit (`session_id`, `assignment_id`, ...).
    pub platform_ids: Option<&'a Value>,
    /// Whether the id came as Prolific's `PROLIFIC_PID`: it must then have
    /// Prolific's shape (24 hexadecimal characters).
    pub prolific: bool,
    /// A keyed hash of the client's address ([`address_hash`]), for the
    /// per-address limit on new worker ids.
    pub address_hash: Option<&'a str>,
    /// Whether this browser is already this worker's (a resume needs no
    /// platform session then).
    pub same_browser: bool,
}

/// The window [`CoreSettings::joins_per_address`](crate::core::campaign::settings::CoreSettings) counts joins in.
const JOIN_WINDOW_MINUTES: i32 = 10;

/// A Prolific participant id: 24 hexadecimal characters (Prolific's
/// documented shape; the ids are MongoDB object ids).
pub fn prolific_shaped(id: &str) -> bool {
    id.len() == 24 && id.bytes().all(|b| b.is_ascii_hexdigit())
}

/// The platform's unguessable ids of a visit that bind a worker's later
/// visits: Prolific's `session_id`, MTurk's `assignment_id` (not the
/// preview's placeholder).
fn session_secrets(platform_ids: Option<&Value>) -> Vec<String> {
    let Some(ids) = platform_ids else { return Vec::new() };
    ["session_id", "assignment_id"]
        .into_iter()
        .filter_map(|k| ids.get(k).and_then(Value::as_str))
        .filter(|v| !v.is_empty() && *v != "ASSIGNMENT_ID_NOT_AVAILABLE")
        .map(str::to_owned)
        .collect()
}

/// A hash of a client address, salted with the campaign: joins are
/// counted per address without the address being stored, and the same
/// address in two campaigns cannot be matched up.
pub fn address_hash(address: &str, campaign_id: Uuid) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(format!("atelier-join\0{campaign_id}\0{address}").as_bytes()))
}

/// Lets the worker with this crowd-platform id in through the link: their
/// identity (created on their first visit) once the link has a place for
/// them. A worker who joined through the link before always gets back in,
/// unless an admin ended their sessions in the campaign or the join carried
/// a platform session this visit does not; a new one is refused when its
/// places are taken or their address brought too many new ids lately,
/// before any identity is made for them.
pub async fn admit(pool: &PgPool, token: &str, visit: Visit<'_>) -> Result<User> {
    let external_id = &users::normalize_worker_id(visit.external_id)?;
    if visit.prolific && !prolific_shaped(external_id) {
        return Err(Error::invalid(
            Code::InvalidPlatformId,
            "this study link expects a Prolific participant id (24 letters a–f and digits), and the id it carried \
             is not one; please open the study from Prolific itself",
        ));
    }
    let mut tx = pool.begin().await?;
    let link = sqlx::query!(
        "SELECT i.places, i.campaign_id, c.joins_per_address FROM invitations i JOIN campaigns c ON c.id = i.campaign_id
         WHERE i.token = $1 AND i.revoked_at IS NULL",
        token,
    )
    .fetch_optional(&mut *tx)
    .await?
    .ok_or(Error::NotFound("invitation"))?;
    let (places, campaign_id, joins_per_address) = (link.places, link.campaign_id, link.joins_per_address);
    if places.is_some() {
        // The link's row locked, so that two workers never take its last
        // place; the joins are counted by the next statement, whose snapshot
        // (taken after the lock) sees every join committed before it.
        sqlx::query!("SELECT 1 AS locked FROM invitations WHERE token = $1 FOR UPDATE", token)
            .fetch_optional(&mut *tx)
            .await?;
    }
    // Whether they joined this link before, the campaign before, were ended
    // in the campaign; the secrets of their earlier joins; the link's joins.
    let known = sqlx::query!(
        r#"WITH me AS (SELECT id FROM users WHERE external_id = $2),
                mine AS (SELECT j.token, j.platform_ids FROM invitation_joins j JOIN invitations i ON i.token = j.token
                         WHERE i.campaign_id = $3 AND j.worker_id = (SELECT id FROM me))
           SELECT EXISTS (SELECT 1 FROM mine WHERE token = $1) AS "returning!",
                  EXISTS (SELECT 1 FROM mine) AS "in_campaign!",
                  EXISTS (SELECT 1 FROM campaign_ended_workers WHERE campaign_id = $3 AND worker_id = (SELECT id FROM me))
                    AS "ended!",
                  coalesce((SELECT array_agg(platform_ids) FROM mine WHERE platform_ids IS NOT NULL), '{}')
                    AS "earlier!: Vec<Value>",
                  (SELECT count(*) FROM invitation_joins j WHERE j.token = $1) AS "joined!""#,
        token,
        external_id,
        campaign_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let (returning, in_campaign, ended, earlier, joined) =
        (known.returning, known.in_campaign, known.ended, known.earlier, known.joined);
    if ended {
        return Err(Error::conflict(
            Code::InvitationEnded,
            "the study's team ended your participation in this study; please return the task on your crowd \
             platform (Prolific: “return submission”; MTurk: “return HIT”)",
        ));
    }
    let bound: Vec<String> = earlier.iter().flat_map(|ids| session_secrets(Some(ids))).collect();
    check_session(&bound, &visit)?;
    if !in_campaign && joins_per_address > 0 {
        if let Some(hash) = visit.address_hash {
            let recent = sqlx::query_scalar!(
                r#"SELECT count(*) AS "recent!" FROM invitation_joins j JOIN invitations i ON i.token = j.token
                   WHERE i.campaign_id = $1 AND j.address_hash = $2
                     AND j.joined_at > now() - make_interval(mins => $3)"#,
                campaign_id,
                hash,
                JOIN_WINDOW_MINUTES,
            )
            .fetch_one(&mut *tx)
            .await?;
            if recent >= i64::from(joins_per_address) {
                return Err(Error::Rejected {
                    code: Code::TooManyJoins,
                    message: format!(
                        "too many new worker ids joined this study from your network in the last \
                         {JOIN_WINDOW_MINUTES} minutes (at most {joins_per_address}); please try again later, \
                         or ask the study's team"
                    ),
                });
            }
        }
    }
    if let Some(places) = places {
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
    // The platform's ids of this visit, added to those kept (the first
    // visit's stay: a later one never unbinds the session it carried).
    sqlx::query!(
        "INSERT INTO invitation_joins (token, worker_id, platform_ids, address_hash) VALUES ($1, $2, $3, $4)
         ON CONFLICT (token, worker_id) DO UPDATE
         SET platform_ids = coalesce(EXCLUDED.platform_ids || invitation_joins.platform_ids, EXCLUDED.platform_ids,
                                     invitation_joins.platform_ids)",
        token,
        worker.id,
        visit.platform_ids,
        visit.address_hash,
    )
    .execute(&mut *tx)
    .await?;
    tx.commit().await?;
    Ok(worker)
}

/// The campaign a valid invitation leads to.
pub async fn resolve(pool: &PgPool, token: &str) -> Result<Uuid> {
    sqlx::query_scalar!("SELECT campaign_id FROM invitations WHERE token = $1 AND revoked_at IS NULL", token)
        .fetch_optional(pool)
        .await?
        .ok_or(Error::NotFound("invitation"))
}

/// Whether the worker was invited to the campaign (joined through one of its links).
pub async fn tokens_of(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<String>> {
    Ok(sqlx::query_scalar!(
        "SELECT token FROM invitations WHERE campaign_id = $1 AND revoked_at IS NULL ORDER BY created_at",
        campaign_id,
    )
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
    Ok(sqlx::query_as!(
        InvitationInfo,
        r#"SELECT i.token, i.created_at AS "created_at: Time", i.revoked_at AS "revoked_at: Time", i.places,
                  i.id_param, i.sessions_ended_at AS "sessions_ended_at: Time",
                  (SELECT count(*) FROM invitation_joins j WHERE j.token = i.token) AS "joined!"
           FROM invitations i WHERE i.campaign_id = $1 ORDER BY i.created_at"#,
        campaign_id,
    )
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
    sqlx::query_as!(
        Link,
        r#"SELECT campaign_id, revoked_at IS NOT NULL AS "revoked!", id_param,
                  sessions_ended_at IS NOT NULL AS "sessions_ended!"
           FROM invitations WHERE token = $1"#,
        token,
    )
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("invitation"))
}

/// The worker who joined through this link before, by their platform id
/// (normalised), if any: a revoked link still lets them back in, unless
/// their sessions were ended in the campaign or their join carried a
/// platform session this visit does not (see [`admit`]).
pub async fn returning_worker(pool: &PgPool, token: &str, visit: Visit<'_>) -> Result<Option<User>> {
    let external_id = users::normalize_worker_id(visit.external_id)?;
    let found = sqlx::query!(
        r#"SELECT u.id, j.platform_ids,
                  EXISTS (SELECT 1 FROM campaign_ended_workers e WHERE e.campaign_id = i.campaign_id AND e.worker_id = u.id)
                    AS "ended!"
           FROM invitation_joins j JOIN users u ON u.id = j.worker_id JOIN invitations i ON i.token = j.token
           WHERE j.token = $1 AND u.external_id = $2"#,
        token,
        external_id,
    )
    .fetch_optional(pool)
    .await?;
    let Some((id, platform_ids, ended)) = found.map(|f| (f.id, f.platform_ids, f.ended)) else { return Ok(None) };
    if ended {
        return Ok(None);
    }
    check_session(&session_secrets(platform_ids.as_ref()), &visit)?;
    users::get(pool, id).await
}

/// A worker whose join carried the platform's session comes back in
/// another browser only with that session: knowing their id is not
/// enough to be them.
fn check_session(bound: &[String], visit: &Visit<'_>) -> Result<()> {
    let carried = session_secrets(visit.platform_ids);
    if !visit.same_browser && !bound.is_empty() && !carried.iter().any(|c| bound.contains(c)) {
        return Err(Error::conflict(
            Code::PlatformSessionRequired,
            "this worker id is already taking part in this study from another browser; please open the study \
             again from your crowd platform (its link carries your session), in the browser you started in",
        ));
    }
    Ok(())
}

/// Whether a worker may start new questionnaires in a campaign: not when
/// every link they joined it through is revoked (a leaked link's bots stop
/// at once; a questionnaire they hold they may still finish).
pub async fn may_start_new(pool: &PgPool, campaign_id: Uuid, worker_id: Uuid) -> Result<bool> {
    let row = sqlx::query!(
        r#"SELECT count(*) AS "joins!", count(*) FILTER (WHERE i.revoked_at IS NULL) AS "open!",
                  EXISTS (SELECT 1 FROM campaign_ended_workers WHERE campaign_id = $1 AND worker_id = $2) AS "ended!"
           FROM invitation_joins j JOIN invitations i ON i.token = j.token
           WHERE i.campaign_id = $1 AND j.worker_id = $2"#,
        campaign_id,
        worker_id,
    )
    .fetch_one(pool)
    .await?;
    let (joins, open, ended) = (row.joins, row.open, row.ended);
    // Workers from before joins were recorded have none: as before.
    Ok(!ended && (joins == 0 || open > 0))
}

/// Revokes a link: nobody new can join through it, at once, and those who
/// joined through it start no new questionnaire (see [`may_start_new`]).
pub async fn revoke(pool: &PgPool, campaign_id: Uuid, token: &str) -> Result<()> {
    close(pool, campaign_id, token, false).await
}

/// Marks the link revoked (and, with `end_sessions`, its sessions ended);
/// the first time of each is kept.
async fn close(pool: &PgPool, campaign_id: Uuid, token: &str, end_sessions: bool) -> Result<()> {
    let done = sqlx::query!(
        "UPDATE invitations SET revoked_at = coalesce(revoked_at, now()),
                sessions_ended_at = CASE WHEN $3 THEN coalesce(sessions_ended_at, now()) ELSE sessions_ended_at END
         WHERE campaign_id = $1 AND token = $2",
        campaign_id,
        token,
        end_sessions,
    )
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
    // Ended in the campaign, whichever link they come back through, until
    // an admin lets one back in ([`readmit`]).
    Ok(sqlx::query_scalar!(
        "INSERT INTO campaign_ended_workers (campaign_id, worker_id)
         SELECT $1, worker_id FROM invitation_joins WHERE token = $2
         ON CONFLICT (campaign_id, worker_id) DO UPDATE SET ended_at = campaign_ended_workers.ended_at
         RETURNING worker_id",
        campaign_id,
        token,
    )
    .fetch_all(pool)
    .await?)
}

/// A worker whose sessions were ended in a campaign.
#[derive(Debug, Clone, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct EndedWorker {
    /// Their platform id.
    pub worker_id: String,
    /// When their sessions were ended.
    pub ended_at: chrono::DateTime<chrono::Utc>,
}

/// The workers kept out of a campaign (their sessions ended), newest first.
pub async fn ended_workers(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<EndedWorker>> {
    // Only workers are ended, and workers have an external id (a check).
    Ok(sqlx::query_as!(
        EndedWorker,
        r#"SELECT u.external_id AS "worker_id!", e.ended_at AS "ended_at: Time"
           FROM campaign_ended_workers e JOIN users u ON u.id = e.worker_id
           WHERE e.campaign_id = $1 ORDER BY e.ended_at DESC, u.external_id"#,
        campaign_id,
    )
    .fetch_all(pool)
    .await?)
}

/// Lets a worker whose sessions were ended back into the campaign (through
/// a link that is still open; the ended link stays closed).
pub async fn readmit(pool: &PgPool, campaign_id: Uuid, worker_id: &str) -> Result<()> {
    // An id no worker can have names no ended worker either.
    let external_id = users::normalize_worker_id(worker_id).map_err(|_| Error::NotFound("ended worker"))?;
    let done = sqlx::query!(
        "DELETE FROM campaign_ended_workers e USING users u
         WHERE e.campaign_id = $1 AND u.id = e.worker_id AND u.external_id = $2",
        campaign_id,
        external_id,
    )
    .execute(pool)
    .await?;
    if done.rows_affected() == 0 {
        return Err(Error::NotFound("ended worker"));
    }
    Ok(())
}

/// The crowd platform's ids kept with the worker's join to a campaign (the
/// last visit's, through any of its links), if any.
pub async fn platform_ids_of(pool: &PgPool, campaign_id: uuid::Uuid, worker_id: uuid::Uuid) -> Result<Option<Value>> {
    Ok(sqlx::query_scalar!(
        "SELECT j.platform_ids FROM invitation_joins j JOIN invitations i ON i.token = j.token
         WHERE i.campaign_id = $1 AND j.worker_id = $2 AND j.platform_ids IS NOT NULL
         ORDER BY i.created_at DESC LIMIT 1",
        campaign_id,
        worker_id,
    )
    .fetch_optional(pool)
    .await?
    .flatten())
}
