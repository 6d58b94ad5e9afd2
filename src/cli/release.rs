//! `atelier release create` and `atelier release verify`.

use super::Failed;
use crate::core::releases::{self, archive, packing, Author};
use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// The `release` subcommands.
#[derive(Debug, Subcommand)]
pub enum ReleaseCommand {
    /// Cut the next release of a campaign (stored by the service).
    Create(CreateArgs),
    /// Check an archive offline: every file against the manifest, every derived file recomputed.
    Verify(VerifyArgs),
    /// Write a verified release out in a community format (`hf`: Parquet tables, dataset card, Croissant).
    Export(ExportArgs),
}

/// The formats `release export` writes.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum ExportFormat {
    /// A Hugging Face dataset folder: `data/*.parquet`, `README.md` (dataset card), `croissant.json`.
    Hf,
}

/// Arguments of `release export`.
#[derive(Debug, Args)]
pub struct ExportArgs {
    /// The format to write.
    #[arg(long, value_enum)]
    pub format: ExportFormat,
    /// The release archive (`.tar.gz`); it must verify.
    pub archive: PathBuf,
    /// The folder to write (created; if it exists it must be empty).
    pub dir: PathBuf,
    /// Copy the uploaded images the tables name into `images/` and point the tables at the copies.
    #[arg(long)]
    pub with_images: bool,
    /// The service's upload directory, where `--with-images` finds the images.
    #[arg(long, env = "ATELIER_UPLOAD_DIR")]
    pub upload_dir: Option<PathBuf>,
}

/// Arguments of `release create`.
#[derive(Debug, Args)]
pub struct CreateArgs {
    /// The campaign.
    #[arg(long)]
    pub campaign: uuid::Uuid,
    /// A note stored with the release.
    #[arg(long, default_value = "")]
    pub note: String,
    /// Who cuts it, for the manifest (default: the login name of this shell).
    #[arg(long)]
    pub by: Option<String>,
    /// The licence the data is published under (`cc-by-4.0`, `mit`, `other`).
    #[arg(long)]
    pub license: Option<String>,
    /// Database location.
    #[command(flatten)]
    pub db: crate::db::DatabaseArgs,
}

/// Arguments of `release verify`.
#[derive(Debug, Args)]
pub struct VerifyArgs {
    /// The release archive (`.tar.gz`).
    pub archive: PathBuf,
}

/// Runs a `release` subcommand.
pub async fn run(cmd: ReleaseCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        ReleaseCommand::Create(args) => {
            let by = args.by.clone().unwrap_or_else(|| format!("cli:{}", std::env::var("USER").unwrap_or_default()));
            let db = crate::db::Database::open(&args.db, 2).await?;
            let result = async {
                db.migrate().await?;
                let storage = args.db.storage(&db.pool, None, false).await?;
                anyhow::Ok(
                    releases::create(
                        &db.pool,
                        &storage,
                        &crate::kinds::registry(),
                        args.campaign,
                        &Author::Named(by),
                        &args.note,
                        args.license.as_deref(),
                    )
                    .await?,
                )
            }
            .await;
            db.close().await;
            let summary = result?;
            writeln!(out, "release v{} of campaign {} ({} bytes)", summary.number, args.campaign, summary.size)?;
            Ok(())
        }
        ReleaseCommand::Export(args) => export(&args, out),
        ReleaseCommand::Verify(args) => {
            // Read as it streams in: only the manifest and the raw data are held.
            let file =
                std::fs::File::open(&args.archive).map_err(|e| anyhow::anyhow!("{}: {e}", args.archive.display()))?;
            let read = packing::digests(std::io::BufReader::new(file))
                .map_err(|e| anyhow::anyhow!("{}: {e}", args.archive.display()))?;
            let verification =
                archive::verify_digests(&read.digests, read.kept, read.snapshot, &crate::kinds::registry());
            for problem in &verification.problems {
                writeln!(out, "DIFFERS {problem}")?;
            }
            if verification.problems.is_empty() {
                writeln!(
                    out,
                    "OK {}: {} files match the manifest and the recomputation",
                    args.archive.display(),
                    verification.checked
                )?;
                Ok(())
            } else {
                Err(Failed {
                    code: 1,
                    message: format!("{}: {} problem(s)", args.archive.display(), verification.problems.len()),
                }
                .into())
            }
        }
    }
}

/// `release export`: checks the archive, then writes the folder.
fn export(args: &ExportArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let ExportFormat::Hf = args.format;
    let archive = args.archive.display();
    let kinds = crate::kinds::registry();
    // Verified as it streams first (bounded memory), and only then held whole.
    let file = std::fs::File::open(&args.archive).map_err(|e| anyhow::anyhow!("{archive}: {e}"))?;
    let read = packing::digests(std::io::BufReader::new(file)).map_err(|e| anyhow::anyhow!("{archive}: {e}"))?;
    let verification = archive::verify_digests(&read.digests, read.kept, read.snapshot, &kinds);
    if let Some(first) = verification.problems.first() {
        anyhow::bail!("{archive}: does not verify ({first}); run `atelier release verify` for every problem");
    }
    let bytes = std::fs::read(&args.archive).map_err(|e| anyhow::anyhow!("{archive}: {e}"))?;
    let files = packing::unpack(&bytes).map_err(|e| anyhow::anyhow!("{archive}: {e}"))?;
    if std::fs::read_dir(&args.dir).is_ok_and(|mut d| d.next().is_some()) {
        anyhow::bail!("{}: exists and is not empty; give a new or empty folder", args.dir.display());
    }
    let images = match (args.with_images, &args.upload_dir) {
        (false, _) => None,
        (true, Some(dir)) => Some(ImageCopies::new(dir.clone())),
        (true, None) => anyhow::bail!("--with-images needs --upload-dir (the service's upload directory)"),
    };
    let rewrite = |cell: &str| images.as_ref().and_then(|i| i.rewrite(cell));
    let folder = releases::hf::folder(&files, &kinds, images.as_ref().map(|_| &rewrite as releases::hf::Rewrite<'_>))
        .map_err(|e| anyhow::anyhow!("{archive}: {e}"))?;
    let write = |name: &str, bytes: &[u8]| -> anyhow::Result<()> {
        let path = args.dir.join(name);
        if let Some(parent) = path.parent() {
            std::fs::create_dir_all(parent).map_err(|e| anyhow::anyhow!("{}: {e}", parent.display()))?;
        }
        std::fs::write(&path, bytes).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))
    };
    // Nothing is written unless every image named can be copied.
    if let Some(missing) = images.as_ref().and_then(ImageCopies::first_missing) {
        anyhow::bail!("{}: not found in the upload directory (named in the release's tables)", missing.display());
    }
    for (name, bytes) in &folder {
        write(name, bytes)?;
    }
    let copied = match &images {
        Some(images) => images.copy_into(&args.dir.join("images"))?,
        None => 0,
    };
    writeln!(
        out,
        "wrote {} files to {}{}",
        folder.len(),
        args.dir.display(),
        if args.with_images { format!(" and {copied} images to images/") } else { String::new() }
    )?;
    Ok(())
}

/// Uploaded images named in the tables (`/images/<sha256>.<ext>`), copied
/// into the folder and named there by relative path.
struct ImageCopies {
    upload_dir: PathBuf,
    pattern: regex::Regex,
    named: std::sync::Mutex<std::collections::BTreeSet<String>>,
}

impl ImageCopies {
    fn new(upload_dir: PathBuf) -> Self {
        let pattern = regex::Regex::new(r"/images/([0-9a-f]{64}\.(?:png|jpg|gif|webp))").expect("a valid pattern");
        Self { upload_dir, pattern, named: Default::default() }
    }

    /// The cell with every uploaded image's path made relative to the folder.
    fn rewrite(&self, cell: &str) -> Option<String> {
        if !self.pattern.is_match(cell) {
            return None;
        }
        let mut named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        for found in self.pattern.captures_iter(cell) {
            named.insert(found[1].to_owned());
        }
        Some(self.pattern.replace_all(cell, "images/$1").into_owned())
    }

    /// The first image named that the upload directory lacks.
    fn first_missing(&self) -> Option<PathBuf> {
        let named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        named.iter().map(|n| self.upload_dir.join(n)).find(|p| !p.is_file())
    }

    /// Copies every image named; an image missing from the upload directory is an error.
    fn copy_into(&self, dir: &std::path::Path) -> anyhow::Result<usize> {
        let named = self.named.lock().unwrap_or_else(std::sync::PoisonError::into_inner);
        if named.is_empty() {
            return Ok(0);
        }
        std::fs::create_dir_all(dir).map_err(|e| anyhow::anyhow!("{}: {e}", dir.display()))?;
        for name in named.iter() {
            let from = self.upload_dir.join(name);
            std::fs::copy(&from, dir.join(name)).map_err(|e| anyhow::anyhow!("{}: {e}", from.display()))?;
        }
        Ok(named.len())
    }
}
