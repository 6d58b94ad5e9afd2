//! VTON curation, the heart of the benchmark's quality control: remove
//! unreliable annotators per questionnaire, then drop questionnaires whose
//! agreement (ordinal Krippendorff's alpha) stays too low.
//!
//! Two presets: `paper` (the rules as the paper states them, the default) and
//! `vton-qbench-code` (the rules of the released code, in
//! [`super::curation_code`]). Pure: the service and `atelier vton curate`
//! both call [`curate`].

use crate::stats::aggregate::{mean_score, MeanScore};
use crate::stats::agreement::unique_mode;
use crate::stats::alpha::{alpha, Level, ReliabilityData};
use std::collections::{BTreeMap, BTreeSet, HashMap, HashSet};
use std::sync::Arc;

/// A sanity (attention) task: the expected rating, and how far off an
/// answer may be and still pass (0: only the expected rating passes).
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
pub struct SanityTask {
    /// The known rating (1-3).
    pub expected: u8,
    /// |rating - expected| <= tolerance passes.
    #[serde(default)]
    pub tolerance: u8,
}

impl SanityTask {
    /// A sanity task that only its expected rating passes.
    pub fn exact(expected: u8) -> Self {
        Self { expected, tolerance: 0 }
    }

    /// Whether a rating passes.
    pub fn passes(&self, rating: u8) -> bool {
        rating.abs_diff(self.expected) <= self.tolerance
    }
}

/// Sanity tasks by task id.
pub type SanityTasks = HashMap<String, SanityTask>;

/// One rating: annotator `annotator` gave `rating` (1-3) to `task` in `questionnaire`.
/// The ids are shared text: a campaign has hundreds of thousands of
/// answers and only thousands of questionnaires, annotators and tasks.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Answer {
    /// Questionnaire id.
    pub questionnaire: Arc<str>,
    /// Annotator id.
    pub annotator: Arc<str>,
    /// Task (image) id.
    pub task: Arc<str>,
    /// 1 Unnatural, 2 Slightly unnatural, 3 Completely natural.
    pub rating: u8,
    /// 1-based position in the questionnaire, when known (the released
    /// code's run rule reads answers in this order; otherwise input order).
    pub position: Option<u32>,
}

/// Which set of curation rules runs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "kebab-case")]
pub enum Preset {
    /// The paper's rules (sanity, identical share, plurality disagreement, alpha).
    #[default]
    Paper,
    /// The released VTON-QBench code's rules (runs, variance, attention,
    /// trolls, at least 3 responses, bootstrapped alpha).
    VtonQbenchCode,
}

/// Thresholds; the defaults are the benchmark's.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
#[serde(default, deny_unknown_fields)]
pub struct Thresholds {
    /// The `vton-qbench-code` preset's own thresholds.
    pub code: super::curation_code::CodeThresholds,
    /// Removed when they differ from the others' plurality rating (their
    /// unique most frequent rating, not necessarily over half) more often than this.
    pub max_disagreement: f64,
    /// Removed when the share of their most frequent rating exceeds this.
    pub max_identical: f64,
    /// An annotator failing more sanity tasks than this is removed.
    pub max_sanity_failures: usize,
    /// Questionnaires with alpha at or below this are dropped.
    pub min_alpha: f64,
    /// Questionnaires with fewer kept annotators are dropped.
    pub min_annotators: usize,
    /// The rule set.
    pub preset: Preset,
}

impl Preset {
    /// The name used in configurations and output.
    pub fn name(self) -> &'static str {
        match self {
            Preset::Paper => "paper",
            Preset::VtonQbenchCode => "vton-qbench-code",
        }
    }
}

impl Default for Thresholds {
    fn default() -> Self {
        Self {
            preset: Preset::Paper,
            max_sanity_failures: 0,
            max_identical: 0.8,
            max_disagreement: 0.6,
            min_alpha: 0.4,
            min_annotators: 2,
            code: Default::default(),
        }
    }
}

/// The rule that removed an annotator from a questionnaire.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Rule {
    /// Failed the sanity tasks.
    Sanity,
    /// Gave (almost) the same answer to everything.
    Identical,
    /// Disagreed with the others' plurality rating too often.
    Disagreement,
    /// Released code: the longest run of identical consecutive answers is too long.
    Run,
    /// Released code: the ratings vary too little.
    Variance,
    /// Released code: answered the opposite extreme of a clear majority too often.
    Troll,
}

impl Rule {
    /// The name used in output and in exclusion reasons.
    pub fn name(self) -> &'static str {
        match self {
            Rule::Sanity => "sanity",
            Rule::Identical => "identical",
            Rule::Disagreement => "disagreement",
            Rule::Run => "run",
            Rule::Variance => "variance",
            Rule::Troll => "troll",
        }
    }
}

/// The verdict on one annotator in one questionnaire.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct AnnotatorVerdict {
    /// Annotator id.
    pub annotator: String,
    /// The first rule that caught them, or `None` if kept.
    pub excluded_by: Option<Rule>,
    /// Questionnaire id.
    pub questionnaire: String,
}

/// The verdict on one questionnaire.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct QuestionnaireVerdict {
    /// Ordinal alpha with the kept annotators.
    pub alpha_after: Option<f64>,
    /// Ordinal alpha on non-sanity tasks, all annotators (`None` = undefined).
    pub alpha_before: Option<f64>,
    /// Annotators kept by the annotator rules.
    pub annotators_kept: usize,
    /// Whether the questionnaire's data is used.
    pub kept: bool,
    /// Questionnaire id.
    pub questionnaire: String,
}

/// The curated score of one task.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct TaskScore {
    /// Mean rating (1-3).
    pub mean: f64,
    /// Ratings used.
    pub n: usize,
    /// Task id.
    pub task: String,
    /// Count of ratings 1, 2 and 3.
    pub votes: [usize; 3],
}

/// Everything curation decides.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (see `vton::result::VtonGroundTruth`).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Curation {
    /// Mean alpha over questionnaires after the annotator rules.
    pub alpha_mean_after: Option<f64>,
    /// Mean alpha over questionnaires, all annotators (defined alphas only).
    pub alpha_mean_before: Option<f64>,
    /// Mean alpha over the kept questionnaires.
    pub alpha_mean_kept: Option<f64>,
    /// Per (questionnaire, annotator), sorted.
    pub annotators: Vec<AnnotatorVerdict>,
    /// Per questionnaire, sorted.
    pub questionnaires: Vec<QuestionnaireVerdict>,
    /// Curated scores: kept annotators of kept questionnaires, sanity tasks excluded.
    pub scores: Vec<TaskScore>,
}

/// Alphas this close to the threshold count as equal to it, so "exactly
/// 0.4" is dropped despite rounding in the arithmetic.
const ALPHA_TOLERANCE: f64 = 1e-12;

/// Runs both stages of the configured preset. `sanity` maps sanity task ids
/// to their expected rating and tolerance.
pub fn curate(answers: &[Answer], sanity: &SanityTasks, t: &Thresholds) -> Curation {
    curate_named(answers, sanity, t, &HashMap::new())
}

/// [`curate`], with each questionnaire's exported name (`form_id`) where it
/// differs from its id: the `vton-qbench-code` preset seeds a form's
/// bootstrap by it, so a release re-imported from its files reproduces it.
pub fn curate_named(answers: &[Answer], sanity: &SanityTasks, t: &Thresholds, names: &HashMap<&str, &str>) -> Curation {
    if t.preset == Preset::VtonQbenchCode {
        return super::curation_code::curate_named(answers, sanity, t, names);
    }
    // questionnaire -> annotator -> task -> rating
    run(answers, sanity, |_, by_annotator| {
        let verdicts = annotator_rules(by_annotator, sanity, t);
        let kept: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        let alpha_after = questionnaire_alpha(by_annotator, kept.iter().copied(), sanity);
        let keep = alpha_after.is_some_and(|a| a > t.min_alpha + ALPHA_TOLERANCE) && kept.len() >= t.min_annotators;
        Decision { verdicts, alpha_after, keep }
    })
}

/// What a preset decides for one questionnaire.
pub(super) struct Decision<'a> {
    /// Per annotator, the rule that removed them (or `None`).
    pub verdicts: Vec<(&'a str, Option<Rule>)>,
    /// The questionnaire's alpha with the kept annotators, as the preset measures it.
    pub alpha_after: Option<f64>,
    /// Whether the questionnaire's data is used.
    pub keep: bool,
}

/// Runs a preset's `decide` on every questionnaire and gathers the verdicts,
/// alphas and the curated scores of the kept annotators of kept questionnaires.
pub(super) fn run<'a>(
    answers: &'a [Answer],
    sanity: &SanityTasks,
    decide: impl Fn(&'a str, &BTreeMap<&'a str, Ratings<'a>>) -> Decision<'a>,
) -> Curation {
    let data = by_questionnaire(answers);
    let mut annotators = Vec::new();
    let mut questionnaires = Vec::new();
    // Hashed while gathering (one entry per rating), sorted once at the end.
    let mut kept_ratings: HashMap<&str, Vec<u8>> = HashMap::new();
    for (&q, by_annotator) in &data {
        let Decision { verdicts, alpha_after, keep } = decide(q, by_annotator);
        let kept: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        if keep {
            for a in &kept {
                for (&task, &r) in &by_annotator[a] {
                    if !sanity.contains_key(task) {
                        kept_ratings.entry(task).or_default().push(r);
                    }
                }
            }
        }
        for (a, rule) in verdicts {
            annotators.push(AnnotatorVerdict {
                questionnaire: q.to_owned(),
                annotator: a.to_owned(),
                excluded_by: rule,
            });
        }
        questionnaires.push(QuestionnaireVerdict {
            questionnaire: q.to_owned(),
            alpha_before: questionnaire_alpha(by_annotator, by_annotator.keys().copied(), sanity),
            alpha_after,
            annotators_kept: kept.len(),
            kept: keep,
        });
    }
    summarise(annotators, questionnaires, kept_ratings)
}

/// questionnaire -> annotator -> task -> rating.
pub(super) type ByQuestionnaire<'a> = BTreeMap<&'a str, BTreeMap<&'a str, Ratings<'a>>>;

/// Groups answers by questionnaire and annotator.
pub(super) fn by_questionnaire(answers: &[Answer]) -> ByQuestionnaire<'_> {
    let mut data: ByQuestionnaire = BTreeMap::new();
    for a in answers {
        data.entry(&a.questionnaire).or_default().entry(&a.annotator).or_default().insert(&a.task, a.rating);
    }
    data
}

/// The result from the verdicts and the kept ratings: mean alphas and curated scores.
fn summarise(
    annotators: Vec<AnnotatorVerdict>,
    questionnaires: Vec<QuestionnaireVerdict>,
    kept_ratings: HashMap<&str, Vec<u8>>,
) -> Curation {
    let mean = |values: Vec<f64>| (!values.is_empty()).then(|| values.iter().sum::<f64>() / values.len() as f64);
    let mut kept_ratings: Vec<(&str, Vec<u8>)> = kept_ratings.into_iter().collect();
    kept_ratings.sort_unstable_by(|a, b| a.0.cmp(b.0));
    let scores = kept_ratings
        .into_iter()
        .filter_map(|(task, ratings)| {
            let MeanScore { mean, n, votes, .. } = mean_score::<3>(&ratings)?;
            Some(TaskScore { task: task.to_owned(), mean, n, votes })
        })
        .collect();
    Curation {
        alpha_mean_before: mean(questionnaires.iter().filter_map(|q| q.alpha_before).collect()),
        alpha_mean_after: mean(questionnaires.iter().filter_map(|q| q.alpha_after).collect()),
        alpha_mean_kept: mean(questionnaires.iter().filter(|q| q.kept).filter_map(|q| q.alpha_after).collect()),
        annotators,
        questionnaires,
        scores,
    }
}

/// The answers curation keeps: kept annotators of kept questionnaires,
/// sanity tasks excluded.
pub fn kept_answers<'a>(answers: &'a [Answer], sanity: &SanityTasks, c: &Curation) -> Vec<&'a Answer> {
    let kept_q: HashSet<&str> = c.questionnaires.iter().filter(|q| q.kept).map(|q| q.questionnaire.as_str()).collect();
    let kept_a: HashSet<(&str, &str)> = c
        .annotators
        .iter()
        .filter(|a| a.excluded_by.is_none())
        .map(|a| (a.questionnaire.as_str(), a.annotator.as_str()))
        .collect();
    answers
        .iter()
        .filter(|a| {
            kept_q.contains(&*a.questionnaire)
                && kept_a.contains(&(&*a.questionnaire, &*a.annotator))
                && !sanity.contains_key(&*a.task)
        })
        .collect()
}

pub(super) type Ratings<'a> = BTreeMap<&'a str, u8>;

/// Stage 1 for one questionnaire: the first rule catching each annotator.
fn annotator_rules<'a>(
    by_annotator: &BTreeMap<&'a str, Ratings<'a>>,
    sanity: &SanityTasks,
    t: &Thresholds,
) -> Vec<(&'a str, Option<Rule>)> {
    let mut verdicts: Vec<(&str, Option<Rule>)> = by_annotator
        .iter()
        .map(|(&a, ratings)| {
            let failures =
                ratings.iter().filter(|(task, r)| sanity.get(**task).is_some_and(|s| !s.passes(**r))).count();
            if failures > t.max_sanity_failures {
                return (a, Some(Rule::Sanity));
            }
            let regular: Vec<u8> =
                ratings.iter().filter(|(task, _)| !sanity.contains_key(**task)).map(|(_, &r)| r).collect();
            if !regular.is_empty() {
                let mut counts = [0usize; 4];
                for &r in &regular {
                    counts[usize::from(r.min(3))] += 1;
                }
                let top = counts.iter().copied().max().unwrap_or(0);
                if top as f64 / regular.len() as f64 > t.max_identical {
                    return (a, Some(Rule::Identical));
                }
            }
            (a, None)
        })
        .collect();
    let survivors: BTreeSet<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
    for (a, verdict) in &mut verdicts {
        if verdict.is_some() {
            continue;
        }
        let (mut compared, mut differs) = (0usize, 0usize);
        for (&task, &r) in by_annotator[a].iter().filter(|(task, _)| !sanity.contains_key(**task)) {
            let mut others: HashMap<u8, usize> = HashMap::new();
            for other in survivors.iter().filter(|o| *o != a) {
                if let Some(&o) = by_annotator[other].get(task) {
                    *others.entry(o).or_default() += 1;
                }
            }
            if let Some(majority) = unique_mode(&others) {
                compared += 1;
                differs += usize::from(majority != r);
            }
        }
        if compared > 0 && differs as f64 / compared as f64 > t.max_disagreement {
            *verdict = Some(Rule::Disagreement);
        }
    }
    verdicts
}

/// Ordinal alpha over the non-sanity tasks of a questionnaire, for the given annotators.
pub(super) fn questionnaire_alpha<'a>(
    by_annotator: &BTreeMap<&'a str, Ratings<'a>>,
    who: impl Iterator<Item = &'a str>,
    sanity: &SanityTasks,
) -> Option<f64> {
    let mut units: BTreeMap<&str, Vec<u32>> = BTreeMap::new();
    for a in who {
        for (&task, &r) in &by_annotator[a] {
            if !sanity.contains_key(task) && (1..=3).contains(&r) {
                units.entry(task).or_default().push(u32::from(r - 1));
            }
        }
    }
    let data = ReliabilityData::from_codes(vec![1.0, 2.0, 3.0], units.values())?;
    alpha(&data, Level::Ordinal).alpha.ok()
}

/// Ordinal alpha over every column of the given rows (one response per
/// row, a rating 1-3 or nothing per column), as the released code computes
/// it over a form's table; `None` when undefined.
pub(super) fn questionnaire_alpha_of_rows(rows: &[&Vec<Option<u8>>]) -> Option<f64> {
    let width = rows.iter().map(|r| r.len()).max().unwrap_or(0);
    let units = (0..width).map(|c| {
        rows.iter().filter_map(|r| r[c]).filter(|r| (1..=3).contains(r)).map(|r| u32::from(r - 1)).collect::<Vec<_>>()
    });
    let data = ReliabilityData::from_codes(vec![1.0, 2.0, 3.0], units)?;
    alpha(&data, Level::Ordinal).alpha.ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answers(q: &str, rows: &[(&str, &[(&str, u8)])]) -> Vec<Answer> {
        rows.iter()
            .flat_map(|(a, ratings)| {
                ratings.iter().map(move |(t, r)| Answer {
                    questionnaire: q.into(),
                    annotator: (*a).into(),
                    task: (*t).into(),
                    rating: *r,
                    position: None,
                })
            })
            .collect()
    }

    fn rule_of(c: &Curation, annotator: &str) -> Option<Rule> {
        c.annotators.iter().find(|a| a.annotator == annotator).and_then(|a| a.excluded_by)
    }

    fn lenient() -> Thresholds {
        Thresholds {
            max_sanity_failures: 0,
            max_identical: 1.0,
            max_disagreement: 1.0,
            min_alpha: -1.0,
            min_annotators: 1,
            ..Thresholds::default()
        }
    }

    #[test]
    fn a_sanity_task_with_a_tolerance_passes_answers_within_it() {
        let sanity: SanityTasks = [("s".to_owned(), SanityTask { expected: 3, tolerance: 1 })].into();
        let data = answers("q", &[("near", &[("s", 2), ("t", 2)]), ("far", &[("s", 1), ("t", 2)])]);
        let c = curate(&data, &sanity, &lenient());
        assert_eq!(rule_of(&c, "near"), None, "|2 - 3| <= 1 passes");
        assert_eq!(rule_of(&c, "far"), Some(Rule::Sanity));
    }

    #[test]
    fn disagreement_compares_with_a_plurality_that_is_not_a_majority() {
        // On every task the four others answer 1, 1, 2, 3: 1 is the plurality
        // (unique most frequent) though only half; `odd` answering 3 differs.
        let tasks = ["a", "b", "c", "d"];
        let rows = |r: u8| tasks.iter().map(|t| (*t, r)).collect::<Vec<_>>();
        let (one, one2, two, three, odd) = (rows(1), rows(1), rows(2), rows(3), rows(3));
        let data = answers("q", &[("o1", &one), ("o2", &one2), ("o3", &two), ("o4", &three), ("odd", &odd)]);
        let c = curate(&data, &SanityTasks::new(), &Thresholds { max_disagreement: 0.6, ..lenient() });
        assert_eq!(rule_of(&c, "odd"), Some(Rule::Disagreement));
    }

    #[test]
    fn sanity_rule_counts_failures_against_the_threshold() {
        let sanity: SanityTasks =
            [("s1".to_owned(), SanityTask::exact(1)), ("s2".to_owned(), SanityTask::exact(3))].into();
        let data =
            answers("q", &[("ok", &[("s1", 1), ("s2", 3), ("t", 2)]), ("one_fail", &[("s1", 2), ("s2", 3), ("t", 2)])]);
        let c = curate(&data, &sanity, &lenient());
        assert_eq!(rule_of(&c, "ok"), None);
        assert_eq!(rule_of(&c, "one_fail"), Some(Rule::Sanity));
        let c = curate(&data, &sanity, &Thresholds { max_sanity_failures: 1, ..lenient() });
        assert_eq!(rule_of(&c, "one_fail"), None, "one failure is allowed with --max-sanity-failures 1");
    }

    #[test]
    fn identical_rule_removes_above_but_not_at_exactly_eighty_percent() {
        let at = [("a", 2), ("b", 2), ("c", 2), ("d", 2), ("e", 1)];
        let above = [("a", 2), ("b", 2), ("c", 2), ("d", 2), ("e", 2)];
        let data = [answers("q", &[("at", &at)]), answers("q", &[("above", &above)])].concat();
        let c = curate(&data, &SanityTasks::new(), &Thresholds { max_identical: 0.8, ..lenient() });
        assert_eq!(rule_of(&c, "at"), None, "4 of 5 = 80 % is not more than 80 %");
        assert_eq!(rule_of(&c, "above"), Some(Rule::Identical));
    }

    #[test]
    fn disagreement_rule_uses_the_plurality_of_the_others_kept_after_rules_one_and_two() {
        let tasks = ["a", "b", "c", "d", "e"];
        let rows = |rs: [u8; 5]| tasks.iter().zip(rs).map(|(t, r)| (*t, r)).collect::<Vec<_>>();
        let (x, y, z, odd, flat) = (
            rows([1, 2, 3, 1, 2]),
            rows([1, 2, 3, 1, 2]),
            rows([1, 2, 3, 2, 3]),
            rows([3, 3, 1, 2, 1]),
            rows([3, 3, 3, 3, 3]),
        );
        let data = answers("q", &[("x", &x), ("y", &y), ("z", &z), ("odd", &odd), ("flat", &flat)]);
        let c =
            curate(&data, &SanityTasks::new(), &Thresholds { max_identical: 0.8, max_disagreement: 0.6, ..lenient() });
        assert_eq!(rule_of(&c, "flat"), Some(Rule::Identical), "caught by rule 2 first");
        // The others kept (x, y, z) agree on every task: odd differs on 5 of 5.
        assert_eq!(rule_of(&c, "odd"), Some(Rule::Disagreement));
        // z differs from the majority of x, y, odd on d and e only (2 of 5 = 40 %).
        assert_eq!(rule_of(&c, "z"), None);
        assert_eq!(rule_of(&c, "x"), None);
    }

    #[test]
    fn ties_among_the_others_are_not_counted() {
        // For `a` the others tie (1 vs 3) on every task: nothing compared, not removed.
        let data = answers(
            "q",
            &[("a", &[("t1", 2), ("t2", 2)]), ("b", &[("t1", 1), ("t2", 1)]), ("c", &[("t1", 3), ("t2", 3)])],
        );
        let c = curate(&data, &SanityTasks::new(), &Thresholds { max_disagreement: 0.0, ..lenient() });
        assert_eq!(rule_of(&c, "a"), None);
    }

    #[test]
    fn a_questionnaire_with_alpha_exactly_at_the_threshold_is_dropped() {
        // Two annotators whose ordinal alpha is exactly 2/5 (checked with exact fractions).
        let first = [("t1", 2), ("t2", 1), ("t3", 2), ("t4", 2), ("t5", 2)];
        let second = [("t1", 3), ("t2", 1), ("t3", 3), ("t4", 3), ("t5", 1)];
        let data = answers("q", &[("a", &first), ("b", &second)]);
        let t = Thresholds { min_alpha: 0.4, min_annotators: 2, ..lenient() };
        let c = curate(&data, &SanityTasks::new(), &t);
        let q = &c.questionnaires[0];
        assert!((q.alpha_after.expect("defined") - 0.4).abs() < 1e-12);
        assert!(!q.kept, "alpha <= 0.4 is dropped");
        assert!(c.scores.is_empty());
        let c = curate(&data, &SanityTasks::new(), &Thresholds { min_alpha: 0.39, ..t.clone() });
        assert!(c.questionnaires[0].kept);
        // Too few annotators left also drops it.
        let c = curate(&data, &SanityTasks::new(), &Thresholds { min_alpha: 0.39, min_annotators: 3, ..t });
        assert!(!c.questionnaires[0].kept);
    }

    #[test]
    fn scores_use_kept_annotators_of_kept_questionnaires_without_sanity_tasks() {
        let sanity: SanityTasks = [("s".to_owned(), SanityTask::exact(1))].into();
        let good = [("s", 1), ("t1", 3), ("t2", 1), ("t3", 2)];
        let also = [("s", 1), ("t1", 3), ("t2", 1), ("t3", 3)];
        let bad = [("s", 3), ("t1", 1), ("t2", 3), ("t3", 1)];
        let data = answers("q", &[("g1", &good), ("g2", &also), ("b", &bad)]);
        let c = curate(&data, &sanity, &Thresholds::default());
        assert_eq!(rule_of(&c, "b"), Some(Rule::Sanity));
        let t1 = c.scores.iter().find(|s| s.task == "t1").expect("t1");
        assert_eq!((t1.mean, t1.n, t1.votes), (3.0, 2, [0, 0, 2]));
        assert!(c.scores.iter().all(|s| s.task != "s"));
        assert!(c.alpha_mean_after > c.alpha_mean_before);
    }
}
