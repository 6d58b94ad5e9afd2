//! Benchmark at the scale of the published VTON benchmark: 2,139
//! questionnaires of 50 items rated by 4 workers each on a 3-level scale
//! (about 430,000 ratings). Times ordinal alpha per questionnaire plus the
//! mean score per item, on one core, and prints the median of several runs.
//!
//! Run with `cargo bench --bench vton_alpha`; `scripts/bench.sh` runs it
//! beside the Python reference and writes BENCHMARKS.md.

use atelier::stats::aggregate::mean_score;
use atelier::stats::alpha::{alpha, Level, ReliabilityData};
use rand::{Rng, SeedableRng};
use std::hint::black_box;
use std::time::Instant;

const QUESTIONNAIRES: usize = 2_139;
const ITEMS: usize = 50;
const RATERS: usize = 4;

/// Ratings as codes 0..3 (for levels 1..3), per questionnaire, per item.
fn workload() -> Vec<Vec<[u32; RATERS]>> {
    let mut rng = rand::rngs::StdRng::seed_from_u64(42);
    (0..QUESTIONNAIRES)
        .map(|_| {
            (0..ITEMS)
                .map(|_| {
                    let truth: u32 = rng.random_range(0..3);
                    std::array::from_fn(|_| if rng.random_bool(0.7) { truth } else { rng.random_range(0..3) })
                })
                .collect()
        })
        .collect()
}

fn run(work: &[Vec<[u32; RATERS]>]) -> (f64, f64) {
    let mut alpha_sum = 0.0;
    let mut score_sum = 0.0;
    let mut ratings = Vec::with_capacity(RATERS);
    for questionnaire in work {
        if let Some(data) = ReliabilityData::from_codes(vec![1.0, 2.0, 3.0], questionnaire.iter()) {
            alpha_sum += alpha(&data, Level::Ordinal).alpha.unwrap_or(0.0);
        }
        for item in questionnaire {
            ratings.clear();
            ratings.extend(item.iter().map(|&c| c as u8 + 1));
            score_sum += mean_score::<3>(&ratings).map_or(0.0, |s| s.mean);
        }
    }
    (alpha_sum, score_sum)
}

fn main() {
    let work = workload();
    let ratings: usize = work.iter().map(|q| q.len() * RATERS).sum();
    let mut times = Vec::new();
    let mut check = (0.0, 0.0);
    for _ in 0..15 {
        let start = Instant::now();
        check = black_box(run(black_box(&work)));
        times.push(start.elapsed().as_secs_f64());
    }
    times.sort_by(f64::total_cmp);
    let median = times[times.len() / 2];
    println!("workload: {QUESTIONNAIRES} questionnaires x {ITEMS} items x {RATERS} raters = {ratings} ratings");
    println!("mean alpha over questionnaires: {:.4}", check.0 / QUESTIONNAIRES as f64);
    println!("median of {} runs: {:.2} ms (min {:.2} ms)", times.len(), median * 1e3, times[0] * 1e3);
    println!("BENCH_SECONDS={median}");
}
