//! `atelier storage check` and `atelier storage migrate`: what the store
//! is missing or holds differently from what the database names, and moving
//! every upload and release archive to another store, each hash verified.

use super::Failed;
use crate::db::{Database, DatabaseArgs};
use crate::storage::{is_upload_name, Object, Storage, StorageError};
use clap::{Args, Subcommand};
use futures_util::StreamExt;
use sha2::{Digest, Sha256};
use sqlx::PgPool;
use std::io::Write;
use uuid::Uuid;

/// The `storage` subcommands.
#[derive(Debug, Subcommand)]
pub enum StorageCommand {
    /// List the items and releases whose objects are missing from the store
    /// or differ from their hash; exits 1 when any does.
    Check(CheckArgs),
    /// Copy every upload and release archive to another store, verifying
    /// every hash, then switch the service to it (resumable: run it again
    /// after an interruption).
    Migrate(MigrateArgs),
}

/// Arguments of `storage check`.
#[derive(Debug, Args)]
pub struct CheckArgs {
    /// Database location (and `--storage`, the store to check).
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// Arguments of `storage migrate`.
#[derive(Debug, Args)]
pub struct MigrateArgs {
    /// The store to move to: `file://DIR` or `s3://bucket/prefix`.
    #[arg(long)]
    pub to: String,
    /// Database location (and `--storage`, the store to move from).
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// Runs a `storage` subcommand.
pub async fn run(cmd: StorageCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    let db_args = match &cmd {
        StorageCommand::Check(a) => &a.db,
        StorageCommand::Migrate(a) => &a.db,
    };
    let db = Database::open(db_args, 4).await?;
    let result = async {
        db.migrate().await?;
        let storage = db_args.storage(&db.pool, None, false).await?;
        match &cmd {
            StorageCommand::Check(_) => check(&db.pool, &storage, out).await,
            StorageCommand::Migrate(a) => migrate(&db.pool, &storage, &a.to, out).await,
        }
    }
    .await;
    db.close().await;
    result
}

/// The largest object read whole to check its hash (an archive may be
/// large; images are at most 5 MB).
const READ_LIMIT: u64 = 8 * 1024 * 1024 * 1024;

/// SHA-256 of an object, hex (streamed: never held whole).
async fn sha256_of(storage: &Storage, object: Object<'_>) -> Result<String, StorageError> {
    let mut fetched = storage.get(object).await?;
    let mut hasher = Sha256::new();
    while let Some(chunk) = fetched.stream.next().await {
        hasher.update(&chunk?);
    }
    Ok(hex::encode(hasher.finalize()))
}

/// The uploaded images the items name (`/images/<name>`), with one item
/// naming each, and the `s3://` references.
async fn named_images(pool: &PgPool) -> anyhow::Result<(Vec<(String, String)>, Vec<(String, String)>)> {
    let rows = sqlx::query!(
        r#"SELECT DISTINCT ON (s.value) s.value AS "value!", i.campaign_id, i.external_id
             FROM items i, LATERAL jsonb_path_query(i.payload, 'strict $.**') AS j(v),
                  LATERAL (SELECT j.v #>> '{}' AS value) s
            WHERE jsonb_typeof(j.v) = 'string' AND (s.value LIKE '/images/%' OR s.value LIKE 's3://%')
            ORDER BY s.value, i.campaign_id, i.external_id"#
    )
    .fetch_all(pool)
    .await?;
    let (mut uploads, mut bucket) = (Vec::new(), Vec::new());
    for (value, campaign, item) in rows.into_iter().map(|r| (r.value, r.campaign_id, r.external_id)) {
        let named_by = format!("item `{item}` of campaign {campaign}");
        match value.strip_prefix(crate::core::item::images::UPLOADED) {
            Some(name) => uploads.push((name.to_owned(), named_by)),
            None => bucket.push((value, named_by)),
        }
    }
    Ok((uploads, bucket))
}

async fn check(pool: &PgPool, storage: &Storage, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut problems = 0;
    let (uploads, bucket) = named_images(pool).await?;
    for (name, named_by) in &uploads {
        let expected = name.split_once('.').map_or("", |(hash, _)| hash);
        match sha256_of(storage, Object::Upload(name)).await {
            Ok(sha) if sha == expected => {}
            Ok(_) => {
                problems += 1;
                writeln!(out, "DIFFERS image {name} ({named_by}): its content is not its hash")?;
            }
            Err(StorageError::NotFound(_)) => {
                problems += 1;
                writeln!(out, "MISSING image {name} ({named_by})")?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    for (reference, named_by) in &bucket {
        let key = match crate::core::item::images::bucket_key(storage, reference) {
            Ok(key) => key,
            Err(e) => {
                problems += 1;
                writeln!(out, "MISSING {reference} ({named_by}): {e}")?;
                continue;
            }
        };
        match storage.size(Object::InBucket(key)).await {
            Ok(_) => {}
            Err(StorageError::NotFound(_)) => {
                problems += 1;
                writeln!(out, "MISSING {reference} ({named_by})")?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    let stored: Vec<(Uuid, i32, String, String)> = sqlx::query!(
        r#"SELECT campaign_id, number, archive_key AS "archive_key!", archive_sha256 AS "archive_sha256!"
             FROM releases WHERE archive_key IS NOT NULL
            ORDER BY campaign_id, number"#
    )
    .fetch_all(pool)
    .await?
    .into_iter()
    .map(|r| (r.campaign_id, r.number, r.archive_key, r.archive_sha256))
    .collect();
    for (campaign, number, key, expected) in &stored {
        match sha256_of(storage, Object::Release(key)).await {
            Ok(sha) if sha == *expected => {}
            Ok(_) => {
                problems += 1;
                writeln!(
                    out,
                    "DIFFERS release v{number} of campaign {campaign} ({key}): not the archive that was cut"
                )?;
            }
            Err(StorageError::NotFound(_)) => {
                problems += 1;
                writeln!(out, "MISSING release v{number} of campaign {campaign} ({key})")?;
            }
            Err(e) => return Err(e.into()),
        }
    }
    writeln!(
        out,
        "checked {} images, {} bucket images and {} release archives in {}: {problems} problem(s)",
        uploads.len(),
        bucket.len(),
        stored.len(),
        storage.location().url()
    )?;
    if problems > 0 {
        return Err(Failed { code: 1, message: format!("{problems} problem(s) in the store") }.into());
    }
    Ok(())
}

/// Copies one object unless the destination holds it already with the
/// right hash; the copy is read back and its hash checked. Whether it
/// copied.
async fn copy_verified(
    from: &Storage,
    to: &Storage,
    source: Object<'_>,
    target: Object<'_>,
    sha256: &str,
    bytes: Option<bytes::Bytes>,
) -> anyhow::Result<bool> {
    match sha256_of(to, target).await {
        Ok(sha) if sha == sha256 => return Ok(false),
        Ok(_) | Err(StorageError::NotFound(_)) => {}
        Err(e) => return Err(e.into()),
    }
    let bytes = match bytes {
        Some(b) => b,
        None => from.get_bytes(source, READ_LIMIT).await?,
    };
    let read = hex::encode(Sha256::digest(&bytes));
    if read != sha256 {
        anyhow::bail!("{source:?} is not what its hash says ({read}, expected {sha256}); nothing of it was copied");
    }
    to.put(target, bytes).await?;
    let copied = sha256_of(to, target).await?;
    if copied != sha256 {
        anyhow::bail!("{target:?}: the copy reads back as {copied}, expected {sha256}");
    }
    Ok(true)
}

async fn migrate(pool: &PgPool, from: &Storage, to_address: &str, out: &mut dyn Write) -> anyhow::Result<()> {
    let to = Storage::from_address(to_address, false).map_err(|e| anyhow::anyhow!("--to: {e}"))?;
    if to.location() == from.location() {
        anyhow::bail!("--to: the service already keeps its blobs in {}", to.location().url());
    }
    let (mut copied, mut present) = (0usize, 0usize);
    let mut names = from.uploads();
    while let Some(listed) = names.next().await {
        let (name, _) = listed?;
        if !is_upload_name(&name) {
            continue;
        }
        let sha = name.split_once('.').map_or("", |(h, _)| h).to_owned();
        if copy_verified(from, &to, Object::Upload(&name), Object::Upload(&name), &sha, None).await? {
            copied += 1;
        } else {
            present += 1;
        }
    }
    writeln!(out, "images: {copied} copied, {present} already there")?;
    let releases = sqlx::query!(
        r#"SELECT id, campaign_id, number, archive_key,
                  coalesce(archive_sha256, encode(sha256(archive), 'hex')) AS sha,
                  coalesce(archive_size, octet_length(archive)) AS "size!"
             FROM releases ORDER BY campaign_id, number"#
    )
    .fetch_all(pool)
    .await?;
    let (mut moved, mut kept) = (0usize, 0usize);
    for (id, campaign, number, key, sha, size) in
        releases.into_iter().map(|r| (r.id, r.campaign_id, r.number, r.archive_key, r.sha, r.size))
    {
        let sha = sha.unwrap_or_default();
        // Already moved by an earlier, interrupted run: nothing to do.
        if let (Some(key), true) = (&key, to.keeps_releases()) {
            if sha256_of(&to, Object::Release(key)).await.is_ok_and(|s| s == sha) {
                kept += 1;
                continue;
            }
        }
        let bytes = match &key {
            Some(key) => from.get_bytes(Object::Release(key), READ_LIMIT).await?,
            None => bytes::Bytes::from(
                sqlx::query_scalar::<_, Vec<u8>>("SELECT archive FROM releases WHERE id = $1")
                    .bind(id)
                    .fetch_one(pool)
                    .await?,
            ),
        };
        if hex::encode(Sha256::digest(&bytes)) != sha {
            anyhow::bail!("release v{number} of campaign {campaign}: its archive is not the one cut (hash differs)");
        }
        if to.keeps_releases() {
            let new_key = crate::storage::release_key(campaign, number, &sha);
            let source = key.as_deref().map_or(Object::Release(""), Object::Release);
            copy_verified(from, &to, source, Object::Release(&new_key), &sha, Some(bytes)).await?;
            sqlx::query!(
                "UPDATE releases SET archive = NULL, archive_key = $2, archive_size = $3, archive_sha256 = $4 WHERE id = $1",
                id,
                &new_key,
                size,
                &sha,
            )
            .execute(pool)
            .await?;
            moved += 1;
        } else if key.is_some() {
            // Into a folder store: the archive goes back into the database.
            sqlx::query!(
                "UPDATE releases SET archive = $2, archive_key = NULL, archive_size = NULL, archive_sha256 = NULL
                 WHERE id = $1",
                id,
                bytes.as_ref(),
            )
            .execute(pool)
            .await?;
            moved += 1;
        } else {
            kept += 1;
        }
    }
    writeln!(out, "release archives: {moved} moved, {kept} already where the new store keeps them")?;
    crate::db::storage_location::record(pool, &to.location().url()).await?;
    writeln!(
        out,
        "switched to {}: every instance started without --storage uses it (restart running ones)",
        to.location().url()
    )?;
    Ok(())
}
