//! `atelier backup create` and `atelier backup restore`.

use crate::db::backup::{self, BackupError};
use crate::db::{embedded, Database, DatabaseArgs};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::{Path, PathBuf};

/// The `backup` subcommands.
#[derive(Debug, Subcommand)]
pub enum BackupCommand {
    /// Back up the database and the uploaded images into one file (safe while the service runs).
    Create(CreateArgs),
    /// Restore a backup into an empty data directory (or the empty database of DATABASE_URL).
    Restore(RestoreArgs),
}

/// Arguments of `backup create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The backup file to write (a tar archive; replaced only when complete).
    pub file: PathBuf,
    /// Directory of uploaded images (default: `uploads/` in the data directory).
    #[arg(long, env = "ATELIER_UPLOAD_DIR")]
    pub upload_dir: Option<PathBuf>,
    /// Database location.
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// Arguments of `backup restore`.
#[derive(Debug, Args)]
pub struct RestoreArgs {
    /// The backup file to restore, or a backup the service keeps in a
    /// bucket, `s3://bucket/prefix/atelier-<time>.backup.tar` (downloaded
    /// first, configured by the AWS environment).
    pub file: String,
    /// Where the images go (default: `uploads/` in the data directory).
    #[arg(long, env = "ATELIER_UPLOAD_DIR")]
    pub upload_dir: Option<PathBuf>,
    /// Database location: the data directory to create, or DATABASE_URL's empty database.
    #[command(flatten)]
    pub db: DatabaseArgs,
}

/// Runs a `backup` subcommand.
pub async fn run(cmd: BackupCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        BackupCommand::Create(args) => {
            let upload_dir = args.upload_dir.clone().unwrap_or_else(|| args.db.default_upload_dir());
            let db = Database::open(&args.db, 2).await?;
            let (conninfo, file) = (db.conninfo.clone(), args.file.clone());
            let taken = tokio::task::spawn_blocking(move || backup::create(&conninfo, &upload_dir, &file)).await;
            db.close().await;
            let manifest = taken??;
            writeln!(
                out,
                "backup written to {}: database {} bytes, {} images",
                args.file.display(),
                manifest.database.bytes,
                manifest.uploads.len()
            )?;
            Ok(())
        }
        BackupCommand::Restore(args) => restore(args, out).await,
    }
}

async fn restore(args: RestoreArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    // The target is checked first, then the whole archive is read and
    // checked, before anything is written: a refused target or archive
    // leaves every file as it was.
    let upload_dir = args.upload_dir.clone().unwrap_or_else(|| args.db.default_upload_dir());
    let target = match &args.db.database_url {
        Some(_) => {
            let database = Database::open(&args.db, 2).await?;
            let empty = backup::is_empty_database(&database.pool).await;
            database.close().await;
            if !empty? {
                return Err(BackupError::NotEmpty("the database of DATABASE_URL".into()).into());
            }
            "the database of DATABASE_URL".to_owned()
        }
        None => {
            // A new data directory: anything there (or where its cluster would go) is refused.
            let fallback = embedded::fallback_cluster_dir(&args.db.data_dir);
            for dir in [&args.db.data_dir, &fallback] {
                if !backup::is_empty_dir(dir)? {
                    return Err(BackupError::NotEmpty(dir.display().to_string()).into());
                }
            }
            args.db.data_dir.display().to_string()
        }
    };
    let (file, _downloaded) = local_copy(&args.file).await?;
    let staged = tokio::task::spawn_blocking(move || backup::read(&file)).await??;
    let existed = args.db.data_dir.exists();
    let restored = load(&args.db, staged, &upload_dir).await;
    if restored.is_err() && args.db.database_url.is_none() {
        // It was empty (or missing): leave it so, not half restored.
        for dir in [args.db.data_dir.clone(), embedded::fallback_cluster_dir(&args.db.data_dir)] {
            let _ = std::fs::remove_dir_all(&dir);
        }
        if existed {
            let _ = std::fs::create_dir(&args.db.data_dir);
        }
    }
    let (manifest, images) = restored?;
    writeln!(
        out,
        "restored the backup of {} (Atelier {}) into {target}: database {} bytes, {images} images in {}",
        manifest.created_at.to_rfc3339(),
        manifest.atelier_version,
        manifest.database.bytes,
        upload_dir.display()
    )?;
    Ok(())
}

/// The backup file `address` names on this host: the path itself, or a
/// bucket's backup downloaded (streamed) into a temporary folder, which is
/// removed when the second value is dropped.
async fn local_copy(address: &str) -> anyhow::Result<(PathBuf, Option<tempfile::TempDir>)> {
    let Some(key) = address.strip_prefix("s3://") else { return Ok((PathBuf::from(address), None)) };
    let (shelf, name) = key
        .rsplit_once('/')
        .map(|(shelf, name)| (format!("s3://{shelf}"), name))
        .ok_or_else(|| anyhow::anyhow!("`{address}`: name a backup, s3://bucket/prefix/atelier-<time>.backup.tar"))?;
    let store =
        crate::storage::Storage::from_address(&shelf, false).map_err(|e| anyhow::anyhow!("`{address}`: {e}"))?;
    let dir = tempfile::Builder::new().prefix("atelier-download-").tempdir()?;
    let file = dir.path().join("backup.tar");
    let mut fetched =
        store.get(crate::storage::Object::Backup(name)).await.map_err(|e| anyhow::anyhow!("`{address}`: {e}"))?;
    let mut out = tokio::fs::File::create(&file).await?;
    use futures_util::StreamExt;
    use tokio::io::AsyncWriteExt;
    while let Some(chunk) = fetched.stream.next().await {
        out.write_all(&chunk.map_err(|e| anyhow::anyhow!("`{address}`: {e}"))?).await?;
    }
    out.flush().await?;
    Ok((file, Some(dir)))
}

/// Loads the staged dump into the (empty) target database and copies the
/// images; the manifest and the number of images.
async fn load(
    db: &DatabaseArgs,
    staged: backup::Staged,
    upload_dir: &Path,
) -> anyhow::Result<(backup::Manifest, usize)> {
    let database = Database::open(db, 2).await?;
    let empty = backup::is_empty_database(&database.pool).await;
    let conninfo = database.conninfo.clone();
    let loaded = match empty {
        Ok(true) => {
            let upload_dir = upload_dir.to_owned();
            tokio::task::spawn_blocking(move || {
                backup::load_database(&staged, &conninfo)?;
                let images = backup::copy_uploads(&staged, &upload_dir)?;
                Ok::<_, BackupError>((staged.manifest.clone(), images))
            })
            .await
            .map_err(anyhow::Error::from)
            .and_then(|r| r.map_err(anyhow::Error::from))
        }
        Ok(false) => Err(BackupError::NotEmpty("the database of DATABASE_URL".into()).into()),
        Err(e) => Err(e.into()),
    };
    database.close().await;
    loaded
}
