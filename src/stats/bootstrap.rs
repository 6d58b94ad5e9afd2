//! Percentile bootstrap confidence intervals.

use rand::{Rng, SeedableRng};

/// Mean of `values` with a percentile bootstrap interval at `level` (e.g.
/// 0.95) from `resamples` resamples, seeded for reproducibility. `None` for
/// no values.
pub fn mean_ci(values: &[f64], level: f64, resamples: usize, seed: u64) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let n = values.len();
    let mean = values.iter().sum::<f64>() / n as f64;
    if resamples == 0 {
        return Some((mean, mean, mean));
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut means: Vec<f64> =
        (0..resamples).map(|_| (0..n).map(|_| values[rng.random_range(0..n)]).sum::<f64>() / n as f64).collect();
    means.sort_by(f64::total_cmp);
    let tail = (1.0 - level) / 2.0;
    let at = |q: f64| means[((q * resamples as f64).floor() as usize).min(resamples - 1)];
    Some((mean, at(tail), at(1.0 - tail)))
}

/// [`mean_ci`] of each sample, in order, each with the same seed: the
/// samples are dealt round-robin over every core (a release-sized model
/// ranking is hundreds of millions of draws), with the same results as one
/// after the other.
pub fn mean_cis(samples: &[&[f64]], level: f64, resamples: usize, seed: u64) -> Vec<Option<(f64, f64, f64)>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get).min(samples.len().max(1));
    let mut intervals = vec![None; samples.len()];
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..cores)
            .map(|first| {
                scope.spawn(move || {
                    (first..samples.len())
                        .step_by(cores)
                        .map(|at| (at, mean_ci(samples[at], level, resamples, seed)))
                        .collect::<Vec<_>>()
                })
            })
            .collect();
        for thread in threads {
            let done = thread.join().unwrap_or_else(|panic| std::panic::resume_unwind(panic));
            for (at, interval) in done {
                intervals[at] = interval;
            }
        }
    });
    intervals
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_sample_gets_what_it_gets_alone() {
        let samples: Vec<Vec<f64>> =
            (0..7).map(|s| (0..40 + s * 13).map(|i| f64::from((i * s) % 5)).collect()).collect();
        let slices: Vec<&[f64]> = samples.iter().map(Vec::as_slice).chain([&[][..]]).collect();
        let alone: Vec<_> = slices.iter().map(|s| mean_ci(s, 0.95, 300, 7)).collect();
        assert_eq!(mean_cis(&slices, 0.95, 300, 7), alone);
        assert_eq!(alone.last(), Some(&None));
        assert!(mean_cis(&[], 0.95, 300, 7).is_empty());
    }

    #[test]
    fn interval_contains_the_mean_and_narrows_with_more_data() {
        let small: Vec<f64> = (0..10).map(|i| f64::from(i % 3)).collect();
        let large: Vec<f64> = (0..1000).map(|i| f64::from(i % 3)).collect();
        let (m, lo, hi) = mean_ci(&small, 0.95, 2000, 1).expect("values");
        assert!(lo <= m && m <= hi);
        let (m2, lo2, hi2) = mean_ci(&large, 0.95, 2000, 1).expect("values");
        assert!((m2 - 0.999).abs() < 1e-9);
        assert!(hi2 - lo2 < hi - lo);
        assert_eq!(mean_ci(&[2.0, 2.0], 0.95, 100, 1), Some((2.0, 2.0, 2.0)));
        assert_eq!(mean_ci(&[], 0.95, 100, 1), None);
    }
}
