//! Percentile bootstrap confidence intervals.

use rand::{Rng, SeedableRng};
use std::collections::BTreeMap;
use std::sync::atomic::{AtomicUsize, Ordering};

/// Mean of `values` with a percentile bootstrap interval at `level` (e.g.
/// 0.95) from `resamples` resamples, seeded for reproducibility. `None` for
/// no values.
pub fn mean_ci(values: &[f64], level: f64, resamples: usize, seed: u64) -> Option<(f64, f64, f64)> {
    let mut means = resampled_means(&[values], resamples, seed);
    interval(values, means.pop().unwrap_or_default(), level)
}

/// [`mean_ci`] of each sample, in order, each with the same seed.
///
/// With one seed, every sample of one size draws the same positions, so
/// each size's draws are made once (per thread) and every sample of that
/// size is summed along them: a release-sized model ranking (27 samples of
/// ~7,000 images, 2,000 resamples) is 376 million positions drawn one
/// sample at a time, and drawing them was most of its time. The work is
/// dealt over every core; the results are [`mean_ci`]'s, bit for bit.
pub fn mean_cis(samples: &[&[f64]], level: f64, resamples: usize, seed: u64) -> Vec<Option<(f64, f64, f64)>> {
    let cores = std::thread::available_parallelism().map_or(1, std::num::NonZeroUsize::get);
    let mut by_size: BTreeMap<usize, Vec<usize>> = BTreeMap::new();
    for (at, sample) in samples.iter().enumerate() {
        by_size.entry(sample.len()).or_default().push(at);
    }
    // Each size's samples in up to one share per core (each share draws
    // the size's positions again: cheap beside the sums it spares).
    let shares: Vec<&[usize]> =
        by_size.values().flat_map(|members| members.chunks(members.len().div_ceil(cores))).collect();
    let next = AtomicUsize::new(0);
    let mut intervals = vec![None; samples.len()];
    std::thread::scope(|scope| {
        let threads: Vec<_> = (0..cores.min(shares.len()))
            .map(|_| {
                scope.spawn(|| {
                    let mut done = Vec::new();
                    while let Some(share) = shares.get(next.fetch_add(1, Ordering::Relaxed)) {
                        let values: Vec<&[f64]> = share.iter().map(|&at| samples[at]).collect();
                        let means = resampled_means(&values, resamples, seed);
                        for ((&at, values), means) in share.iter().zip(values).zip(means) {
                            done.push((at, interval(values, means, level)));
                        }
                    }
                    done
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

/// The means of `resamples` resamples (with replacement) of each sample,
/// all of one size, along one seeded draw of positions.
fn resampled_means(samples: &[&[f64]], resamples: usize, seed: u64) -> Vec<Vec<f64>> {
    let n = samples.first().map_or(0, |s| s.len());
    debug_assert!(samples.iter().all(|s| s.len() == n), "samples of one size");
    let mut means = vec![Vec::with_capacity(resamples); samples.len()];
    if n == 0 {
        return means;
    }
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    let mut sums = vec![0.0; samples.len()];
    for _ in 0..resamples {
        // -0.0, where `Iterator::sum` starts: the sums are its, bit for bit.
        sums.fill(-0.0);
        for _ in 0..n {
            let position = rng.random_range(0..n);
            for (sum, sample) in sums.iter_mut().zip(samples) {
                *sum += sample[position];
            }
        }
        for (means, sum) in means.iter_mut().zip(&sums) {
            means.push(sum / n as f64);
        }
    }
    means
}

/// The mean of `values` and the percentile interval at `level` of its
/// resampled `means` (the mean itself when there are none).
fn interval(values: &[f64], mut means: Vec<f64>, level: f64) -> Option<(f64, f64, f64)> {
    if values.is_empty() {
        return None;
    }
    let mean = values.iter().sum::<f64>() / values.len() as f64;
    if means.is_empty() {
        return Some((mean, mean, mean));
    }
    means.sort_by(f64::total_cmp);
    let resamples = means.len();
    let tail = (1.0 - level) / 2.0;
    let at = |q: f64| means[((q * resamples as f64).floor() as usize).min(resamples - 1)];
    Some((mean, at(tail), at(1.0 - tail)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The bootstrap as first written, one sample at a time: what
    /// [`mean_ci`] and [`mean_cis`] must give bit for bit (releases are
    /// verified by recomputing them).
    fn one_at_a_time(values: &[f64], level: f64, resamples: usize, seed: u64) -> Option<(f64, f64, f64)> {
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

    #[test]
    fn each_sample_gets_what_it_got_alone_one_draw_at_a_time() {
        // Sizes repeated (as a ranking's models are) and not; values with
        // many decimals, so that any change in the order of additions shows;
        // a sample of negative zeros and an empty one.
        let mut samples: Vec<Vec<f64>> = (0..9)
            .map(|s| (0..40 + (s % 3) * 13).map(|i| f64::from((i * (s + 1)) % 7) / 3.0 + f64::from(s) * 0.1).collect())
            .collect();
        samples.push(vec![-0.0; 40]);
        samples.push(Vec::new());
        let slices: Vec<&[f64]> = samples.iter().map(Vec::as_slice).collect();
        // Compared bit for bit (`==` would take -0.0 for 0.0).
        let bits = |intervals: Vec<Option<(f64, f64, f64)>>| -> Vec<Option<[u64; 3]>> {
            intervals.into_iter().map(|i| i.map(|(m, lo, hi)| [m.to_bits(), lo.to_bits(), hi.to_bits()])).collect()
        };
        for (resamples, seed) in [(300, 7), (1, 3), (0, 7)] {
            let alone = bits(slices.iter().map(|s| one_at_a_time(s, 0.95, resamples, seed)).collect());
            assert_eq!(bits(mean_cis(&slices, 0.95, resamples, seed)), alone);
            assert_eq!(bits(slices.iter().map(|s| mean_ci(s, 0.95, resamples, seed)).collect()), alone);
        }
        assert_eq!(mean_cis(&slices, 0.95, 300, 7).last(), Some(&None));
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
