//! The `vton-qbench-code` curation preset: the rules of the released
//! VTON-QBench code (`util/curation.py`, `load_reward_dataset_as_df` as its
//! `dataset.py` calls it), which differ from the paper's text.
//!
//! The released code reads one table per form (questionnaire): a row per
//! response, a column per position, attention positions included. So does
//! this preset, and every rule reads all columns:
//! 1. a response is excluded when its longest run of identical consecutive
//!    answers, divided by the number of columns, exceeds `max_run_share`
//!    (`run`; a missing answer breaks a run), when the *sample* variance
//!    (ddof = 1, pandas' `DataFrame.var`) of its ratings is below
//!    `min_variance` (`variance`), or when an attention column is missing
//!    or off by more than its tolerance (`sanity`);
//! 2. among the responses left, a troll answers the opposite extreme (1
//!    against 3, or 3 against 1) of the others' majority in at least
//!    `troll_share` of the columns where that majority holds at least
//!    `troll_majority_share` of the others, with at least `troll_min_tasks`
//!    such columns (`troll`);
//! 3. forms with fewer than `min_responses` responses left are dropped;
//! 4. only when `min_alpha` is set (the released pipeline leaves it unset):
//!    forms whose bootstrapped ordinal alpha (mean over `bootstrap_draws`
//!    draws of `bootstrap_size` responses without replacement, over all
//!    columns) is below it are dropped. The alpha is reported either way.
//!
//! The released bootstrap is unseeded numpy; here each form's draws are
//! seeded from the recorded `seed` and the form's name as exported
//! (`form_id`), so a release re-imported from its files reproduces its
//! alphas. Only the deterministic outputs (verdicts, kept forms, rewards
//! without an alpha filter) can match the released code exactly.

use super::curation::{
    questionnaire_alpha_of_rows, run, Answer, Curation, Decision, Rule, SanityTask, SanityTasks, Thresholds,
};
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use sha2::{Digest, Sha256};
use std::collections::{BTreeMap, HashMap};

/// Thresholds of the released code's rules (defaults as released).
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct CodeThresholds {
    /// Bootstrap draws averaged into a form's alpha.
    pub bootstrap_draws: usize,
    /// Responses drawn (without replacement) per bootstrap draw.
    pub bootstrap_size: usize,
    /// A response whose longest identical run covers more than this share of the columns is excluded.
    pub max_run_share: f64,
    /// Forms whose bootstrapped alpha is below this are dropped; `None`
    /// (the released pipeline's `min_alpha=None`) applies no alpha filter.
    pub min_alpha: Option<f64>,
    /// Forms with fewer responses left are dropped.
    pub min_responses: usize,
    /// A response whose rating variance (ddof = 1) is below this is excluded.
    pub min_variance: f64,
    /// Seed of the bootstrap (recorded with the result).
    pub seed: u64,
    /// The others' majority must hold at least this share for a column to test trolling.
    pub troll_majority_share: f64,
    /// Trolling is judged only with at least this many such columns.
    pub troll_min_tasks: usize,
    /// A troll answers the opposite extreme in at least this share of them.
    pub troll_share: f64,
}

impl Default for CodeThresholds {
    fn default() -> Self {
        Self {
            max_run_share: 0.8,
            min_variance: 0.30,
            troll_majority_share: 0.60,
            troll_min_tasks: 10,
            troll_share: 0.20,
            min_responses: 3,
            min_alpha: None,
            bootstrap_size: 3,
            bootstrap_draws: 10,
            seed: 0,
        }
    }
}

/// The released code's curation, the bootstrap of each questionnaire seeded by its name in
/// `names` (its exported `form_id`), else by its id.
pub fn curate_named(answers: &[Answer], sanity: &SanityTasks, t: &Thresholds, names: &HashMap<&str, &str>) -> Curation {
    let c = &t.code;
    let tables = tables(answers, sanity);
    run(answers, sanity, |q, _| {
        let Some(table) = tables.get(q) else {
            return Decision { verdicts: Vec::new(), alpha_after: None, keep: false };
        };
        let mut verdicts: BTreeMap<&str, Option<Rule>> = BTreeMap::new();
        for (&a, row) in &table.rows {
            verdicts.insert(a, response_rule(row, &table.attention, c));
        }
        let remaining: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        for a in trolls(&table.rows, &remaining, c) {
            verdicts.insert(a, Some(Rule::Troll));
        }
        let kept: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        let name = names.get(q).copied().unwrap_or(q);
        let alpha_after = bootstrapped_alpha(&table.rows, &kept, c, form_seed(c.seed, name));
        let keep = kept.len() >= c.min_responses
            && c.min_alpha.is_none_or(|min| alpha_after.is_some_and(|alpha| alpha >= min));
        Decision { verdicts: verdicts.into_iter().collect(), alpha_after, keep }
    })
}

/// The seed of one form's bootstrap: the first eight bytes of
/// SHA-256(recorded seed, little-endian ‖ form name). Stable across
/// versions and platforms, and independent of the other forms.
pub fn form_seed(seed: u64, name: &str) -> u64 {
    let digest = Sha256::new().chain_update(seed.to_le_bytes()).chain_update(name.as_bytes()).finalize();
    let mut first = [0u8; 8];
    first.copy_from_slice(&digest[..8]);
    u64::from_le_bytes(first)
}

/// One response's row: a rating (1-3) or nothing per column.
type Row = Vec<Option<u8>>;

/// One form as the released code's table holds it.
struct Table<'a> {
    /// Per response, its row.
    rows: BTreeMap<&'a str, Row>,
    /// The attention columns and what passes there.
    attention: Vec<(usize, SanityTask)>,
}

/// Where an answer sits in its form's table: its position when known,
/// else after every position, in the order the task first appears.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
enum Column {
    Position(u32),
    Unplaced(usize),
}

/// Every form's table. Placed answers fill the columns 1..=W, W the largest
/// position in the input (the width of the exported `answers.csv`), so a
/// shorter form has empty columns as it has in that file.
fn tables<'a>(answers: &'a [Answer], sanity: &SanityTasks) -> HashMap<&'a str, Table<'a>> {
    let width = answers.iter().filter_map(|a| a.position).max().unwrap_or(0);
    let mut first_seen: HashMap<(&str, &str), usize> = HashMap::new();
    let mut cells: HashMap<&str, Vec<(Column, &str, &str, u8)>> = HashMap::new();
    for (i, a) in answers.iter().enumerate() {
        let column = match a.position {
            Some(p) => Column::Position(p),
            None => Column::Unplaced(*first_seen.entry((&a.questionnaire, &a.task)).or_insert(i)),
        };
        cells.entry(&a.questionnaire).or_default().push((column, &a.annotator, &a.task, a.rating));
    }
    cells
        .into_iter()
        .map(|(q, cells)| {
            let mut columns: Vec<Column> = (1..=width).map(Column::Position).collect();
            let mut unplaced: Vec<Column> =
                cells.iter().filter(|c| matches!(c.0, Column::Unplaced(_))).map(|c| c.0).collect();
            unplaced.sort_unstable();
            unplaced.dedup();
            columns.extend(unplaced);
            let index: HashMap<Column, usize> = columns.iter().enumerate().map(|(i, c)| (*c, i)).collect();
            let mut rows: BTreeMap<&str, Row> = BTreeMap::new();
            let mut attention: BTreeMap<usize, SanityTask> = BTreeMap::new();
            for (column, annotator, task, rating) in cells {
                let Some(&i) = index.get(&column) else { continue };
                // A later answer at the same place wins, as in the export.
                rows.entry(annotator).or_insert_with(|| vec![None; columns.len()])[i] = Some(rating);
                if let Some(s) = sanity.get(task) {
                    attention.insert(i, *s);
                }
            }
            (q, Table { rows, attention: attention.into_iter().collect() })
        })
        .collect()
}

/// The first response rule a row breaks, if any.
fn response_rule(row: &[Option<u8>], attention: &[(usize, SanityTask)], c: &CodeThresholds) -> Option<Rule> {
    if longest_run(row) as f64 / row.len() as f64 > c.max_run_share {
        Some(Rule::Run)
    } else if sample_variance(row).is_some_and(|v| v < c.min_variance) {
        Some(Rule::Variance)
    } else if attention.iter().any(|(i, s)| row[*i].is_none_or(|r| !s.passes(r))) {
        Some(Rule::Sanity)
    } else {
        None
    }
}

/// Length of the longest run of equal consecutive answers; a missing
/// answer breaks a run (the released `longest_run_length`, which is 1 for
/// a row of missing answers).
pub fn longest_run(values: &[Option<u8>]) -> usize {
    if values.is_empty() {
        return 0;
    }
    let (mut best, mut run) = (1, 1);
    for pair in values.windows(2) {
        run = match pair {
            [Some(a), Some(b)] if a == b => run + 1,
            _ => 1,
        };
        best = best.max(run);
    }
    best
}

/// Sample variance (ddof = 1, pandas' `DataFrame.var` with `skipna`) of
/// the answers given; `None` (pandas' NaN, which no threshold catches)
/// for fewer than two.
pub fn sample_variance(values: &[Option<u8>]) -> Option<f64> {
    let given: Vec<f64> = values.iter().flatten().map(|&v| f64::from(v)).collect();
    if given.len() < 2 {
        return None;
    }
    let n = given.len() as f64;
    let mean = given.iter().sum::<f64>() / n;
    Some(given.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / (n - 1.0))
}

/// The responses among `remaining` that answer the opposite extreme of the
/// others' clear majority too often (the released `flag_trolls_one_form`,
/// with its arithmetic: shares compared as quotients).
fn trolls<'a>(rows: &BTreeMap<&'a str, Row>, remaining: &[&'a str], c: &CodeThresholds) -> Vec<&'a str> {
    let mut out = Vec::new();
    for &a in remaining {
        let others: Vec<&Row> = remaining.iter().filter(|o| **o != a).filter_map(|o| rows.get(o)).collect();
        let (mut tested, mut opposite) = (0usize, 0usize);
        for (column, mine) in rows.get(a).map(Vec::as_slice).unwrap_or_default().iter().enumerate() {
            let Some(mine) = *mine else { continue };
            let mut counts = [0usize; 4];
            for o in others.iter().filter_map(|row| row.get(column).copied().flatten()) {
                counts[usize::from(o.min(3))] += 1;
            }
            let n: usize = counts.iter().sum();
            if n == 0 {
                continue;
            }
            // A majority of at least 60 % is unique, so ties do not matter.
            let (majority, top) = (1..=3).map(|v| (v, counts[v])).max_by_key(|(_, n)| *n).unwrap_or((0, 0));
            if (top as f64 / n as f64) < c.troll_majority_share {
                continue;
            }
            tested += 1;
            opposite += usize::from(matches!((majority, mine), (1, 3) | (3, 1)));
        }
        if tested >= c.troll_min_tasks && tested > 0 && opposite as f64 / tested as f64 >= c.troll_share {
            out.push(a);
        }
    }
    out
}

/// Mean ordinal alpha over all columns of `bootstrap_draws` draws of
/// `bootstrap_size` responses (without replacement); undefined draws are
/// left out.
fn bootstrapped_alpha(rows: &BTreeMap<&str, Row>, kept: &[&str], c: &CodeThresholds, seed: u64) -> Option<f64> {
    if kept.len() < 2 {
        return None;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let size = c.bootstrap_size.min(kept.len()).max(2);
    let alphas: Vec<f64> = (0..c.bootstrap_draws.max(1))
        .filter_map(|_| {
            let drawn: Vec<&Row> = kept.choose_multiple(&mut rng, size).map(|a| &rows[a]).collect();
            questionnaire_alpha_of_rows(&drawn)
        })
        .collect();
    (!alphas.is_empty()).then(|| alphas.iter().sum::<f64>() / alphas.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::super::curation::{curate, Preset, SanityTask};
    use super::*;

    fn thresholds() -> Thresholds {
        Thresholds { preset: Preset::VtonQbenchCode, ..Thresholds::default() }
    }

    /// A form `q` with responses given as rating sequences over tasks t1..tN at positions 1..N.
    fn form(rows: &[(&str, Vec<u8>)]) -> Vec<Answer> {
        form_named("q", rows)
    }

    fn form_named(q: &str, rows: &[(&str, Vec<u8>)]) -> Vec<Answer> {
        rows.iter()
            .flat_map(|(a, ratings)| {
                ratings.iter().enumerate().map(move |(i, &r)| Answer {
                    questionnaire: q.into(),
                    annotator: (*a).into(),
                    task: format!("t{}", i + 1).into(),
                    rating: r,
                    position: Some(i as u32 + 1),
                })
            })
            .collect()
    }

    fn rule_of(c: &Curation, annotator: &str) -> Option<Rule> {
        c.annotators.iter().find(|v| v.annotator == annotator).and_then(|v| v.excluded_by)
    }

    /// The released v2 attention spec: rating 1 at 5, 15, 25, 35, 45; tolerance 1 at 35 and 45.
    fn attention_v2() -> SanityTasks {
        [5, 15, 25, 35, 45]
            .into_iter()
            .map(|p| (format!("t{p}"), SanityTask { expected: 1, tolerance: u8::from(p >= 35) }))
            .collect()
    }

    const ATTENTION: [usize; 5] = [5, 15, 25, 35, 45];

    /// 50 ratings: 1 at the attention positions, the others from `rest` in order.
    fn fifty(rest: impl IntoIterator<Item = u8>) -> Vec<u8> {
        let mut rest = rest.into_iter();
        (1..=50).map(|p| if ATTENTION.contains(&p) { 1 } else { rest.next().unwrap_or(2) }).collect()
    }

    /// 20 tasks with a varied but shared pattern.
    fn pattern() -> Vec<u8> {
        (0..20).map(|i| [1, 2, 3, 2, 1][i % 5]).collect()
    }

    #[test]
    fn runs_and_attention_exclude_responses() {
        assert_eq!(longest_run(&[Some(1), Some(1), Some(2), Some(2), Some(2), Some(1)]), 3);
        assert_eq!(longest_run(&[Some(2), Some(2), None, Some(2), Some(2)]), 2, "a missing answer breaks a run");
        assert_eq!(longest_run(&[None, None]), 1, "as the released code: at least 1");
        // 17 of 20 identical in a row: 85 % > 80 %; 16 of 20 (80 %) is not more.
        let mut long_run = vec![2u8; 17];
        long_run.extend([1, 3, 1]);
        let mut sixteen = vec![1u8; 16];
        sixteen.extend([3, 3, 3, 3]);
        let mut inattentive = pattern();
        inattentive[4] = 3; // t5 is an attention position expecting 1
        let data = form(&[
            ("a", pattern()),
            ("b", pattern()),
            ("c", pattern()),
            ("run", long_run),
            ("inattentive", inattentive),
        ]);
        let sanity: SanityTasks = [("t5".to_owned(), SanityTask::exact(1))].into();
        let c = curate(&data, &sanity, &thresholds());
        assert_eq!(rule_of(&c, "run"), Some(Rule::Run));
        let row: Vec<Option<u8>> = sixteen.iter().map(|&r| Some(r)).collect();
        assert_eq!(response_rule(&row, &[], &CodeThresholds::default()), None, "16 of 20 is not more than 80 %");
        assert_eq!(rule_of(&c, "inattentive"), Some(Rule::Sanity));
        assert_eq!(rule_of(&c, "a"), None);
        let tolerant: SanityTasks = [("t5".to_owned(), SanityTask { expected: 1, tolerance: 2 })].into();
        assert_eq!(rule_of(&curate(&data, &tolerant, &thresholds()), "inattentive"), None);
    }

    #[test]
    fn a_missing_attention_answer_fails_and_a_short_form_counts_its_empty_columns() {
        // Positions 1..20 answered; one response skips the attention task t5.
        let mut skipping = form(&[("skips", pattern())]);
        skipping.retain(|a| &*a.task != "t5");
        let mut data = form(&[("a", pattern()), ("b", pattern()), ("c", pattern())]);
        data.extend(skipping);
        let sanity: SanityTasks = [("t5".to_owned(), SanityTask::exact(1))].into();
        assert_eq!(rule_of(&curate(&data, &sanity, &thresholds()), "skips"), Some(Rule::Sanity));
        // A 10-position form beside a 50-position one: 9 identical answers in
        // a row are 9/50 of its table (the file's width), not 9/10.
        let mut short = form_named("short", &[("s", vec![1, 1, 1, 1, 1, 1, 1, 1, 1, 3])]);
        short.extend(form_named("long", &[("l", fifty((0..45).map(|i| [3, 1][i % 2])))]));
        assert_eq!(rule_of(&curate(&short, &SanityTasks::new(), &thresholds()), "s"), None);
    }

    #[test]
    fn variance_is_the_sample_variance_at_the_threshold_both_ways() {
        // 8 x 1 (5 of them at the attention positions), 7 x 3, 35 x 2:
        // sample variance 0.3057 (kept), population 0.2996.
        let above = fifty([1, 1, 1].into_iter().chain([3; 7]).chain([2; 35]).collect::<Vec<_>>().into_iter().rev());
        let below = fifty([1, 1, 1].into_iter().chain([3; 6]).chain([2; 36]).collect::<Vec<_>>().into_iter().rev());
        let present = |r: &[u8]| r.iter().map(|&v| Some(v)).collect::<Vec<_>>();
        let v = sample_variance(&present(&above)).unwrap_or_default();
        assert!((v - 14.98 / 49.0).abs() < 1e-12 && v > 0.30, "{v}");
        assert!((sample_variance(&present(&below)).unwrap_or_default() - 13.92 / 49.0).abs() < 1e-12);
        assert_eq!(sample_variance(&[Some(2)]), None, "pandas gives NaN, which excludes nobody");
        let data = form(&[("a", above.clone()), ("b", above.clone()), ("c", above.clone()), ("low", below)]);
        let c = curate(&data, &attention_v2(), &thresholds());
        assert_eq!(rule_of(&c, "a"), None, "sample variance 0.3057 >= 0.30");
        assert_eq!(rule_of(&c, "low"), Some(Rule::Variance), "sample variance 0.2841 < 0.30");
    }

    #[test]
    fn trolls_are_counted_over_all_fifty_columns() {
        // Three identical raters; the others flip 1 <-> 3 on 9 or 10 of the
        // 45 regular (all extreme) tasks: 9/50 = 18 % is no troll (9/45
        // would be 20 %), 10/50 = 20 % is.
        let base: Vec<u8> = fifty((0..45).map(|i| [1, 3][i % 2]));
        let flip = |count: usize| {
            let mut r = base.clone();
            let mut flipped = 0;
            for (p, v) in r.iter_mut().enumerate() {
                if flipped < count && !ATTENTION.contains(&(p + 1)) {
                    *v = 4 - *v;
                    flipped += 1;
                }
            }
            r
        };
        for (flips, troll) in [(9, None), (10, Some(Rule::Troll))] {
            let data = form(&[("a", base.clone()), ("b", base.clone()), ("c", base.clone()), ("x", flip(flips))]);
            let c = curate(&data, &attention_v2(), &thresholds());
            assert_eq!(rule_of(&c, "x"), troll, "{flips} of 50");
            assert_eq!(rule_of(&c, "a"), None);
        }
    }

    #[test]
    fn alpha_reads_the_attention_columns_and_filters_only_when_asked() {
        let a = fifty((0..45).map(|i| [1, 2, 3][i % 3]));
        let b = fifty((0..45).map(|i| [1, 2, 3][(i + usize::from(i % 7 == 0)) % 3]));
        let c = fifty((0..45).map(|i| [1, 2, 3][(i + usize::from(i % 5 == 0)) % 3]));
        let data = form(&[("a", a.clone()), ("b", b.clone()), ("c", c.clone())]);
        let result = curate(&data, &attention_v2(), &thresholds());
        let rows: Vec<Vec<Option<u8>>> = [&a, &b, &c].iter().map(|r| r.iter().map(|&v| Some(v)).collect()).collect();
        let all = questionnaire_alpha_of_rows(&rows.iter().collect::<Vec<_>>());
        assert!(all.is_some());
        // Three responses drawn three at a time: every draw is the whole form.
        let after = result.questionnaires[0].alpha_after;
        assert!((after.unwrap_or_default() - all.unwrap_or_default()).abs() < 1e-12, "{after:?} vs {all:?}");
        let without: Vec<Vec<Option<u8>>> = rows
            .iter()
            .map(|r| r.iter().enumerate().filter(|(i, _)| !ATTENTION.contains(&(i + 1))).map(|(_, v)| *v).collect())
            .collect();
        assert_ne!(after, questionnaire_alpha_of_rows(&without.iter().collect::<Vec<_>>()));
        assert!(result.questionnaires[0].kept, "no alpha filter by default (the released min_alpha=None)");
        let strict =
            Thresholds { code: CodeThresholds { min_alpha: Some(0.999), ..Default::default() }, ..thresholds() };
        assert!(!curate(&data, &attention_v2(), &strict).questionnaires[0].kept);
    }

    #[test]
    fn forms_need_three_responses_and_seeds_follow_the_form_name() {
        let two = form(&[("a", pattern()), ("b", pattern())]);
        assert!(!curate(&two, &SanityTasks::new(), &thresholds()).questionnaires[0].kept, "fewer than 3");
        let three = form(&[("a", pattern()), ("b", pattern()), ("c", pattern())]);
        let c = curate(&three, &SanityTasks::new(), &thresholds());
        assert_eq!(c.questionnaires[0].alpha_after, Some(1.0));
        assert!(c.questionnaires[0].kept);
        // Five varied responses, drawn three at a time: the draws depend on
        // the seed, which depends on the recorded seed and the form's name.
        let rows: Vec<(&str, Vec<u8>)> = ["a", "b", "c", "d", "e"]
            .iter()
            .enumerate()
            .map(|(k, a)| (*a, (0..20).map(|i| [1, 2, 3][(i + usize::from(i % (k + 2) == 0)) % 3]).collect()))
            .collect();
        let one = form_named("batch-1", &rows);
        let other = form_named("batch-2", &rows);
        let named = |answers: &[Answer], id: &str| {
            let names: HashMap<&str, &str> = [(id, "form-7")].into();
            curate_named(answers, &SanityTasks::new(), &thresholds(), &names).questionnaires[0].alpha_after
        };
        assert_eq!(named(&one, "batch-1"), named(&other, "batch-2"), "same exported name, same draws");
        assert_eq!(form_seed(0, "form-7"), form_seed(0, "form-7"));
        assert_ne!(form_seed(0, "form-7"), form_seed(1, "form-7"));
        assert_ne!(form_seed(0, "form-7"), form_seed(0, "form-8"));
    }
}
