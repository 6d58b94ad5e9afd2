//! `atelier a100 score`: score a model against a released A100 ground truth.

use crate::input::{CsvFile, InputError};
use crate::kinds::a100::gt_file::GroundTruth;
use crate::stats::questionnaire::TieCredit;
use clap::{Args, Subcommand};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// The `a100` subcommands.
#[derive(Debug, Subcommand)]
pub enum A100Command {
    /// Score a model's answers: LATs and mLATs, or AATs with dimension indexes.
    Score(ScoreArgs),
    /// Import a question set (JSON, as for the API) into a campaign.
    Import(ImportArgs),
}

/// Arguments of `a100 import`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The campaign (an a100-lat or a100-aat campaign).
    #[arg(long)]
    pub campaign: uuid::Uuid,
    /// Database location.
    #[command(flatten)]
    pub db: crate::db::DatabaseArgs,
    /// The question set: `{"questions": [...]}`.
    pub file: PathBuf,
}

/// Imports a question set through the core, with the same validation as the API.
pub async fn import(args: &ImportArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let text =
        crate::text::read_file(&args.file).map_err(|source| InputError::Io { path: args.file.clone(), source })?;
    let items = crate::kinds::a100::question::parse_set(&text)
        .map_err(|e| InputError::File { path: args.file.clone(), message: e.0 })?;
    let db = crate::db::Database::open(&args.db, 2).await?;
    let result = async {
        db.migrate().await?;
        let campaign = crate::core::campaign::campaigns::get(&db.pool, args.campaign).await?;
        anyhow::ensure!(
            [super::LAT, super::AAT].contains(&campaign.kind.as_str()),
            "campaign {} is a {} campaign, not A100",
            campaign.id,
            campaign.kind
        );
        Ok(crate::core::item::items::import(&db.pool, &super::MODULE.registry(), args.campaign, &items).await?)
    }
    .await;
    db.close().await;
    writeln!(out, "imported {} questions", result?)?;
    Ok(())
}

/// Arguments of `a100 score`.
#[derive(Debug, Args)]
pub struct ScoreArgs {
    /// The ground-truth file (LAT or AAT) exported by Atelier.
    #[arg(long)]
    pub ground_truth: PathBuf,
    /// CSV with header `question_id,choice_id`.
    #[arg(long)]
    pub answers: PathBuf,
    /// Print JSON (with per-question detail).
    #[arg(long)]
    pub json: bool,
    /// LATs credit for choosing one of t tied majority choices: 1/t, 0, or 1.
    #[arg(long, value_enum, default_value_t = TieCredit::Fraction)]
    pub tie_credit: TieCredit,
}

/// The `a100` command: help and subcommands.
pub fn command() -> clap::Command {
    crate::kinds::KindCli::command::<A100Command>(
        "a100",
        "A100 tools: score a model against a released ground truth, import a question set",
    )
}

/// Runs the `a100` subcommand in `matches` (those of [`command`]).
pub fn run_matches<'a>(
    matches: &clap::ArgMatches,
    out: &'a mut dyn Write,
) -> futures_util::future::LocalBoxFuture<'a, anyhow::Result<()>> {
    let cmd = crate::kinds::KindCli::parse::<A100Command>(matches);
    Box::pin(async move { run(cmd?, out).await })
}

/// Runs an `a100` subcommand.
pub async fn run(cmd: A100Command, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        A100Command::Score(args) => score(&args, out),
        A100Command::Import(args) => import(&args, out).await,
    }
}

/// `a100 score`: scores a model's answers against a ground-truth file.
fn score(args: &ScoreArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let text = crate::text::read_file(&args.ground_truth)
        .map_err(|source| InputError::Io { path: args.ground_truth.clone(), source })?;
    let gt =
        GroundTruth::parse(&text).map_err(|message| InputError::File { path: args.ground_truth.clone(), message })?;
    let choices = gt.choices();
    let mut file = CsvFile::open(&args.answers)?;
    let mut answers: HashMap<String, String> = HashMap::new();
    let mut lines: HashMap<String, u64> = HashMap::new();
    let path = args.answers.clone();
    file.for_each_with_header(&["question_id", "choice_id"], |line, f| {
        let err = |message: String| InputError::Line { path: path.clone(), line, message };
        let Some(allowed) = choices.get(f[0]) else {
            return Err(err(format!("question_id: `{}` is not a question of the ground truth", f[0])));
        };
        if !allowed.contains(&f[1]) {
            return Err(err(format!("choice_id: `{}` is not one of question `{}`'s choices", f[1], f[0])));
        }
        if let Some(first) = lines.insert(f[0].to_owned(), line) {
            return Err(err(format!("question_id: `{}` was already answered on line {first}", f[0])));
        }
        answers.insert(f[0].to_owned(), f[1].to_owned());
        Ok(())
    })?;
    let mut result = gt.score(&answers, args.tie_credit);
    if args.json {
        writeln!(out, "{result}")?;
        return Ok(());
    }
    if let Some(obj) = result.as_object_mut() {
        obj.remove("per_question");
    }
    for (k, v) in result.as_object().into_iter().flatten() {
        writeln!(out, "{k}\t{v}")?;
    }
    Ok(())
}
