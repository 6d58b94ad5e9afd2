//! Split-half human agreement: how well one random half of the annotators
//! predicts the other half, the ceiling any quality predictor can reach.

use super::correlation::{pairwise_accuracy, pearson, r_squared, spearman};
use rand::seq::SliceRandom;
use rand::SeedableRng;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::sync::Arc;

/// One rating of one image by one annotator. The ids are shared text (one
/// copy per image, group and annotator, however many ratings).
#[derive(Debug, Clone, PartialEq)]
pub struct Rating {
    /// Image id.
    pub image: Arc<str>,
    /// Group for pairwise accuracy (the garment-person pair).
    pub group: Arc<str>,
    /// Annotator id.
    pub annotator: Arc<str>,
    /// The rating value.
    pub value: f64,
}

/// Mean and standard deviation over repetitions.
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (the VTON ground truth is written so).
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
/// Fields in alphabetical order, so that written directly it is the same
/// text as through a `Value` (the VTON ground truth is written so).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SplitHalf {
    /// Pairwise accuracy averaged over groups.
    pub pairwise_macro: MeanSd,
    /// Pairwise accuracy pooled over all pairs.
    pub pairwise_micro: MeanSd,
    /// Pearson between the halves' mean scores.
    pub plcc: MeanSd,
    /// R² of the second half's scores as a prediction of the first's.
    pub r2: MeanSd,
    /// Repetitions run.
    pub repetitions: usize,
    /// Spearman between the halves' mean scores.
    pub srcc: MeanSd,
}

/// The ratings with annotators and images numbered in sorted order: each
/// repetition then indexes arrays instead of comparing strings (a release has
/// hundreds of thousands of ratings), with the same sums in the same order.
struct Numbered<'a> {
    /// Annotators, sorted.
    annotators: Vec<&'a str>,
    /// Images, sorted, with the group of each image's first rating.
    images: Vec<(&'a str, &'a str)>,
    /// (annotator, image, value) per rating, in the ratings' order.
    rows: Vec<(usize, usize, f64)>,
}

impl<'a> Numbered<'a> {
    fn of(ratings: &'a [Rating]) -> Self {
        // Distinct names hashed, then sorted once: hundreds of thousands of
        // ratings, thousands of names.
        let mut seen: HashSet<&str> = HashSet::new();
        let mut groups: HashMap<&str, &str> = HashMap::new();
        for r in ratings {
            seen.insert(&*r.annotator);
            groups.entry(&*r.image).or_insert(&*r.group);
        }
        let mut annotators: Vec<&str> = seen.into_iter().collect();
        annotators.sort_unstable();
        let mut images: Vec<(&str, &str)> = groups.into_iter().collect();
        images.sort_unstable_by(|a, b| a.0.cmp(b.0));
        let annotator_index: HashMap<&str, usize> = annotators.iter().enumerate().map(|(i, a)| (*a, i)).collect();
        let image_index: HashMap<&str, usize> = images.iter().enumerate().map(|(i, (name, _))| (*name, i)).collect();
        let rows = ratings.iter().map(|r| (annotator_index[&*r.annotator], image_index[&*r.image], r.value)).collect();
        Self { annotators, images, rows }
    }

    /// The random halvings (seeded): for each repetition, whether each
    /// annotator is in the first half. The human ceiling and the half-label
    /// predictor scores use the same halvings for the same seed.
    fn halvings(&self, repetitions: usize, seed: u64) -> Vec<Vec<bool>> {
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..repetitions)
            .map(|_| {
                let mut shuffled: Vec<usize> = (0..self.annotators.len()).collect();
                shuffled.shuffle(&mut rng);
                let mut first = vec![false; self.annotators.len()];
                for &a in &shuffled[..shuffled.len() / 2] {
                    first[a] = true;
                }
                first
            })
            .collect()
    }

    /// Per image (in sorted order): the rating sums and counts within each half.
    fn half_sums(&self, first: &[bool]) -> Vec<([f64; 2], [usize; 2])> {
        let mut sums = vec![([0.0; 2], [0; 2]); self.images.len()];
        for &(annotator, image, value) in &self.rows {
            let half = usize::from(!first[annotator]);
            sums[image].0[half] += value;
            sums[image].1[half] += 1;
        }
        sums
    }
}

/// For each of the halvings [`split_half`] uses (same seed), every image's
/// mean rating within the first half: labels from half of the annotators,
/// for scoring a predictor on the same footing as the human ceiling.
pub fn first_half_means(ratings: &[Rating], repetitions: usize, seed: u64) -> Vec<BTreeMap<String, f64>> {
    let numbered = Numbered::of(ratings);
    numbered
        .halvings(repetitions, seed)
        .iter()
        .map(|first| {
            numbered
                .half_sums(first)
                .into_iter()
                .zip(&numbered.images)
                .filter(|((_, n), _)| n[0] > 0)
                .map(|((s, n), (image, _))| ((*image).to_owned(), s[0] / n[0] as f64))
                .collect()
        })
        .collect()
}

/// Splits the annotators at random into two halves `repetitions` times
/// (seeded, so the result is reproducible), scores each image by its mean
/// rating within each half, and compares the halves on images rated in both.
pub fn split_half(ratings: &[Rating], repetitions: usize, seed: u64) -> SplitHalf {
    let mut runs: [Vec<Option<f64>>; 5] = Default::default();
    let numbered = Numbered::of(ratings);
    for first in numbered.halvings(repetitions, seed) {
        let (mut a, mut b, mut groups) = (Vec::new(), Vec::new(), Vec::new());
        for ((s, n), (_, g)) in numbered.half_sums(&first).iter().zip(&numbered.images) {
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
    use std::collections::BTreeSet;

    fn rating(image: usize, annotator: usize, value: f64) -> Rating {
        Rating {
            image: format!("i{image}").into(),
            group: format!("g{}", image / 3).into(),
            annotator: format!("a{annotator}").into(),
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

    /// The halves as first written, with strings for keys: the numbered
    /// version must give exactly these means (same shuffles, same sums).
    fn first_half_means_by_name(ratings: &[Rating], repetitions: usize, seed: u64) -> Vec<BTreeMap<String, f64>> {
        let annotators: Vec<&str> =
            ratings.iter().map(|r| &*r.annotator).collect::<BTreeSet<_>>().into_iter().collect();
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        (0..repetitions)
            .map(|_| {
                let mut shuffled = annotators.clone();
                shuffled.shuffle(&mut rng);
                let first: BTreeSet<&str> = shuffled[..shuffled.len() / 2].iter().copied().collect();
                let mut sums: BTreeMap<&str, (f64, usize)> = BTreeMap::new();
                for r in ratings.iter().filter(|r| first.contains(&*r.annotator)) {
                    let e = sums.entry(&*r.image).or_default();
                    e.0 += r.value;
                    e.1 += 1;
                }
                sums.into_iter().map(|(image, (s, n))| (image.to_owned(), s / n as f64)).collect()
            })
            .collect()
    }

    #[test]
    fn numbered_halves_give_exactly_the_string_keyed_means() {
        // Uneven coverage: annotator a rates image i when (i + a) % 4 != 0, values vary.
        let ratings: Vec<Rating> = (0..120)
            .flat_map(|i| {
                (0..13)
                    .filter(move |a| (i + a) % 4 != 0)
                    .map(move |a| rating(i, a, 1.0 + ((i * 31 + a * 7) % 3) as f64))
            })
            .collect();
        for seed in [0, 7, 2026] {
            assert_eq!(first_half_means(&ratings, 10, seed), first_half_means_by_name(&ratings, 10, seed));
        }
    }

    #[test]
    fn mean_sd_ignores_undefined_runs() {
        let m = MeanSd::of(&[Some(1.0), None, Some(3.0)]);
        assert_eq!(m.mean, Some(2.0));
        assert!((m.sd.expect("defined") - 2f64.sqrt()).abs() < 1e-12);
        assert_eq!(MeanSd::of(&[None]).mean, None);
    }
}
