//! `atelier fashionpedia import`: an ontology and/or a COCO file of masks
//! into a campaign, streamed from disk (a release's training file of
//! 45,623 images and about 330,000 masks never sits in memory).

use clap::{Args, Subcommand};
use std::io::Write;
use std::path::PathBuf;

/// The `fashionpedia` subcommands.
#[derive(Debug, Subcommand)]
pub enum FashionpediaCommand {
    /// Import masks from COCO JSON in the Fashionpedia layout (and the ontology first, if given).
    Import(ImportArgs),
}

/// Arguments of `fashionpedia import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The Fashionpedia campaign.
    #[arg(long)]
    pub campaign: uuid::Uuid,
    /// The ontology (`category_attributes_descriptions.json`), imported first.
    #[arg(long)]
    pub ontology: Option<PathBuf>,
    /// Database location.
    #[command(flatten)]
    pub db: crate::db::DatabaseArgs,
    /// The COCO file (`instances_attributes_train2020.json` or your own).
    pub file: PathBuf,
}

/// The `fashionpedia` command: help and subcommands.
pub fn command() -> clap::Command {
    crate::kinds::KindCli::command::<FashionpediaCommand>(
        "fashionpedia",
        "Fashionpedia tools: importing an ontology and COCO masks (streamed)",
    )
}

/// Runs the `fashionpedia` subcommand in `matches` (those of [`command`]).
pub fn run_matches<'a>(
    matches: &clap::ArgMatches,
    out: &'a mut dyn Write,
) -> futures_util::future::LocalBoxFuture<'a, anyhow::Result<()>> {
    let cmd = crate::kinds::KindCli::parse::<FashionpediaCommand>(matches);
    Box::pin(async move { run(cmd?, out).await })
}

/// Runs a `fashionpedia` subcommand.
pub async fn run(cmd: FashionpediaCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    let FashionpediaCommand::Import(args) = cmd;
    let db = crate::db::Database::open(&args.db, 2).await?;
    let kinds = super::MODULE.registry();
    let result = async {
        db.migrate().await?;
        let campaign = crate::core::campaign::campaigns::get(&db.pool, args.campaign).await?;
        anyhow::ensure!(
            campaign.kind == super::NAME,
            "campaign {} is a {} campaign, not Fashionpedia",
            campaign.id,
            campaign.kind
        );
        if let Some(path) = &args.ontology {
            let text = crate::text::read_file(path).map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
            super::store::save_ontology(&db.pool, &kinds, args.campaign, &text)
                .await
                .map_err(|e| anyhow::anyhow!("{}: {e}", path.display()))?;
        }
        super::store::import_coco_file(&db.pool, &kinds, args.campaign, args.file.clone())
            .await
            .map_err(|e| anyhow::anyhow!("{}: {e}", args.file.display()))
    }
    .await;
    db.close().await;
    let r = result?;
    writeln!(out, "{} masks read ({} with zero area left out), {} tasks created", r.masks, r.zero_area, r.tasks)?;
    Ok(())
}
