//! Split-half human agreement: how well one random half of the annotators
//! predicts the other half, the ceiling any quality predictor can reach.

use super::correlation::{pairwise_accuracy, pearson, r_squared, spearman};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::{BTreeMap, BTreeSet};

/// One rating of one image by one annotator.
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    /// Image id.
    pub image: String,
    /// Group for pairwise accuracy (the garment-person pair).
    pub group: String,
    /// Annotator id.
    pub annotator: String,
    /// The rating value.
    pub value: f64,
}

/// Mean and standard deviation over repetitions.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct MeanSd {
    /// Mean over repetitions where the metric was defined.
    pub mean: Option<f64>,
    /// Sample standard deviation (n - 1); 0 for a single repetition.
    pub sd: Option<f64>,
}

impl MeanSd {
    /// Summarises the defined values.
    pub fn of(values: &[Option<f64>]) -> Self {
        let v: Vec<f64> = values.iter().flatten().copied().collect();
        if v.is_empty() {
            return Self { mean: None, sd: None };
        }
        let mean = v.iter().sum::<f64>() / v.len() as f64;
        let sd = if v.len() > 1 {
            (v.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / (v.len() - 1) as f64).sqrt()
        } else {
            0.0
        };
        Self { mean: Some(mean), sd: Some(sd) }
    }
}

/// Split-half agreement on the VTON metrics.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplitHalf {
    /// Pearson between the halves' mean scores.
    pub plcc: MeanSd,
    /// Spearman between the halves' mean scores.
    pub srcc: MeanSd,
    /// R² of the second half's scores as a prediction of the first's.
    pub r2: MeanSd,
    /// Pairwise accuracy pooled over all pairs.
    pub pairwise_micro: MeanSd,
    /// Pairwise accuracy averaged over groups.
    pub pairwise_macro: MeanSd,
    /// Repetitions run.
    pub repetitions: usize,
}

/// Per image: the rating sums and counts within each half, and its group.
type HalfSums<'a> = BTreeMap<&'a str, ([f64; 2], [usize; 2], &'a str)>;

/// The random halvings (seeded): for each repetition, the annotators of the
/// first half. The human ceiling and the half-label predictor scores use the
/// same halvings for the same seed.
fn halvings(ratings: &[Rating], repetitions: usize, seed: u64) -> Vec<BTreeSet<&str>> {
    let annotators: Vec<&str> =
        ratings.iter().map(|r| r.annotator.as_str()).collect::<BTreeSet<_>>().into_iter().collect();
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    (0..repetitions)
        .map(|_| {
            let mut shuffled = annotators.clone();
            shuffled.shuffle(&mut rng);
            shuffled[..shuffled.len() / 2].iter().copied().collect()
        })
        .collect()
}

fn half_sums<'a>(ratings: &'a [Rating], first: &BTreeSet<&str>) -> HalfSums<'a> {
    let mut sums: HalfSums = BTreeMap::new();
    for r in ratings {
        let half = usize::from(!first.contains(r.annotator.as_str()));
        let e = sums.entry(r.image.as_str()).or_insert(([0.0; 2], [0; 2], r.group.as_str()));
        e.0[half] += r.value;
        e.1[half] += 1;
    }
    sums
}

/// For each of the halvings [`split_half`] uses (same seed), every image's
/// mean rating within the first half: labels from half of the annotators,
/// for scoring a predictor on the same footing as the human ceiling.
pub fn first_half_means(ratings: &[Rating], repetitions: usize, seed: u64) -> Vec<BTreeMap<String, f64>> {
    halvings(ratings, repetitions, seed)
        .iter()
        .map(|first| {
            half_sums(ratings, first)
                .into_iter()
                .filter(|(_, (_, n, _))| n[0] > 0)
                .map(|(image, (s, n, _))| (image.to_owned(), s[0] / n[0] as f64))
                .collect()
        })
        .collect()
}

/// Splits the annotators at random into two halves `repetitions` times
/// (seeded, so the result is reproducible), scores each image by its mean
/// rating within each half, and compares the halves on images rated in both.
pub fn split_half(ratings: &[Rating], repetitions: usize, seed: u64) -> SplitHalf {
    let mut runs: [Vec<Option<f64>>; 5] = Default::default();
    for first in halvings(ratings, repetitions, seed) {
        let (mut a, mut b, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for (s, n, g) in half_sums(ratings, &first).values() {
            if n[0] > 0 && n[1] > 0 {
                a.push(s[0] / n[0] as f64);
                b.push(s[1] / n[1] as f64);
                groups.push(*g);
            }
        }
        let pw = pairwise_accuracy(&groups, &a, &b);
        runs[0].push(pearson(&a, &b));
        runs[1].push(spearman(&a, &b));
        runs[2].push(r_squared(&a, &b));
        runs[3].push(pw.micro);
        runs[4].push(pw.macro_);
    }
    SplitHalf {
        plcc: MeanSd::of(&runs[0]),
        srcc: MeanSd::of(&runs[1]),
        r2: MeanSd::of(&runs[2]),
        pairwise_micro: MeanSd::of(&runs[3]),
        pairwise_macro: MeanSd::of(&runs[4]),
        repetitions,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rating(image: usize, annotator: usize, value: f64) -> Rating {
        Rating {
            image: format!("i{image}"),
            group: format!("g{}", image / 3),
            annotator: format!("a{annotator}"),
            value,
        }
    }

    #[test]
    fn identical_annotators_agree_perfectly_and_noise_lowers_agreement() {
        let truth = |i: usize| 1.0 + (i % 3) as f64;
        let perfect: Vec<Rating> = (0..30).flat_map(|i| (0..6).map(move |a| rating(i, a, truth(i)))).collect();
        let r = split_half(&perfect, 10, 7);
        assert!((r.plcc.mean.expect("defined") - 1.0).abs() < 1e-12);
        assert!(r.plcc.sd.expect("defined") < 1e-12);
        assert_eq!(r.pairwise_micro.mean, Some(1.0));
        // Annotators 0 and 1 answer at random: the halves now disagree somewhat.
        let noisy: Vec<Rating> = (0..30)
            .flat_map(|i| {
                (0..6).map(move |a| rating(i, a, if a < 2 { 1.0 + ((i * 7 + a) % 3) as f64 } else { truth(i) }))
            })
            .collect();
        let r = split_half(&noisy, 10, 7);
        let plcc = r.plcc.mean.expect("defined");
        assert!(plcc < 1.0 && plcc > 0.0, "{plcc}");
        assert!(r.plcc.sd.expect("defined") > 0.0);
        // Same seed, same result.
        assert_eq!(split_half(&noisy, 10, 7), r);
    }

    #[test]
    fn mean_sd_ignores_undefined_runs() {
        let m = MeanSd::of(&[Some(1.0), None, Some(3.0)]);
        assert_eq!(m.mean, Some(2.0));
        assert!((m.sd.expect("defined") - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(MeanSd::of(&[None]).mean, None);
    }
}
