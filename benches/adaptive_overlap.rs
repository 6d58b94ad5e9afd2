//! Adaptive overlap against fixed overlap on planted campaigns: the same
//! planted answers, each item rated by 7 raters (fixed) or by at least 3
//! and at most 9, in rounds (see below) while the rule of its kind leaves it
//! undecided (adaptive, `stats::adaptive::Rule`, as the service applies it).
//!
//! Rounds as the service forms them: every item its `min` raters in the
//! first questionnaires, then rounds of two more (never past `max`) in
//! questionnaires of undecided items, each decided again when full.
//!
//! * VTON-shaped: 2,400 try-on images of 6 models whose true mean rewards
//!   differ by small margins; raters with a spread of accuracy and bias;
//!   10 % spammers, who fail the sanity tasks and do not count (but are
//!   paid). Labels: the rating level nearest the counted mean.
//! * A100-shaped: 1,200 five-choice questions of a spread of difficulty;
//!   the same rater mix. Labels: the majority choice (a tie has none).
//!
//! Reported: ratings used, labels equal to fixed-7's and to the planted
//! truth, and (VTON) Kendall's τ of the models' ranking against fixed-7's
//! and the planted order. `cargo bench --bench adaptive_overlap` (seconds;
//! `ADAPTIVE_BENCH_SEED` changes the planted campaigns and makes it a
//! shortened run that does not write BENCHMARKS.md).

use atelier::stats::adaptive::{Rule, Vote};
use rand::rngs::StdRng;
use rand::{Rng, SeedableRng};

#[path = "support/figures.rs"]
mod figures;

const WORKERS: usize = 600;
const SPAMMERS: f64 = 0.10;
const FIXED: u32 = 7;
/// Raters in each round after the first, as the service forms them
/// (`core::work::overlap::ROUND`: the fewest a questionnaire's α is computed on).
const ROUND: u32 = atelier::core::work::overlap::ROUND;

/// A planted rater.
struct Rater {
    spammer: bool,
    /// VTON: the spread of their rating around the image's quality.
    noise: f64,
    /// VTON: their leaning.
    bias: f64,
    /// A100: how much more often than the crowd they pick the popular choice.
    skill: f64,
}

fn raters(rng: &mut StdRng) -> Vec<Rater> {
    (0..WORKERS)
        .map(|_| Rater {
            spammer: rng.random::<f64>() < SPAMMERS,
            noise: rng.random_range(0.2..0.5),
            bias: rng.random_range(-0.15..0.15),
            skill: rng.random_range(0.9..1.1),
        })
        .collect()
}

fn normal(rng: &mut StdRng) -> f64 {
    let (u1, u2): (f64, f64) = (rng.random::<f64>().max(1e-12), rng.random());
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

/// The planted answers to one item: as many raters as either policy could
/// ask (drawn at random, never twice the same), in the order they would
/// come, each with their vote; both policies read the same sequence.
fn plant(
    rng: &mut StdRng,
    raters: &[Rater],
    vote: &dyn Fn(&mut StdRng, &Rater) -> Vote,
    length: usize,
) -> Vec<(bool, Vote)> {
    let mut taken: Vec<usize> = Vec::new();
    while taken.len() < length {
        let w = rng.random_range(0..raters.len());
        if !taken.contains(&w) {
            taken.push(w);
        }
    }
    taken.into_iter().map(|w| (raters[w].spammer, vote(rng, &raters[w]))).collect()
}

/// The planted raters in rounds of `step` (as the service forms
/// questionnaires: the first round, then one of undecided items after
/// another), asking `enough` after each round: the votes that count (a
/// spammer fails the sanity tasks) and how many raters it took.
fn rate(
    planted: &[(bool, Vote)],
    first: u32,
    step: u32,
    cap: u32,
    enough: &dyn Fn(&[Vote], u32) -> bool,
) -> (Vec<Vote>, u32) {
    let mut votes = Vec::new();
    let mut raters = 0;
    while !enough(&votes, raters) && (raters as usize) < planted.len() {
        let round = if raters == 0 { first } else { step };
        for (spammer, vote) in planted.iter().skip(raters as usize).take(round.min(cap - raters) as usize) {
            raters += 1;
            if !spammer {
                votes.push(vote.clone());
            }
        }
    }
    (votes, raters)
}

/// Kendall's τ-a between two orders of the same models.
fn kendall(a: &[usize], b: &[usize]) -> f64 {
    let pos = |o: &[usize], m: usize| o.iter().position(|x| *x == m).unwrap_or(0) as i64;
    let n = a.len();
    let mut s = 0i64;
    for i in 0..n {
        for j in (i + 1)..n {
            s += (pos(a, i) - pos(a, j)).signum() * (pos(b, i) - pos(b, j)).signum();
        }
    }
    s as f64 / (n * (n - 1) / 2) as f64
}

/// What one planted campaign gave under fixed and adaptive overlap.
struct Outcome {
    fixed_ratings: u64,
    adaptive_ratings: u64,
    same_as_fixed: f64,
    fixed_truth: f64,
    adaptive_truth: f64,
    tau_fixed: Option<f64>,
    tau_truth: Option<f64>,
    /// Fixed-7's labels against fixed-7's from seven other raters of the
    /// same planted answers: how stable fixed-7 itself is (the floor of the
    /// equal-labels figure).
    fixed_with_others: f64,
}

fn vton(seed: u64, rule: Rule) -> Outcome {
    let mut rng = StdRng::seed_from_u64(seed);
    let pool = raters(&mut rng);
    let means = [1.85, 1.95, 2.05, 2.15, 2.25, 2.35];
    // 80 % clear images (a model's usual level, give or take a little) and
    // 20 % contested ones anywhere between the levels, spread evenly.
    let items: Vec<(usize, f64)> = (0..2400)
        .map(|i| {
            let m = i % means.len();
            let q = if i % 5 == 4 {
                rng.random_range(1.0..3.0)
            } else {
                // The model's mean decides how often its images land on each level.
                let level = if rng.random::<f64>() < means[m] - 1.5 {
                    3.0
                } else if rng.random::<f64>() < 0.5 {
                    2.0
                } else {
                    1.0
                };
                level + 0.12 * normal(&mut rng)
            };
            (m, q.clamp(1.0, 3.0))
        })
        .collect();
    let level = |mean: f64| mean.round().clamp(1.0, 3.0);
    let mean_of = |votes: &[Vote]| {
        let r: Vec<f64> = votes.iter().filter_map(|v| if let Vote::Rating(x) = v { Some(*x) } else { None }).collect();
        if r.is_empty() {
            f64::NAN
        } else {
            r.iter().sum::<f64>() / r.len() as f64
        }
    };
    let (mut fixed_sum, mut adaptive_sum) = (0u64, 0u64);
    let (mut same, mut fixed_right, mut adaptive_right, mut floor) = (0, 0, 0, 0);
    let mut per_model: Vec<(Vec<f64>, Vec<f64>)> = vec![(Vec::new(), Vec::new()); means.len()];
    for (m, q) in &items {
        let vote = |rng: &mut StdRng, r: &Rater| {
            if r.spammer {
                return Vote::Rating(rng.random_range(1..=3) as f64);
            }
            Vote::Rating((q + r.bias + r.noise * normal(rng)).round().clamp(1.0, 3.0))
        };
        let planted = plant(&mut rng, &pool, &vote, FIXED.max(rule.max) as usize);
        let (fixed, n) = rate(&planted, FIXED, FIXED, FIXED, &|_, raters| raters >= FIXED);
        let (adaptive, k) = rate(&planted, rule.min, ROUND, rule.max, &|votes, raters| rule.settled(votes, raters));
        let (other, _) = rate(&planted[2..], FIXED, FIXED, FIXED, &|_, raters| raters >= FIXED);
        floor += usize::from(level(mean_of(&fixed)) == level(mean_of(&other)));
        fixed_sum += u64::from(n);
        adaptive_sum += u64::from(k);
        let (f, a) = (mean_of(&fixed), mean_of(&adaptive));
        let truth = level(*q);
        same += usize::from(level(f) == level(a));
        fixed_right += usize::from(level(f) == truth);
        adaptive_right += usize::from(level(a) == truth);
        if f.is_finite() {
            per_model[*m].0.push(f);
        }
        if a.is_finite() {
            per_model[*m].1.push(a);
        }
    }
    // Models by the mean of their images' means, best first (fixed: 0, adaptive: 1).
    let order = |adaptive: bool| {
        let mut scored: Vec<(usize, f64)> = per_model
            .iter()
            .enumerate()
            .map(|(m, s)| {
                let means = if adaptive { &s.1 } else { &s.0 };
                (m, means.iter().sum::<f64>() / means.len().max(1) as f64)
            })
            .collect();
        scored.sort_by(|a, b| b.1.total_cmp(&a.1));
        scored.into_iter().map(|(m, _)| m).collect::<Vec<_>>()
    };
    let (fixed_order, adaptive_order) = (order(false), order(true));
    let planted: Vec<usize> = (0..means.len()).rev().collect();
    let n = items.len() as f64;
    Outcome {
        fixed_ratings: fixed_sum,
        adaptive_ratings: adaptive_sum,
        same_as_fixed: same as f64 / n,
        fixed_truth: fixed_right as f64 / n,
        adaptive_truth: adaptive_right as f64 / n,
        tau_fixed: Some(kendall(&adaptive_order, &fixed_order)),
        tau_truth: Some(kendall(&adaptive_order, &planted)),
        fixed_with_others: floor as f64 / n,
    }
}

fn a100(seed: u64, rule: Rule) -> Outcome {
    let mut rng = StdRng::seed_from_u64(seed ^ 0xa100);
    let pool = raters(&mut rng);
    let majority = |votes: &[Vote]| {
        let mut counts = [0u32; 5];
        for v in votes {
            if let Vote::Choice { picked, .. } = v {
                counts[picked.parse::<usize>().unwrap_or(0)] += 1;
            }
        }
        let best = counts.iter().copied().max().unwrap_or(0);
        let leaders: Vec<usize> = (0..5).filter(|i| counts[*i] == best).collect();
        (leaders.len() == 1 && best > 0).then(|| leaders[0])
    };
    let (mut fixed_sum, mut adaptive_sum) = (0u64, 0u64);
    let (mut same, mut fixed_right, mut adaptive_right, mut floor) = (0, 0, 0, 0);
    let questions = 1200;
    for _ in 0..questions {
        // The crowd's share for the popular choice: 80 % clear questions, 20 % contested.
        let popular =
            if rng.random::<f64>() < 0.8 { rng.random_range(0.75..0.95) } else { rng.random_range(0.35..0.55) };
        let vote = |rng: &mut StdRng, r: &Rater| {
            if r.spammer {
                return Vote::Choice { picked: rng.random_range(0..5).to_string(), options: 5 };
            }
            let p = (popular * r.skill).min(0.97);
            let x: f64 = rng.random();
            let choice = if x < p {
                0
            } else {
                // The rest of the crowd leans to one distractor.
                let y = (x - p) / (1.0 - p);
                if y < 0.5 {
                    1
                } else if y < 0.75 {
                    2
                } else if y < 0.9 {
                    3
                } else {
                    4
                }
            };
            Vote::Choice { picked: choice.to_string(), options: 5 }
        };
        let planted = plant(&mut rng, &pool, &vote, FIXED.max(rule.max) as usize);
        let (fixed, n) = rate(&planted, FIXED, FIXED, FIXED, &|_, raters| raters >= FIXED);
        let (adaptive, k) = rate(&planted, rule.min, ROUND, rule.max, &|votes, raters| rule.settled(votes, raters));
        // The floor: fixed-7's label from seven other raters (the 3rd to the 9th).
        let (other, _) = rate(&planted[2..], FIXED, FIXED, FIXED, &|_, raters| raters >= FIXED);
        floor += usize::from(majority(&fixed) == majority(&other));
        fixed_sum += u64::from(n);
        adaptive_sum += u64::from(k);
        let (f, a) = (majority(&fixed), majority(&adaptive));
        same += usize::from(f == a);
        fixed_right += usize::from(f == Some(0));
        adaptive_right += usize::from(a == Some(0));
    }
    let n = questions as f64;
    Outcome {
        fixed_ratings: fixed_sum,
        adaptive_ratings: adaptive_sum,
        same_as_fixed: same as f64 / n,
        fixed_truth: fixed_right as f64 / n,
        adaptive_truth: adaptive_right as f64 / n,
        tau_fixed: None,
        tau_truth: None,
        fixed_with_others: floor as f64 / n,
    }
}

fn main() {
    let seed: u64 = std::env::var("ADAPTIVE_BENCH_SEED").ok().and_then(|v| v.parse().ok()).unwrap_or(2026);
    let full_run = std::env::var("ADAPTIVE_BENCH_SEED").is_err();
    let prior: f64 = std::env::var("ADAPTIVE_BENCH_PRIOR").ok().and_then(|v| v.parse().ok()).unwrap_or(1.0);
    let rule = Rule { min: 3, max: 9, threshold: 0.95, prior };
    let command = "`cargo bench --bench adaptive_overlap`".to_owned();
    let mut rows = Vec::new();
    for (shape, outcome) in [
        ("VTON-shaped, 2,400 images of 6 models", vton(seed, rule)),
        ("A100-shaped, 1,200 questions", a100(seed, rule)),
    ] {
        let saved = 1.0 - outcome.adaptive_ratings as f64 / outcome.fixed_ratings as f64;
        let tau = match (outcome.tau_fixed, outcome.tau_truth) {
            (Some(f), Some(t)) => {
                format!("; model ranking τ {f:.2} against fixed-7's, {t:.2} against the planted order")
            }
            _ => String::new(),
        };
        println!(
            "{shape}: fixed-7 {} ratings, adaptive {} ({:.1} % fewer); labels equal to fixed-7's {:.1} % (fixed-7 with other raters: {:.1} %); right: fixed {:.1} %, adaptive {:.1} %{tau}",
            outcome.fixed_ratings,
            outcome.adaptive_ratings,
            saved * 100.0,
            outcome.same_as_fixed * 100.0,
            outcome.fixed_with_others * 100.0,
            outcome.fixed_truth * 100.0,
            outcome.adaptive_truth * 100.0
        );
        let tau_met = outcome.tau_fixed.is_none_or(|t| t >= 0.95);
        let met = saved >= 0.30 && outcome.same_as_fixed >= 0.97 && tau_met;
        rows.push(figures::Row {
            what: format!("adaptive overlap (min 3, max 9) against fixed 7, {shape}, 10 % spammers"),
            figure: format!(
                "{:.1} % fewer ratings ({} of {}); labels equal to fixed-7's {:.1} %{tau}",
                saved * 100.0,
                figures::thousands(outcome.adaptive_ratings),
                figures::thousands(outcome.fixed_ratings),
                outcome.same_as_fixed * 100.0
            ),
            baseline: format!(
                "fixed 7 on the same planted answers; planted truth recovered: fixed {:.1} %, adaptive {:.1} %; the \
                 floor: fixed-7's labels equal fixed-7's from seven other raters for {:.1} %",
                outcome.fixed_truth * 100.0,
                outcome.adaptive_truth * 100.0,
                outcome.fixed_with_others * 100.0
            ),
            target: format!("≥ 30 % fewer, ≥ 97 % equal labels, τ ≥ 0.95 ({})", figures::met(met)),
            command: command.clone(),
        });
    }
    figures::record(&rows, full_run);
}
