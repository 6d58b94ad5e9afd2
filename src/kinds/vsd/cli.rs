//! `atelier vsd ...`: EDS on files, offline (no database), and importing
//! rankings into a campaign.

use super::eds::{self, Sample, Suspects};
use super::files;
use super::robustness::robustness;
use crate::input::InputError;
use clap::{Args, Subcommand};
use std::collections::BTreeMap;
use std::io::Write;
use std::path::PathBuf;

/// The `vsd` subcommands.
#[derive(Debug, Subcommand)]
pub enum VsdCommand {
    /// The suspects S_k of some model rankings: the union of every model's top k
    /// as ordered (query, candidate) pairs (the query itself, and with --same-product
    /// all but the first image of each product, left out first), with provenance and overlap.
    Suspects(SuspectsArgs),
    /// p_k, p_LB, p-hat and the discovery speed-up from expert labels.
    Estimate(EstimateArgs),
    /// Leave-one-model-out robustness of scored models' ROC-AUCs.
    Robustness(RobustnessArgs),
    /// Import model rankings into a VSD campaign (streams files of millions of rows).
    ImportRankings(ImportArgs),
}

/// Which rankings and cut-off.
#[derive(Debug, Args)]
pub struct RankingArgs {
    /// CSV with header `model,query,candidate,rank` (rank zero-based; an optional `score` column is allowed).
    #[arg(long)]
    pub rankings: PathBuf,
    /// Each model's top k become suspects.
    #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
    pub k: u32,
    /// A regex with one capture group extracting the product id from an image
    /// id; pairs of the same product are left out.
    #[arg(long)]
    pub same_product: Option<String>,
}

/// Arguments of `vsd suspects`.
#[derive(Debug, Args)]
pub struct SuspectsArgs {
    /// Rankings and k.
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `vsd estimate`.
#[derive(Debug, Args)]
pub struct EstimateArgs {
    /// Rankings and k.
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// CSV with header `query,candidate,expert,label` (label 1, 0 or unsure).
    #[arg(long)]
    pub labels: PathBuf,
    /// |Q|: the number of queries.
    #[arg(long)]
    pub queries: u64,
    /// |D|: the number of catalog images.
    #[arg(long)]
    pub catalog: u64,
    /// Queries are not catalog images ("in the wild"): |A| = |Q| x |D|.
    #[arg(long)]
    pub wild: bool,
    /// A labelled random sample of pairs drawn uniformly from A, suspects included (same columns as `--labels`).
    #[arg(long)]
    pub sample: Option<PathBuf>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `vsd robustness`.
#[derive(Debug, Args)]
pub struct RobustnessArgs {
    /// Rankings and k.
    #[command(flatten)]
    pub ranking: RankingArgs,
    /// The ground truth `[{"key": [query, candidate], "value": 0|1}]`.
    #[arg(long)]
    pub ground_truth: PathBuf,
    /// A scored model: `NAME=SCORES.csv` (header `query,candidate,score`); repeat for each model.
    #[arg(long = "scores", value_parser = parse_scores_arg)]
    pub scores: Vec<(String, PathBuf)>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Arguments of `vsd import-rankings`.
#[derive(Debug, Args)]
pub struct ImportArgs {
    /// The VSD campaign.
    #[arg(long)]
    pub campaign: uuid::Uuid,
    /// Database location.
    #[command(flatten)]
    pub db: crate::db::DatabaseArgs,
    /// CSV with header `model,query,candidate,rank[,score]`, or JSON lines with those fields.
    pub file: PathBuf,
}

fn parse_scores_arg(text: &str) -> Result<(String, PathBuf), String> {
    let (name, path) = text.split_once('=').ok_or_else(|| format!("`{text}`: expected NAME=SCORES.csv"))?;
    if name.trim().is_empty() || path.trim().is_empty() {
        return Err(format!("`{text}`: expected NAME=SCORES.csv"));
    }
    Ok((name.trim().to_owned(), PathBuf::from(path.trim())))
}

/// The `vsd` command: help and subcommands.
pub fn command() -> clap::Command {
    crate::kinds::KindCli::command::<VsdCommand>(
        "vsd",
        "VSD tools: suspects, estimates and robustness on files; importing rankings",
    )
}

/// Runs the `vsd` subcommand in `matches` (those of [`command`]).
pub fn run_matches<'a>(
    matches: &clap::ArgMatches,
    out: &'a mut dyn Write,
) -> futures_util::future::LocalBoxFuture<'a, anyhow::Result<()>> {
    let cmd = crate::kinds::KindCli::parse::<VsdCommand>(matches);
    Box::pin(async move { run(cmd?, out).await })
}

/// Runs a `vsd` subcommand.
pub async fn run(cmd: VsdCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        VsdCommand::Suspects(args) => {
            let s = suspects(&args.ranking)?;
            if args.json {
                writeln!(out, "{}", serde_json::to_string(&s)?)?;
            } else {
                writeln!(out, "k\t{}\nmodels\t{}\nqueries\t{}", s.k, s.models.join(","), s.queries)?;
                writeln!(out, "suspects\t{}\nupper_bound\t{}", s.suspects, s.upper_bound)?;
                for (m, n) in &s.per_model {
                    writeln!(out, "per_model\t{m}\t{n}")?;
                }
            }
            Ok(())
        }
        VsdCommand::Estimate(args) => estimate(&args, out),
        VsdCommand::Robustness(args) => run_robustness(&args, out),
        VsdCommand::ImportRankings(args) => super::import::import_file(&args, out).await,
    }
}

fn suspects(args: &RankingArgs) -> anyhow::Result<Suspects> {
    let same_product = match &args.same_product {
        None => None,
        Some(re) => {
            Some(crate::stats::retrieval::product_pattern(re).map_err(|m| anyhow::anyhow!("--same-product: {m}"))?)
        }
    };
    let rankings = files::read_rankings(&args.rankings)?;
    Ok(eds::suspects(&rankings, args.k, same_product.as_ref()))
}

fn estimate(args: &EstimateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let s = suspects(&args.ranking)?;
    let votes = files::read_votes(&args.labels)?;
    let labels = eds::labels(&votes);
    let sample = match &args.sample {
        None => None,
        Some(path) => {
            let sampled = eds::labels(&files::read_votes(path)?);
            let labelled: Vec<bool> = sampled.values().filter_map(|l| *l).collect();
            Some(Sample { b: labelled.len(), a: labelled.iter().filter(|l| **l).count() })
        }
    };
    let suspect_votes: BTreeMap<eds::Pair, Vec<eds::Vote>> = s
        .pairs
        .iter()
        .filter_map(|p| {
            let pair = eds::Pair::new(&p.query, &p.candidate)?;
            votes.get(&pair).map(|v| (pair, v.clone()))
        })
        .collect();
    let alpha = eds::votes_alpha(&suspect_votes);
    // |Q| and |D| come from the user; rankings that do not fit them would
    // give estimates of nothing (p_lb over zero pairs, or above one).
    if (args.queries as usize) < s.queries {
        anyhow::bail!("--queries: {} is fewer than the {} distinct queries in the rankings", args.queries, s.queries);
    }
    let total = eds::pairs_total(args.queries, args.catalog, args.wild);
    if total < s.suspects as u64 {
        anyhow::bail!(
            "--catalog: {} queries and {} catalog images{} make {total} possible pairs, fewer than the {} suspects",
            args.queries,
            args.catalog,
            if args.wild { " (in the wild)" } else { "" },
            s.suspects
        );
    }
    let e = eds::estimate(&s, &labels, total, sample, alpha);
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&e)?)?;
    } else {
        let show = |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.6}"));
        writeln!(out, "suspects\t{}\nlabelled\t{}\npositives\t{}", e.suspects, e.labelled, e.positives)?;
        writeln!(out, "p_k\t{}\np_lb\t{:.8}\np_hat\t{:.8}", show(e.p_k), e.p_lb, e.p_hat)?;
        writeln!(out, "speedup\t{}\nalpha\t{}", show(e.speedup), show(e.alpha))?;
    }
    Ok(())
}

fn run_robustness(args: &RobustnessArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    if args.scores.is_empty() {
        anyhow::bail!("--scores: give at least one NAME=SCORES.csv");
    }
    let s = suspects(&args.ranking)?;
    let gt = files::read_ground_truth(&args.ground_truth)?;
    let mut scores: BTreeMap<String, Vec<crate::stats::retrieval::ScoredPair>> = BTreeMap::new();
    for (name, path) in &args.scores {
        if scores.insert(name.clone(), files::read_scores(path)?).is_some() {
            return Err(InputError::File { path: path.clone(), message: format!("model `{name}` given twice") }.into());
        }
    }
    let r = robustness(&s, &gt, &scores);
    if args.json {
        writeln!(out, "{}", serde_json::to_string(&r)?)?;
    } else {
        let show = |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.4}"));
        for lo in &r.leave_out {
            writeln!(
                out,
                "without {}\tpairs {}\tspearman micro {} (p {})\tmacro {} (p {})",
                lo.removed,
                lo.pairs,
                show(lo.spearman_micro),
                show(lo.p_value_micro),
                show(lo.spearman_macro),
                show(lo.p_value_macro)
            )?;
        }
    }
    Ok(())
}
