//! Ground-truth releases: immutable, numbered snapshots of a campaign with
//! the kind's ground-truth files, the raw responses (pseudonymous), a
//! manifest and a datasheet, stored by the service as one `.tar.gz`.
//!
//! Releases are only ever inserted: a trigger refuses updates and deletes
//! (an archive may only move between the database and the object store,
//! byte for byte). A folder store keeps archives in PostgreSQL as before; a
//! bucket store takes them, written whole before their row is committed.

pub mod archive;
pub mod datasheet;
pub mod diff;
pub mod format;
mod gather;
pub mod hf;
pub mod lanes;
pub mod packing;
pub mod responses_rows;
pub mod snapshot;
pub mod verify;

pub use snapshot::Snapshot;

use crate::core::campaign::campaigns;
use crate::error::Code;
use crate::error::{Error, Result};
use archive::ReleaseInfo;
use chrono::{DateTime, SecondsFormat, Utc};
use serde_json::{json, Value};
use sqlx::PgPool;
use uuid::Uuid;

/// A release as listed.
#[derive(Debug, Clone, PartialEq, sqlx::FromRow, serde::Serialize, utoipa::ToSchema)]
pub struct ReleaseSummary {
    /// Release number (1, 2, ...).
    pub number: i32,
    /// The admin's note.
    pub note: String,
    /// When it was cut.
    pub created_at: DateTime<Utc>,
    /// The campaign's state at the time (`open`: answers may still come in).
    pub campaign_state: String,
    /// Size of the archive in bytes.
    pub size: i64,
    /// The manifest's counts.
    pub counts: Value,
}

/// Who cuts a release: an account, or a name given on the command line.
#[derive(Debug, Clone)]
pub enum Author {
    /// A logged-in admin (or token).
    User(Uuid),
    /// A command-line user, by name.
    Named(String),
}

/// A statement that writes a release and returns its [`ReleaseSummary`]
/// (the size wherever the archive is), checked when compiled; `list`
/// reads the same columns.
macro_rules! returning_summary {
    ($head:literal $(, $arg:expr)* $(,)?) => {
        sqlx::query_as!(
            ReleaseSummary,
            $head + r#" RETURNING number, note, created_at AS "created_at: crate::db::Time", campaign_state,
                      coalesce(octet_length(archive)::bigint, archive_size) AS "size!", manifest->'counts' AS "counts!""#
            $(, $arg)*
        )
    };
}

/// Cuts the next release of a campaign: snapshot, derived files, manifest,
/// archive, stored in one transaction that numbers it.
#[tracing::instrument(level = "debug", skip(pool, storage, kinds, by, note, license))]
pub async fn create(
    pool: &PgPool,
    storage: &crate::storage::Storage,
    kinds: &crate::core::Registry,
    campaign_id: Uuid,
    by: &Author,
    note: &str,
    license: Option<&str>,
) -> Result<ReleaseSummary> {
    let note = note.trim();
    if note.len() > 2000 {
        return Err(Error::invalid(Code::InvalidNote, "the note is limited to 2,000 characters"));
    }
    let license = license.map(str::trim).filter(|l| !l.is_empty());
    if license.is_some_and(|l| l.len() > 64 || !l.chars().all(|c| c.is_ascii_alphanumeric() || "-.+".contains(c))) {
        return Err(Error::invalid(
            Code::InvalidLicense,
            "the licence is an identifier such as cc-by-4.0, mit or other (letters, digits, `-`, `.`, `+`; 64 at most)",
        ));
    }
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds.of(&campaign)?;
    let (by, author) = match by {
        Author::User(id) => {
            let name: String = sqlx::query_scalar!(
                r#"SELECT coalesce(name, external_id, id::text) AS "name!" FROM users WHERE id = $1"#,
                id
            )
            .fetch_one(pool)
            .await?;
            (Some(*id), name)
        }
        Author::Named(name) => (None, name.clone()),
    };
    // A connection of its own, closed after the archive is stored: sent
    // through it, the archive's tens of MB stay in its buffers, and a pooled
    // connection would keep them after each cut.
    let mut conn = pool.acquire().await?;
    let mut tx = sqlx::Connection::begin(&mut *conn).await?;
    // Numbers are handed out under the campaign's lock: v1, v2, ... without gaps.
    sqlx::query_scalar!("SELECT id FROM campaigns WHERE id = $1 FOR UPDATE", campaign_id)
        .fetch_optional(&mut *tx)
        .await?;
    let number = sqlx::query_scalar!(
        r#"SELECT coalesce(max(number), 0) + 1 AS "number!" FROM releases WHERE campaign_id = $1"#,
        campaign_id,
    )
    .fetch_one(&mut *tx)
    .await?;
    let snapshot = Snapshot::load(pool, campaign_id, true).await?;
    let now = Utc::now();
    let info = ReleaseInfo {
        release: number,
        note: note.to_owned(),
        created_at: now.to_rfc3339_opts(SecondsFormat::Secs, true),
        created_by: author,
        atelier: json!({"version": env!("CARGO_PKG_VERSION"), "commit": env!("ATELIER_COMMIT")}),
        license: license.map(str::to_ascii_lowercase),
    };
    // On the heavy-work thread, one big computation at a time: a cut at
    // crowd scale takes a few hundred MB, and two at once (or a cut beside a
    // ground truth) would take them twice.
    let (manifest, archive_bytes) = crate::core::support::heavy::run(move || -> Result<(Value, Vec<u8>)> {
        let root = format!("release-v{}", info.release);
        let mtime = u64::try_from(now.timestamp()).unwrap_or(0);
        // What each job frees goes back before the next job's grows.
        let _prompt = crate::core::support::heavy::PromptPurge::start();
        let (manifest, files) = archive::build(kind, &snapshot, &info, &root, mtime)?;
        drop(snapshot);
        let bytes = packing::join(files)?;
        Ok((manifest, bytes))
    })
    .await??;
    // In a bucket: the archive is written whole (one atomic put) before its
    // row is committed; a row never names a missing object.
    let (key, size, sha256, in_table) = if storage.keeps_releases() {
        let sha256 = hex::encode(<sha2::Sha256 as sha2::Digest>::digest(&archive_bytes));
        let key = crate::storage::release_key(campaign_id, number, &sha256);
        let size = i64::try_from(archive_bytes.len()).unwrap_or(i64::MAX);
        storage.put(crate::storage::Object::Release(&key), bytes::Bytes::from(archive_bytes)).await?;
        (Some(key), Some(size), Some(sha256), (Vec::new(), false))
    } else {
        (None, None, None, (archive_bytes, true))
    };
    let summary = returning_summary!(
        "INSERT INTO releases (id, campaign_id, number, note, created_at, created_by, campaign_state, manifest, archive,
                               archive_key, archive_size, archive_sha256)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, CASE WHEN $13 THEN $9::bytea END, $10, $11, $12)",
        Uuid::new_v4(),
        campaign_id,
        number,
        note,
        now as crate::db::Time,
        by,
        campaign.state.as_str(),
        &manifest,
        &in_table.0,
        key,
        size,
        sha256,
        in_table.1,
    )
    .fetch_one(&mut *tx)
    .await?;
    tx.commit().await?;
    // Closing is only tidying: the release is stored.
    if let Err(e) = conn.close().await {
        tracing::debug!(error = %e, "closing the connection a release was stored through");
    }
    Ok(summary)
}

/// A campaign's releases, newest first.
pub async fn list(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<ReleaseSummary>> {
    Ok(sqlx::query_as!(
        ReleaseSummary,
        r#"SELECT number, note, created_at AS "created_at: crate::db::Time", campaign_state,
                      coalesce(octet_length(archive)::bigint, archive_size) AS "size!", manifest->'counts' AS "counts!"
             FROM releases WHERE campaign_id = $1 ORDER BY number DESC"#,
        campaign_id
    )
    .fetch_all(pool)
    .await?)
}

/// Where a release's archive is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ArchiveAt {
    /// In the database (a folder store), this many bytes.
    Table(i64),
    /// In the object store under this key, this many bytes.
    Store {
        /// Its key.
        key: String,
        /// Its size.
        size: i64,
    },
}

/// Where a release's archive is, or not found.
pub async fn archive_at(pool: &PgPool, campaign_id: Uuid, number: i32) -> Result<ArchiveAt> {
    let row = sqlx::query!(
        r#"SELECT octet_length(archive)::bigint AS "in_table", archive_key, archive_size FROM releases
           WHERE campaign_id = $1 AND number = $2"#,
        campaign_id,
        number,
    )
    .fetch_optional(pool)
    .await?
    .map(|r| (r.in_table, r.archive_key, r.archive_size));
    match row {
        Some((_, Some(key), Some(size))) => Ok(ArchiveAt::Store { key, size }),
        Some((Some(size), _, _)) => Ok(ArchiveAt::Table(size)),
        _ => Err(Error::NotFound("release")),
    }
}

/// A release's archive read whole (for a diff), wherever it is.
pub async fn archive_bytes(
    pool: &PgPool,
    storage: &crate::storage::Storage,
    campaign_id: Uuid,
    number: i32,
) -> Result<Vec<u8>> {
    match archive_at(pool, campaign_id, number).await? {
        ArchiveAt::Store { key, .. } => {
            Ok(storage.get_bytes(crate::storage::Object::Release(&key), u64::MAX).await?.to_vec())
        }
        ArchiveAt::Table(_) => Ok(sqlx::query_scalar!(
            "SELECT archive FROM releases WHERE campaign_id = $1 AND number = $2",
            campaign_id,
            number
        )
        .fetch_one(pool)
        .await?
        .ok_or(Error::NotFound("release"))?),
    }
}

/// Bytes `[offset, offset + len)` of a release's archive, for streaming it
/// out without holding it in memory.
pub async fn archive_chunk(pool: &PgPool, campaign_id: Uuid, number: i32, offset: i64, len: i64) -> Result<Vec<u8>> {
    sqlx::query_scalar!(
        r#"SELECT substring(archive FROM ($3::bigint + 1)::int FOR $4::bigint::int) AS "chunk!"
             FROM releases WHERE campaign_id = $1 AND number = $2"#,
        campaign_id,
        number,
        offset,
        len
    )
    .fetch_optional(pool)
    .await?
    .ok_or(Error::NotFound("release"))
}

/// The files of a stored archive that a diff reads ([`diff::reads`]).
async fn unpacked_for_diff(
    pool: &PgPool,
    storage: &crate::storage::Storage,
    campaign_id: Uuid,
    number: i32,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>> {
    let bytes = archive_bytes(pool, storage, campaign_id, number).await?;
    packing::unpack_only(&bytes, diff::reads).map_err(|e| Error::internal("unpacking a stored release", e))
}

/// What changed from release `from` to release `to`. Releases never change,
/// so the comparison (both archives read: most of a second at 30,000
/// items) is made once per pair and this Atelier version, and kept
/// in `release_diffs`; later views (the diff page's pages) read it.
#[tracing::instrument(level = "debug", skip(pool, storage, kinds))]
pub async fn diff(
    pool: &PgPool,
    storage: &crate::storage::Storage,
    kinds: &crate::core::Registry,
    campaign_id: Uuid,
    from: i32,
    to: i32,
) -> Result<diff::ReleaseDiff> {
    let campaign = campaigns::get(pool, campaign_id).await?;
    let kind = kinds.of(&campaign)?;
    let version = env!("CARGO_PKG_VERSION");
    let kept = sqlx::query_scalar!(
        r#"SELECT diff::text AS "diff!" FROM release_diffs
           WHERE campaign_id = $1 AND from_number = $2 AND to_number = $3 AND atelier_version = $4"#,
        campaign_id,
        from,
        to,
        version,
    )
    .fetch_optional(pool)
    .await?;
    // One that no longer reads (a changed type) is made again.
    if let Some(d) = kept.and_then(|text| serde_json::from_str(&text).ok()) {
        return Ok(d);
    }
    let (a, b) = (
        unpacked_for_diff(pool, storage, campaign_id, from).await?,
        unpacked_for_diff(pool, storage, campaign_id, to).await?,
    );
    let d = diff::diff(kind, &a, &b).map_err(|e| Error::internal("comparing two releases", e))?;
    let json = serde_json::to_value(&d).map_err(|e| Error::internal("keeping a release diff", e))?;
    sqlx::query!(
        "INSERT INTO release_diffs (campaign_id, from_number, to_number, atelier_version, diff)
         VALUES ($1, $2, $3, $4, $5)
         ON CONFLICT (campaign_id, from_number, to_number)
         DO UPDATE SET atelier_version = EXCLUDED.atelier_version, diff = EXCLUDED.diff",
        campaign_id,
        from,
        to,
        version,
        json,
    )
    .execute(pool)
    .await?;
    Ok(d)
}
