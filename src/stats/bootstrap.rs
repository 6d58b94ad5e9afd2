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

#[cfg(test)]
mod tests {
    use super::*;

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
