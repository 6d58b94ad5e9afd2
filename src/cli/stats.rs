//! `atelier stats ...`: the statistics core on researchers' own files.

use crate::input::{CsvFile, InputError};
use crate::stats::aggregate::{majority_vote, TieRule};
use crate::stats::alpha::{alpha, Level, ReliabilityData};
use crate::stats::dawid_skene::{dawid_skene, Label};
use clap::{Args, Subcommand, ValueEnum};
use rustc_hash::FxHashMap;
use std::collections::HashMap;
use std::io::Write;
use std::path::PathBuf;

/// The `stats` subcommands.
#[derive(Debug, Subcommand)]
pub enum StatsCommand {
    /// Krippendorff's alpha of a reliability data file.
    Alpha(AlphaArgs),
    /// One label per item from several annotators' labels.
    Aggregate(AggregateArgs),
    /// HR@k, MRR@k, ROC-AUC and PR-AUC of a model's scores against VSD ground truth.
    Retrieval(RetrievalArgs),
}

/// Arguments of `stats alpha`.
#[derive(Debug, Args)]
pub struct AlphaArgs {
    /// Level of measurement.
    #[arg(long, value_enum)]
    pub level: LevelArg,
    /// wide: a line per unit, a field per coder; long: lines `unit,coder,value`.
    #[arg(long, value_enum, default_value_t = Format::Wide)]
    pub format: Format,
    /// Print a JSON object instead of the bare number.
    #[arg(long)]
    pub json: bool,
    /// The CSV file.
    pub file: PathBuf,
}

/// Level of measurement on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum LevelArg {
    /// Unordered categories.
    Nominal,
    /// Ordered categories.
    Ordinal,
    /// Interval scale.
    Interval,
    /// Ratio scale.
    Ratio,
}

impl From<LevelArg> for Level {
    fn from(l: LevelArg) -> Self {
        match l {
            LevelArg::Nominal => Level::Nominal,
            LevelArg::Ordinal => Level::Ordinal,
            LevelArg::Interval => Level::Interval,
            LevelArg::Ratio => Level::Ratio,
        }
    }
}

/// Layout of a reliability data file.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum Format {
    /// One line per unit, one field per coder, no header.
    Wide,
    /// Lines `unit,coder,value`, optional header.
    Long,
}

/// Arguments of `stats aggregate`.
#[derive(Debug, Args)]
pub struct AggregateArgs {
    /// Aggregation method.
    #[arg(long, value_enum, default_value_t = Method::Majority)]
    pub method: Method,
    /// Tie rule for majority vote.
    #[arg(long, value_enum, default_value_t = TiesArg::None)]
    pub ties: TiesArg,
    /// CSV with header `item,annotator,label`.
    pub file: PathBuf,
}

/// Aggregation method.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum Method {
    /// Most frequent label.
    Majority,
    /// Dawid-Skene expectation-maximisation.
    DawidSkene,
}

/// Tie rule on the command line.
#[derive(Debug, Clone, Copy, ValueEnum)]
pub enum TiesArg {
    /// Pick 0/false/no when tied.
    Negative,
    /// Pick the smallest tied value.
    Low,
    /// Leave the label empty.
    None,
}

impl From<TiesArg> for TieRule {
    fn from(t: TiesArg) -> Self {
        match t {
            TiesArg::Negative => TieRule::Negative,
            TiesArg::Low => TieRule::Low,
            TiesArg::None => TieRule::None,
        }
    }
}

/// Arguments of `stats retrieval`.
#[derive(Debug, Args)]
pub struct RetrievalArgs {
    /// Ground truth in the VSD format `[{"key": [query, candidate], "value": 0|1}]`.
    #[arg(long)]
    pub gt: PathBuf,
    /// CSV with header `query,candidate,score` (higher = more similar).
    #[arg(long)]
    pub scores: PathBuf,
    /// Cut-offs for HR@k and MRR@k, comma-separated.
    #[arg(long, value_delimiter = ',', default_values_t = vec![5usize, 9],
          value_parser = clap::builder::RangedU64ValueParser::<usize>::new().range(1..))]
    pub k: Vec<usize>,
    /// A regex whose one capture group is an image's product id: a model's
    /// top k then holds one image per product other than the query's (the
    /// official evaluation's filter, as the service's campaign setting).
    #[arg(long)]
    pub same_product: Option<String>,
    /// Print JSON.
    #[arg(long)]
    pub json: bool,
}

/// Runs a `stats` subcommand, writing its result to `out`.
pub fn run(cmd: &StatsCommand, out: &mut dyn Write) -> anyhow::Result<()> {
    match cmd {
        StatsCommand::Alpha(a) => run_alpha(a, out),
        StatsCommand::Aggregate(a) => run_aggregate(a, out),
        StatsCommand::Retrieval(a) => run_retrieval(a, out),
    }
}

/// Reliability data read from a file, with the counts the JSON output reports.
struct AlphaInput {
    data: ReliabilityData,
    units: usize,
    coders: usize,
}

fn run_alpha(args: &AlphaArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let level = Level::from(args.level);
    let input = match args.format {
        Format::Wide => read_wide(&args.file, level)?,
        Format::Long => read_long(&args.file, level)?,
    };
    let report = alpha(&input.data, level);
    if args.json {
        let json = serde_json::json!({
            "alpha": report.alpha.ok(),
            "level": level.name(),
            "units": input.units,
            "pairable_units": report.pairable_units,
            "pairable_values": report.pairable_values,
            "coders": input.coders,
            "undefined_reason": report.alpha.err().map(|e| e.to_string()),
        });
        writeln!(out, "{json}")?;
    } else {
        match report.alpha {
            Ok(a) => writeln!(out, "{a}")?,
            Err(e) => writeln!(out, "undefined ({e})")?,
        }
    }
    Ok(())
}

fn read_wide(path: &std::path::Path, level: Level) -> Result<AlphaInput, InputError> {
    let mut file = CsvFile::open(path)?;
    let mut width: Option<(usize, u64)> = None;
    let mut rows: Vec<(u64, Vec<String>)> = Vec::new();
    let mut ragged = None;
    file.for_each(|line, record| {
        match width {
            None => width = Some((record.len(), line)),
            Some((w, first)) if w != record.len() && ragged.is_none() => {
                ragged = Some((
                    line,
                    format!("has {} fields but line {first} has {w} (one field per coder on every line)", record.len()),
                ));
            }
            _ => {}
        }
        rows.push((line, record.iter().map(|f| String::from_utf8_lossy(f).trim().to_owned()).collect()));
        Ok(())
    })?;
    if let Some((line, msg)) = ragged {
        return Err(file.line_error(line, msg));
    }
    let coders = width.map_or(0, |(w, _)| w);
    let units = rows.len();
    let present = |row: &Vec<String>| row.iter().filter(|f| !f.is_empty()).cloned().collect::<Vec<_>>();
    if level == Level::Nominal && rows.iter().flat_map(|(_, r)| r).any(|f| !f.is_empty() && f.parse::<f64>().is_err()) {
        let data = ReliabilityData::from_labels(rows.iter().map(|(_, r)| present(r)));
        return Ok(AlphaInput { data, units, coders });
    }
    let mut numbers = Vec::with_capacity(rows.len());
    for (line, row) in &rows {
        let mut unit = Vec::with_capacity(row.len());
        for (c, f) in row.iter().enumerate().filter(|(_, f)| !f.is_empty()) {
            match f.parse::<f64>() {
                Ok(v) if v.is_finite() => unit.push(v),
                _ => {
                    return Err(file.line_error(
                        *line,
                        format!(
                            "field {} (coder {}): `{f}` is not a number (required for {} data)",
                            c + 1,
                            c + 1,
                            level.name()
                        ),
                    ))
                }
            }
        }
        numbers.push(unit);
    }
    Ok(AlphaInput { data: ReliabilityData::from_units(numbers), units, coders })
}

/// Interns byte strings as dense ids; looks up before allocating because
/// most lines repeat a unit, coder or value already seen.
#[derive(Default)]
struct Interner {
    ids: FxHashMap<Box<[u8]>, u32>,
}

impl Interner {
    fn id(&mut self, key: &[u8]) -> u32 {
        if let Some(&id) = self.ids.get(key) {
            return id;
        }
        let id = self.ids.len() as u32;
        self.ids.insert(key.into(), id);
        id
    }

    fn len(&self) -> usize {
        self.ids.len()
    }
}

fn read_long(path: &std::path::Path, level: Level) -> Result<AlphaInput, InputError> {
    let mut file = CsvFile::open(path)?;
    let (mut units, mut coders, mut values) = (Interner::default(), Interner::default(), Interner::default());
    // Per unit: (coder, value id, line) of each rating.
    let mut ratings: Vec<Vec<(u32, u32, u64)>> = Vec::new();
    // First line on which each distinct value occurs, for error messages.
    let mut value_lines: Vec<u64> = Vec::new();
    let mut first = true;
    let mut last_unit: Option<(Vec<u8>, usize)> = None;
    let mut problem: Option<(u64, String)> = None;
    file.for_each(|line, record| {
        if problem.is_some() {
            return Ok(());
        }
        if record.len() != 3 {
            problem = Some((line, format!("expected 3 fields `unit,coder,value`, found {}", record.len())));
            return Ok(());
        }
        if std::mem::take(&mut first)
            && record[0].eq_ignore_ascii_case(b"unit")
            && record[1].eq_ignore_ascii_case(b"coder")
        {
            return Ok(());
        }
        // Crowd exports are usually grouped by unit: skip the lookup on a repeat.
        let u = match &last_unit {
            Some((key, id)) if **key == record[0] => *id,
            _ => {
                let id = units.id(&record[0]) as usize;
                last_unit = Some((record[0].to_vec(), id));
                id
            }
        };
        let c = coders.id(&record[1]);
        if u == ratings.len() {
            ratings.push(Vec::new());
        }
        if let Some(&(_, _, earlier)) = ratings[u].iter().find(|r| r.0 == c) {
            let (unit, coder) = (String::from_utf8_lossy(&record[0]), String::from_utf8_lossy(&record[1]));
            problem = Some((line, format!("unit `{unit}` and coder `{coder}` were already given on line {earlier}")));
            return Ok(());
        }
        let raw = record[2].trim_ascii();
        if raw.is_empty() {
            return Ok(());
        }
        let v = values.id(raw);
        if v as usize == value_lines.len() {
            value_lines.push(line);
        }
        ratings[u].push((c, v, line));
        Ok(())
    })?;
    if let Some((line, msg)) = problem {
        return Err(file.line_error(line, msg));
    }
    // Decide what each distinct value means, then code the units by rank.
    let mut distinct: Vec<(Box<[u8]>, u32)> = values.ids.into_iter().collect();
    distinct.sort_by_key(|(_, id)| *id);
    let parsed: Vec<Option<f64>> = distinct
        .iter()
        .map(|(raw, _)| std::str::from_utf8(raw).ok().and_then(|t| t.parse::<f64>().ok()).filter(|v| v.is_finite()))
        .collect();
    let numbers: Vec<f64> = if parsed.iter().all(Option::is_some) {
        parsed.iter().flatten().copied().collect()
    } else if level == Level::Nominal {
        (0..parsed.len()).map(|i| i as f64).collect()
    } else {
        let (i, _) = parsed
            .iter()
            .enumerate()
            .filter(|(_, p)| p.is_none())
            .min_by_key(|(i, _)| value_lines[*i])
            .unwrap_or((0, &None));
        let text = String::from_utf8_lossy(&distinct[i].0);
        return Err(file.line_error(
            value_lines[i],
            format!("value: `{text}` is not a number (required for {} data)", level.name()),
        ));
    };
    let mut sorted = numbers.clone();
    sorted.sort_by(f64::total_cmp);
    sorted.dedup();
    let code_of: Vec<u32> = numbers.iter().map(|v| sorted.partition_point(|x| x < v) as u32).collect();
    let coded: Vec<Vec<u32>> =
        ratings.iter().map(|u| u.iter().map(|&(_, v, _)| code_of[v as usize]).collect()).collect();
    let data =
        ReliabilityData::from_codes(sorted, &coded).ok_or_else(|| file.file_error("values could not be coded"))?;
    Ok(AlphaInput { data, units: units.len(), coders: coders.len() })
}

fn run_aggregate(args: &AggregateArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let mut file = CsvFile::open(&args.file)?;
    let mut items: Vec<String> = Vec::new();
    let mut item_index: HashMap<String, usize> = HashMap::new();
    let mut labels_by_item: Vec<Vec<(String, String)>> = Vec::new();
    let mut seen: HashMap<(String, String), u64> = HashMap::new();
    let mut duplicate = None;
    file.for_each_with_header(&["item", "annotator", "label"], |line, f| {
        if let Some(earlier) = seen.insert((f[0].to_owned(), f[1].to_owned()), line) {
            duplicate.get_or_insert((
                line,
                format!("item `{}` was already labelled by annotator `{}` on line {earlier}", f[0], f[1]),
            ));
        }
        let idx = *item_index.entry(f[0].to_owned()).or_insert_with(|| {
            items.push(f[0].to_owned());
            labels_by_item.push(Vec::new());
            items.len() - 1
        });
        labels_by_item[idx].push((f[1].to_owned(), f[2].to_owned()));
        Ok(())
    })?;
    if let Some((line, msg)) = duplicate {
        return Err(file.line_error(line, msg).into());
    }
    let mut w = csv::Writer::from_writer(out);
    w.write_record(["item", "label", "confidence"])?;
    match args.method {
        Method::Majority => {
            for (item, labels) in items.iter().zip(&labels_by_item) {
                let values: Vec<&str> = labels.iter().map(|(_, l)| l.as_str()).collect();
                if let Some(v) = majority_vote(&values, args.ties.into()) {
                    w.write_record([item.as_str(), v.label.as_deref().unwrap_or(""), &v.share.to_string()])?;
                }
            }
        }
        Method::DawidSkene => {
            let mut classes: Vec<String> = labels_by_item.iter().flatten().map(|(_, l)| l.clone()).collect();
            classes.sort();
            classes.dedup();
            let class_index: HashMap<&str, usize> = classes.iter().enumerate().map(|(i, c)| (c.as_str(), i)).collect();
            let mut annotators: HashMap<&str, usize> = HashMap::new();
            let mut labels = Vec::new();
            for (item, list) in labels_by_item.iter().enumerate() {
                for (a, l) in list {
                    let next = annotators.len();
                    let annotator = *annotators.entry(a.as_str()).or_insert(next);
                    labels.push(Label { item, annotator, class: class_index[l.as_str()] });
                }
            }
            let model = dawid_skene(&labels, items.len(), annotators.len(), classes.len(), 200);
            for (i, item) in items.iter().enumerate() {
                if let Some((c, p)) = model.decide(i) {
                    w.write_record([item.as_str(), classes[c].as_str(), &p.to_string()])?;
                }
            }
        }
    }
    w.flush()?;
    Ok(())
}

fn run_retrieval(args: &RetrievalArgs, out: &mut dyn Write) -> anyhow::Result<()> {
    let truth = crate::input::retrieval::read_ground_truth(&args.gt)?;
    let scores = crate::input::retrieval::read_scores(&args.scores)?;
    let scores = crate::stats::retrieval::oriented_scores(&truth, &scores);
    let products = match &args.same_product {
        None => None,
        Some(re) => {
            Some(crate::stats::retrieval::product_pattern(re).map_err(|m| anyhow::anyhow!("--same-product: {m}"))?)
        }
    };
    let r = crate::stats::retrieval::retrieval_metrics_with(&truth, &scores, &args.k, products.as_ref());
    if args.json {
        let keyed = |m: &std::collections::BTreeMap<usize, f64>| -> serde_json::Map<String, serde_json::Value> {
            m.iter().map(|(k, v)| (k.to_string(), serde_json::json!(v))).collect()
        };
        let json = serde_json::json!({
            "roc_auc_micro": r.roc_auc_micro,
            "roc_auc_macro": r.roc_auc_macro,
            "pr_auc_micro": r.pr_auc_micro,
            "pr_auc_macro": r.pr_auc_macro,
            "hr": keyed(&r.hr),
            "mrr": keyed(&r.mrr),
            "queries": r.queries,
            "pairs": r.pairs,
            "unscored_pairs": r.unscored_pairs,
        });
        writeln!(out, "{json}")?;
    } else {
        let show = |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.6}"));
        writeln!(out, "queries\t{}\npairs\t{}", r.queries, r.pairs)?;
        writeln!(out, "roc_auc_micro\t{}\nroc_auc_macro\t{}", show(r.roc_auc_micro), show(r.roc_auc_macro))?;
        writeln!(out, "pr_auc_micro\t{}\npr_auc_macro\t{}", show(r.pr_auc_micro), show(r.pr_auc_macro))?;
        for (k, v) in &r.hr {
            writeln!(out, "hr@{k}\t{v:.6}")?;
        }
        for (k, v) in &r.mrr {
            writeln!(out, "mrr@{k}\t{v:.6}")?;
        }
    }
    Ok(())
}
