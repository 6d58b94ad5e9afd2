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
                anyhow::Ok(
                    releases::create(
                        &db.pool,
                        &crate::kinds::registry(),
                        args.campaign,
                        &Author::Named(by),
                        &args.note,
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
        ReleaseCommand::Verify(args) => {
            let bytes = std::fs::read(&args.archive).map_err(|e| anyhow::anyhow!("{}: {e}", args.archive.display()))?;
            let files = packing::unpack(&bytes).map_err(|e| anyhow::anyhow!("{}: {e}", args.archive.display()))?;
            let verification = archive::verify(&files, &crate::kinds::registry());
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
