//! The `vton-qbench-code` curation preset: the rules of the released
//! VTON-QBench code, which differ from the paper's text.
//!
//! Per response (one annotator's answers to one questionnaire, a "form"):
//! 1. excluded when its longest run of identical consecutive answers (over
//!    all positions, sanity included) covers more than `max_run_share` of
//!    its answers (`run`), when the population variance of its ratings is
//!    below `min_variance` (`variance`), or when it fails an attention
//!    position beyond the task's tolerance (`sanity`);
//! 2. among the responses left, a troll answers the opposite extreme (1
//!    against 3, or 3 against 1) of the others' majority in at least
//!    `troll_share` of at least `troll_min_tasks` tasks where that majority
//!    holds at least `troll_majority_share` of the others (`troll`);
//! 3. forms with fewer than `min_responses` responses left are dropped;
//! 4. forms whose bootstrapped ordinal alpha (mean over `bootstrap_draws`
//!    draws of `bootstrap_size` responses without replacement, seeded per
//!    form from `seed`) is below `min_alpha` are dropped.

use super::curation::{questionnaire_alpha, run, Answer, Curation, Decision, Rule, SanityTasks, Thresholds};
use rand::seq::IndexedRandom;
use rand::SeedableRng;
use std::collections::{BTreeMap, HashMap};
use std::hash::{Hash, Hasher};

/// Shares this close to a threshold count as equal to it ("at least 20 %"
/// must hold for 4 of 20 despite rounding).
const SHARE_TOLERANCE: f64 = 1e-12;

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
    /// A response whose longest identical run covers more than this share is excluded.
    pub max_run_share: f64,
    /// Forms with fewer responses left are dropped.
    pub min_responses: usize,
    /// A response whose rating variance is below this is excluded.
    pub min_variance: f64,
    /// Seed of the bootstrap (recorded with the result).
    pub seed: u64,
    /// The others' majority must hold at least this share for a task to test trolling.
    pub troll_majority_share: f64,
    /// Trolling is judged only with at least this many such tasks.
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
            bootstrap_size: 3,
            bootstrap_draws: 10,
            seed: 0,
        }
    }
}

/// Runs the released code's curation.
pub fn curate(answers: &[Answer], sanity: &SanityTasks, t: &Thresholds) -> Curation {
    let c = &t.code;
    let sequences = sequences(answers);
    run(answers, sanity, |q, by_annotator| {
        let mut verdicts: BTreeMap<&str, Option<Rule>> = BTreeMap::new();
        for (&a, ratings) in by_annotator {
            let sequence = sequences.get(&(q, a)).map(Vec::as_slice).unwrap_or_default();
            let rule = if longest_run(sequence) as f64 > c.max_run_share * sequence.len() as f64 {
                Some(Rule::Run)
            } else if variance(sequence).is_some_and(|v| v < c.min_variance) {
                Some(Rule::Variance)
            } else if ratings.iter().any(|(task, r)| sanity.get(*task).is_some_and(|s| !s.passes(*r))) {
                Some(Rule::Sanity)
            } else {
                None
            };
            verdicts.insert(a, rule);
        }
        let remaining: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        for a in trolls(by_annotator, &remaining, sanity, c) {
            verdicts.insert(a, Some(Rule::Troll));
        }
        let kept: Vec<&str> = verdicts.iter().filter(|(_, v)| v.is_none()).map(|(a, _)| *a).collect();
        let alpha_after = bootstrapped_alpha(by_annotator, &kept, sanity, c, q);
        let keep = kept.len() >= c.min_responses && alpha_after.is_some_and(|a| a >= t.min_alpha);
        Decision { verdicts: verdicts.into_iter().collect(), alpha_after, keep }
    })
}

/// A rating with what orders it: (position, input index, rating).
type Placed = (u32, usize, u8);

/// Each response's ratings in questionnaire order (by position, else input order).
fn sequences(answers: &[Answer]) -> HashMap<(&str, &str), Vec<u8>> {
    let mut ordered: HashMap<(&str, &str), Vec<Placed>> = HashMap::new();
    for (i, a) in answers.iter().enumerate() {
        ordered.entry((&a.questionnaire, &a.annotator)).or_default().push((a.position.unwrap_or(0), i, a.rating));
    }
    ordered
        .into_iter()
        .map(|(k, mut v)| {
            v.sort_unstable();
            (k, v.into_iter().map(|(_, _, r)| r).collect())
        })
        .collect()
}

/// Length of the longest run of equal consecutive values.
pub fn longest_run(values: &[u8]) -> usize {
    let (mut best, mut run) = (0, 0);
    for (i, v) in values.iter().enumerate() {
        run = if i > 0 && values[i - 1] == *v { run + 1 } else { 1 };
        best = best.max(run);
    }
    best
}

/// Population variance (as numpy's default), `None` for no values.
pub fn variance(values: &[u8]) -> Option<f64> {
    if values.is_empty() {
        return None;
    }
    let n = values.len() as f64;
    let mean = values.iter().map(|&v| f64::from(v)).sum::<f64>() / n;
    Some(values.iter().map(|&v| (f64::from(v) - mean).powi(2)).sum::<f64>() / n)
}

/// The responses among `remaining` that answer the opposite extreme of the
/// others' clear majority too often.
fn trolls<'a>(
    by_annotator: &BTreeMap<&'a str, BTreeMap<&'a str, u8>>,
    remaining: &[&'a str],
    sanity: &SanityTasks,
    c: &CodeThresholds,
) -> Vec<&'a str> {
    let mut out = Vec::new();
    for &a in remaining {
        let (mut tested, mut opposite) = (0usize, 0usize);
        for (&task, &r) in by_annotator[a].iter().filter(|(task, _)| !sanity.contains_key(**task)) {
            let mut counts = [0usize; 4];
            for other in remaining.iter().filter(|o| **o != a) {
                if let Some(&o) = by_annotator[other].get(task) {
                    counts[usize::from(o.min(3))] += 1;
                }
            }
            let n: usize = counts.iter().sum();
            let top = counts.iter().copied().max().unwrap_or(0);
            let majority: Vec<usize> = (1..=3).filter(|&v| counts[v] == top).collect();
            if n == 0 || majority.len() != 1 || (top as f64) < c.troll_majority_share * n as f64 - SHARE_TOLERANCE {
                continue;
            }
            tested += 1;
            opposite += usize::from(matches!((majority[0], r), (1, 3) | (3, 1)));
        }
        if tested >= c.troll_min_tasks && opposite as f64 >= c.troll_share * tested as f64 - SHARE_TOLERANCE {
            out.push(a);
        }
    }
    out
}

/// Mean ordinal alpha of `bootstrap_draws` draws of `bootstrap_size`
/// responses (without replacement); undefined draws are left out.
fn bootstrapped_alpha(
    by_annotator: &BTreeMap<&str, BTreeMap<&str, u8>>,
    kept: &[&str],
    sanity: &SanityTasks,
    c: &CodeThresholds,
    questionnaire: &str,
) -> Option<f64> {
    if kept.len() < 2 {
        return None;
    }
    // Seeded per form, so a form's result does not depend on the others.
    let mut hasher = rustc_hash::FxHasher::default();
    questionnaire.hash(&mut hasher);
    let mut rng = rand::rngs::StdRng::seed_from_u64(c.seed ^ hasher.finish());
    let size = c.bootstrap_size.min(kept.len()).max(2);
    let alphas: Vec<f64> = (0..c.bootstrap_draws.max(1))
        .filter_map(|_| {
            let drawn: Vec<&str> = kept.choose_multiple(&mut rng, size).copied().collect();
            questionnaire_alpha(by_annotator, drawn.into_iter(), sanity)
        })
        .collect();
    (!alphas.is_empty()).then(|| alphas.iter().sum::<f64>() / alphas.len() as f64)
}

#[cfg(test)]
mod tests {
    use super::super::curation::{Preset, SanityTask};
    use super::*;

    fn thresholds() -> Thresholds {
        Thresholds { preset: Preset::VtonQbenchCode, min_alpha: -1.0, ..Thresholds::default() }
    }

    /// A form `q` with responses given as rating sequences over tasks t1..tN.
    fn form(rows: &[(&str, Vec<u8>)]) -> Vec<Answer> {
        rows.iter()
            .flat_map(|(a, ratings)| {
                ratings.iter().enumerate().map(move |(i, &r)| Answer {
                    questionnaire: "q".into(),
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

    /// 20 tasks with a varied but shared pattern.
    fn pattern() -> Vec<u8> {
        (0..20).map(|i| [1, 2, 3, 2, 1][i % 5]).collect()
    }

    #[test]
    fn runs_and_variance_and_attention_exclude_responses() {
        assert_eq!(longest_run(&[1, 1, 2, 2, 2, 1]), 3);
        assert_eq!(variance(&[1, 3]), Some(1.0));
        // 17 of 20 identical in a row: 85 % > 80 %.
        let mut long_run = vec![2u8; 17];
        long_run.extend([1, 3, 1]);
        // 16 in a row (80 %) is allowed by the run rule but varies too little:
        // 16 x 2, 4 x 3 -> mean 2.2, variance 0.16 < 0.30.
        let mut flat = vec![2u8; 16];
        flat.extend([3, 3, 3, 3]);
        let mut inattentive = pattern();
        inattentive[4] = 3; // t5 is an attention position expecting 1
        let data = form(&[
            ("a", pattern()),
            ("b", pattern()),
            ("c", pattern()),
            ("run", long_run),
            ("flat", flat),
            ("inattentive", inattentive),
        ]);
        let sanity: SanityTasks = [("t5".to_owned(), SanityTask::exact(1))].into();
        let c = curate(&data, &sanity, &thresholds());
        assert_eq!(rule_of(&c, "run"), Some(Rule::Run));
        assert_eq!(rule_of(&c, "flat"), Some(Rule::Variance));
        assert_eq!(rule_of(&c, "inattentive"), Some(Rule::Sanity));
        assert_eq!(rule_of(&c, "a"), None);
        let tolerant: SanityTasks = [("t5".to_owned(), SanityTask { expected: 1, tolerance: 2 })].into();
        assert_eq!(rule_of(&curate(&data, &tolerant, &thresholds()), "inattentive"), None);
    }

    #[test]
    fn a_troll_answers_the_opposite_extreme_of_clear_majorities() {
        // Others agree on every task; the troll flips 1 <-> 3 on 4 of the 20
        // tasks (of the 16 with an extreme majority... 4/20 tested = 20 %).
        let mut troll = pattern();
        let mut flipped = 0;
        for r in troll.iter_mut() {
            if flipped < 4 && *r != 2 {
                *r = 4 - *r;
                flipped += 1;
            }
        }
        let mut near = pattern();
        let mut changed = 0;
        for r in near.iter_mut() {
            if changed < 3 && *r != 2 {
                *r = 4 - *r;
                changed += 1;
            }
        }
        let data = form(&[("a", pattern()), ("b", pattern()), ("c", pattern()), ("troll", troll), ("near", near)]);
        let c = curate(&data, &SanityTasks::new(), &thresholds());
        assert_eq!(rule_of(&c, "troll"), Some(Rule::Troll), "4 of 20 = 20 % opposite extremes");
        assert_eq!(rule_of(&c, "near"), None, "3 of 20 = 15 %");
    }

    #[test]
    fn forms_need_three_responses_and_a_bootstrapped_alpha_at_least_the_threshold() {
        let two = form(&[("a", pattern()), ("b", pattern())]);
        let c = curate(&two, &SanityTasks::new(), &thresholds());
        assert!(!c.questionnaires[0].kept, "fewer than 3 responses");
        let three = form(&[("a", pattern()), ("b", pattern()), ("c", pattern())]);
        let c = curate(&three, &SanityTasks::new(), &Thresholds { min_alpha: 1.0, ..thresholds() });
        assert_eq!(c.questionnaires[0].alpha_after, Some(1.0));
        assert!(c.questionnaires[0].kept, "alpha 1.0 is not below 1.0");
        let seeded = curate(&three, &SanityTasks::new(), &thresholds());
        assert_eq!(seeded, curate(&three, &SanityTasks::new(), &thresholds()), "seeded: the same every time");
    }
}
