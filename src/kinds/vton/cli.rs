//! `atelier vton curate`: the service's VTON curation on files collected elsewhere.

use crate::input::{CsvFile, InputError};
use crate::kinds::vton::curation::{curate, Answer, Preset, SanityTask, SanityTasks, Thresholds};
use crate::kinds::vton::curation_code::CodeThresholds;
use clap::{Args, Subcommand};
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// The `vton` subcommands.
#[derive(Debug, Subcommand)]
pub enum VtonCommand {
    /// Remove unreliable annotators and low-agreement questionnaires; print scores.
    Curate(CurateArgs),
    /// Import a VTON-QBench release (answers.csv, images.csv) into an empty VTON campaign.
    ImportQbench(ImportQbenchArgs),
}

/// Arguments of `vton import-qbench`.
#[derive(Debug, Args)]
pub struct ImportQbenchArgs {
    /// The VTON campaign (without items yet).
    #[arg(long)]
    pub campaign: uuid::Uuid,
    /// The release's answers.csv.
    #[arg(long)]
    pub answers: PathBuf,
    /// The release's images.csv.
    #[arg(long)]
    pub images: PathBuf,
    /// Attention positions and expected ratings: `v2` or `v1` (the specs the
    /// released code hard-codes), or a list such as `5=1,15=3,25=1:1`
    /// (`:tolerance` optional).
    #[arg(long, default_value = "")]
    pub attention: String,
    /// Database location.
    #[command(flatten)]
    pub db: crate::db::DatabaseArgs,
}

/// The attention specs the released code hard-codes (`ATTENTION_EXPECTED`
/// in its `util/curation.py`): label 0 (rating 1) everywhere, tolerance 1
/// at 35 and 45; v1 does not check position 15.
pub fn released_attention(version: &str) -> Option<&'static str> {
    match version {
        "v2" => Some("5=1,15=1,25=1,35=1:1,45=1:1"),
        "v1" => Some("5=1,25=1,35=1:1,45=1:1"),
        _ => None,
    }
}

/// Parses `--attention 5=1,15=3:1`, or `v1`/`v2` (see [`released_attention`]).
pub fn attention(spec: &str) -> anyhow::Result<std::collections::BTreeMap<usize, SanityTask>> {
    let spec = released_attention(spec.trim()).unwrap_or(spec);
    let mut out = std::collections::BTreeMap::new();
    for part in spec.split(',').map(str::trim).filter(|p| !p.is_empty()) {
        let bad = || anyhow::anyhow!("--attention: `{part}` is not POSITION=EXPECTED[:TOLERANCE] (e.g. 5=1 or 25=3:1)");
        let (position, rest) = part.split_once('=').ok_or_else(bad)?;
        let (expected, tolerance) = rest.split_once(':').unwrap_or((rest, "0"));
        let position: usize = position.parse().ok().filter(|p| *p > 0).ok_or_else(bad)?;
        let expected: u8 = expected.parse().ok().filter(|e| (1..=3).contains(e)).ok_or_else(bad)?;
        let tolerance: u8 = tolerance.parse().ok().filter(|t| *t <= 2).ok_or_else(bad)?;
        anyhow::ensure!(
            out.insert(position, SanityTask { expected, tolerance }).is_none(),
            "--attention: position {position} given twice"
        );
    }
    Ok(out)
}

/// Imports a release through the same code as the API.
pub async fn import_qbench(args: &ImportQbenchArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let read =
        |path: &PathBuf| crate::text::read_file(path).map_err(|source| InputError::Io { path: path.clone(), source });
    let attention = attention(&args.attention)?;
    let release = crate::kinds::vton::qbench::parse(&read(&args.answers)?, &read(&args.images)?)?;
    let db = crate::db::Database::open(&args.db, 2).await?;
    let result = async {
        db.migrate().await?;
        let campaign = crate::core::campaign::campaigns::get(&db.pool, args.campaign).await?;
        anyhow::ensure!(
            campaign.kind == super::NAME,
            "campaign {} is a {} campaign, not VTON",
            campaign.id,
            campaign.kind
        );
        Ok(crate::kinds::vton::qbench::import(&db.pool, &super::MODULE.registry(), args.campaign, &release, &attention)
            .await?)
    }
    .await;
    db.close().await;
    writeln!(out, "{}", result?)?;
    Ok(())
}

/// Arguments of `vton curate`.
#[derive(Debug, Args)]
pub struct CurateArgs {
    /// CSV with header `questionnaire,annotator,task,rating[,position]` (rating 1, 2 or 3;
    /// position 1-based in the questionnaire, else the file's order).
    #[arg(long)]
    pub answers: PathBuf,
    /// CSV with header `task,expected[,tolerance]`: the sanity tasks and their answers.
    #[arg(long)]
    pub sanity: Option<PathBuf>,
    /// The rules: `paper` (the paper's text) or `vton-qbench-code` (the released code's).
    #[arg(long, value_enum, default_value_t = Preset::Paper)]
    pub preset: Preset,
    /// vton-qbench-code: seed of the bootstrapped alpha (default 0).
    #[arg(long)]
    pub seed: Option<u64>,
    /// paper: remove annotators failing more sanity tasks than this (default 0).
    #[arg(long)]
    pub max_sanity_failures: Option<usize>,
    /// paper: remove annotators whose most frequent rating covers more than this share (default 0.8).
    #[arg(long)]
    pub max_identical: Option<f64>,
    /// paper: remove annotators differing from the others' plurality rating (unique most frequent)
    /// more often than this (default 0.6).
    #[arg(long)]
    pub max_disagreement: Option<f64>,
    /// Drop questionnaires with ordinal alpha at or below this (paper, default 0.4); vton-qbench-code:
    /// bootstrapped alpha below this (default: no alpha filter, as the released pipeline).
    #[arg(long)]
    pub min_alpha: Option<f64>,
    /// Drop questionnaires with fewer kept annotators (paper, default 2; vton-qbench-code: responses, default 3).
    #[arg(long)]
    pub min_annotators: Option<usize>,
    /// vton-qbench-code: exclude a response whose longest identical run exceeds this share of the columns (0.8).
    #[arg(long)]
    pub max_run_share: Option<f64>,
    /// vton-qbench-code: exclude a response whose rating variance (ddof 1) is below this (0.30).
    #[arg(long)]
    pub min_variance: Option<f64>,
    /// vton-qbench-code: a troll answers the opposite extreme in at least this share of tested tasks (0.20).
    #[arg(long)]
    pub troll_share: Option<f64>,
    /// vton-qbench-code: tasks test trolling when the others' majority holds at least this share (0.60).
    #[arg(long)]
    pub troll_majority_share: Option<f64>,
    /// vton-qbench-code: trolling is judged only with at least this many tested tasks (10).
    #[arg(long)]
    pub troll_min_tasks: Option<usize>,
    /// Print the full result as JSON.
    #[arg(long)]
    pub json: bool,
}

fn rating(file: &CsvFile, line: u64, column: &str, text: &str) -> Result<u8, InputError> {
    match text.parse::<u8>() {
        Ok(r @ 1..=3) => Ok(r),
        _ => Err(file.line_error(line, format!("{column}: `{text}` is not a rating (1, 2 or 3)"))),
    }
}

/// The `vton` command: help and subcommands.
pub fn command() -> clap::Command {
    crate::kinds::KindCli::command::<VtonCommand>(
        "vton",
        "VTON tools: curation on your own files, importing a VTON-QBench release",
    )
}

/// Runs the `vton` subcommand in `matches` (those of [`command`]).
pub fn run_matches<'a>(
    matches: &clap::ArgMatches,
    out: &'a mut dyn Write,
) -> futures_util::future::LocalBoxFuture<'a, anyhow::Result<()>> {
    let cmd = crate::kinds::KindCli::parse::<VtonCommand>(matches);
    Box::pin(async move { run(cmd?, out).await })
}

/// Runs a `vton` subcommand.
pub async fn run(cmd: VtonCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        VtonCommand::Curate(args) => curate_files(&args, out),
        VtonCommand::ImportQbench(args) => import_qbench(&args, out).await,
    }
}

/// The thresholds the flags give: each flag applies to its preset, and a
/// flag of the other preset is refused rather than silently ignored.
fn thresholds(args: &CurateArgs) -> anyhow::Result<Thresholds> {
    let given =
        |flags: &[(&'static str, bool)]| flags.iter().filter(|(_, on)| *on).map(|(n, _)| *n).collect::<Vec<_>>();
    let share = |name: &str, v: Option<f64>| -> anyhow::Result<()> {
        if let Some(v) = v {
            anyhow::ensure!((0.0..=1.0).contains(&v), "--{name} must be between 0 and 1");
        }
        Ok(())
    };
    match args.preset {
        Preset::Paper => {
            let other = given(&[
                ("seed", args.seed.is_some()),
                ("max-run-share", args.max_run_share.is_some()),
                ("min-variance", args.min_variance.is_some()),
                ("troll-share", args.troll_share.is_some()),
                ("troll-majority-share", args.troll_majority_share.is_some()),
                ("troll-min-tasks", args.troll_min_tasks.is_some()),
            ]);
            anyhow::ensure!(
                other.is_empty(),
                "--{} applies to --preset vton-qbench-code only, not to the paper preset",
                other.join(", --")
            );
            share("max-identical", args.max_identical)?;
            share("max-disagreement", args.max_disagreement)?;
            let d = Thresholds::default();
            Ok(Thresholds {
                preset: Preset::Paper,
                max_sanity_failures: args.max_sanity_failures.unwrap_or(d.max_sanity_failures),
                max_identical: args.max_identical.unwrap_or(d.max_identical),
                max_disagreement: args.max_disagreement.unwrap_or(d.max_disagreement),
                min_alpha: args.min_alpha.unwrap_or(d.min_alpha),
                min_annotators: args.min_annotators.unwrap_or(d.min_annotators),
                ..d
            })
        }
        Preset::VtonQbenchCode => {
            let other = given(&[
                ("max-sanity-failures", args.max_sanity_failures.is_some()),
                ("max-identical", args.max_identical.is_some()),
                ("max-disagreement", args.max_disagreement.is_some()),
            ]);
            anyhow::ensure!(
                other.is_empty(),
                "--{} applies to the paper preset only, not to --preset vton-qbench-code \
                 (its rules: --max-run-share, --min-variance, --troll-*, --min-annotators, --min-alpha)",
                other.join(", --")
            );
            share("max-run-share", args.max_run_share)?;
            share("troll-share", args.troll_share)?;
            share("troll-majority-share", args.troll_majority_share)?;
            let d = CodeThresholds::default();
            let code = CodeThresholds {
                seed: args.seed.unwrap_or(d.seed),
                min_alpha: args.min_alpha,
                min_responses: args.min_annotators.unwrap_or(d.min_responses),
                max_run_share: args.max_run_share.unwrap_or(d.max_run_share),
                min_variance: args.min_variance.unwrap_or(d.min_variance),
                troll_share: args.troll_share.unwrap_or(d.troll_share),
                troll_majority_share: args.troll_majority_share.unwrap_or(d.troll_majority_share),
                troll_min_tasks: args.troll_min_tasks.unwrap_or(d.troll_min_tasks),
                ..d
            };
            Ok(Thresholds { preset: Preset::VtonQbenchCode, code, ..Thresholds::default() })
        }
    }
}

/// `vton curate`: curation on files.
fn curate_files(args: &CurateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut sanity = SanityTasks::new();
    if let Some(path) = &args.sanity {
        let mut file = CsvFile::open(path)?;
        let mut rows = Vec::new();
        file.for_each_with_optional(&["task", "expected"], &["tolerance"], |line, f| {
            rows.push((line, f[0].to_owned(), f[1].to_owned(), f[2].to_owned()));
            Ok(())
        })?;
        for (line, task, expected, tolerance) in rows {
            let expected = rating(&file, line, "expected", &expected)?;
            let tolerance =
                match tolerance.as_str() {
                    "" => 0,
                    t => t.parse::<u8>().ok().filter(|t| *t <= 2).ok_or_else(|| {
                        file.line_error(line, format!("tolerance: `{t}` is not a tolerance (0, 1 or 2)"))
                    })?,
                };
            if sanity.insert(task.clone(), SanityTask { expected, tolerance }).is_some() {
                return Err(file.line_error(line, format!("task `{task}` is listed twice")).into());
            }
        }
    }
    let mut file = CsvFile::open(&args.answers)?;
    let mut rows = Vec::new();
    file.for_each_with_optional(&["questionnaire", "annotator", "task", "rating"], &["position"], |line, f| {
        rows.push((line, [f[0].to_owned(), f[1].to_owned(), f[2].to_owned(), f[3].to_owned(), f[4].to_owned()]));
        Ok(())
    })?;
    let mut seen: HashMap<(String, String, String), u64> = HashMap::new();
    let mut answers = Vec::with_capacity(rows.len());
    for (line, [q, a, task, r, position]) in rows {
        let rating = rating(&file, line, "rating", &r)?;
        for (name, value) in [("questionnaire", &q), ("annotator", &a), ("task", &task)] {
            if value.is_empty() {
                return Err(file.line_error(line, format!("{name} is empty")).into());
            }
        }
        let position = match position.as_str() {
            "" => None,
            p => Some(
                p.parse::<u32>()
                    .ok()
                    .filter(|p| *p > 0)
                    .ok_or_else(|| file.line_error(line, format!("position: `{p}` is not a position (1, 2, ...)")))?,
            ),
        };
        if let Some(first) = seen.insert((q.clone(), a.clone(), task.clone()), line) {
            return Err(file
                .line_error(
                    line,
                    format!("annotator `{a}` rated task `{task}` in questionnaire `{q}` already on line {first}"),
                )
                .into());
        }
        answers.push(Answer { questionnaire: q.into(), annotator: a.into(), task: task.into(), rating, position });
    }
    let thresholds = thresholds(args)?;
    let result = curate(&answers, &sanity, &thresholds);
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&result)?)?;
        return Ok(());
    }
    let removed =
        |rule: &str| result.annotators.iter().filter(|a| a.excluded_by.map(|r| r.name()) == Some(rule)).count();
    let show = |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.3}"));
    writeln!(out, "annotator-questionnaire pairs: {}", result.annotators.len())?;
    let rules: &[&str] = match args.preset {
        Preset::Paper => &["sanity", "identical", "disagreement"],
        Preset::VtonQbenchCode => &["run", "variance", "sanity", "troll"],
    };
    for rule in rules {
        writeln!(out, "  removed by {rule}: {}", removed(rule))?;
    }
    let kept = result.questionnaires.iter().filter(|q| q.kept).count();
    writeln!(out, "questionnaires kept: {kept} of {}", result.questionnaires.len())?;
    writeln!(
        out,
        "mean alpha: before {}, after annotator rules {}, kept questionnaires {}",
        show(result.alpha_mean_before),
        show(result.alpha_mean_after),
        show(result.alpha_mean_kept)
    )?;
    writeln!(out, "tasks scored: {} (use --json for the full result)", result.scores.len())?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_released_attention_specs_are_named() {
        let v2 = attention("v2").expect("v2");
        assert_eq!(v2.keys().copied().collect::<Vec<_>>(), vec![5, 15, 25, 35, 45]);
        assert!(v2.values().all(|s| s.expected == 1));
        assert_eq!((v2[&25].tolerance, v2[&35].tolerance, v2[&45].tolerance), (0, 1, 1));
        let v1 = attention("v1").expect("v1");
        assert_eq!(v1.keys().copied().collect::<Vec<_>>(), vec![5, 25, 35, 45], "v1 skips 15");
        assert!(attention("v3").is_err());
    }
}
