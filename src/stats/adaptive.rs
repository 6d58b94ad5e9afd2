//! When an item has had enough raters (adaptive overlap): the decision
//! rules, pure.
//!
//! * A choice question (A100 LAT) is decided when its leading choice cannot
//!   lose the lead with the raters still possible (lead > raters left), or
//!   when the posterior probability that it is the most chosen, under a
//!   symmetric Dirichlet prior on the choices' shares updated with the votes,
//!   reaches the threshold (default 0.95 with the uniform prior α = 1).
//! * A three-level rating (VTON) is decided when the 95 % interval of its
//!   mean (Student's t) lies within one level's half-width of the mean: its
//!   half-width is at most 0.5, so the mean is known to within half a level
//!   (Chow and Robbins' fixed-width sequential interval, 1965). Requiring
//!   the interval to sit inside the band of the level nearest the mean as
//!   well (so more raters could not move the rounded rating) was the rule
//!   before: on the planted campaigns it sent the images whose mean lies near
//!   a band's edge to the maximum, where their label changed more often than
//!   it settled (fewer labels equal to fixed-7's, 6 % more ratings).

/// What one counted answer says about its item, for deciding it.
#[derive(Debug, Clone, PartialEq)]
pub enum Vote {
    /// The choice picked (a choice question) of so many choices.
    Choice {
        /// The choice picked.
        picked: String,
        /// How many choices the question has (those nobody picked count 0).
        options: usize,
    },
    /// The rating given (an ordinal scale of levels 1, 2, 3, ...).
    Rating(f64),
}

/// An adaptive overlap's parameters: at least `min` and at most `max`
/// raters per item; a choice is decided at posterior probability
/// `threshold` under a symmetric Dirichlet(`prior`).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rule {
    /// Raters every item gets.
    pub min: u32,
    /// Raters no item gets more than.
    pub max: u32,
    /// The posterior probability at which a choice is decided.
    pub threshold: f64,
    /// The Dirichlet prior's concentration per choice.
    pub prior: f64,
}

impl Rule {
    /// Whether an item with these counted votes, after `raters` raters in
    /// all (counted or not: a rater who failed a check still took a place),
    /// needs no more: decided by its kind's rule, or at `max`.
    pub fn settled(&self, votes: &[Vote], raters: u32) -> bool {
        if raters >= self.max {
            return true;
        }
        if raters < self.min {
            return false;
        }
        let remaining = u64::from(self.max - raters);
        let ratings: Vec<f64> =
            votes.iter().filter_map(|v| if let Vote::Rating(r) = v { Some(*r) } else { None }).collect();
        if !ratings.is_empty() {
            return rating_decided(&ratings);
        }
        let mut counts: std::collections::BTreeMap<&str, u64> = std::collections::BTreeMap::new();
        let mut options = 0;
        for v in votes {
            if let Vote::Choice { picked, options: n } = v {
                *counts.entry(picked.as_str()).or_default() += 1;
                options = options.max(*n);
            }
        }
        let mut counts: Vec<u64> = counts.into_values().collect();
        counts.resize(counts.len().max(options), 0);
        choice_decided(&counts, remaining, self.prior, self.threshold)
    }
}

/// The two-sided 97.5 % quantile of Student's t with `df` degrees of
/// freedom (df 1 to 30 tabulated; the normal 1.96 beyond).
pub fn t975(df: usize) -> f64 {
    const TABLE: [f64; 30] = [
        12.706, 4.303, 3.182, 2.776, 2.571, 2.447, 2.365, 2.306, 2.262, 2.228, 2.201, 2.179, 2.160, 2.145, 2.131,
        2.120, 2.110, 2.101, 2.093, 2.086, 2.080, 2.074, 2.069, 2.064, 2.060, 2.056, 2.052, 2.048, 2.045, 2.042,
    ];
    match df {
        0 => f64::INFINITY,
        d if d <= 30 => TABLE[d - 1],
        _ => 1.96,
    }
}

/// Whether ratings (at least two) are decided: the 95 % interval of their
/// mean is at most half a level wide on either side (mean ± 0.5).
pub fn rating_decided(ratings: &[f64]) -> bool {
    let n = ratings.len();
    if n < 2 {
        return false;
    }
    let mean = ratings.iter().sum::<f64>() / n as f64;
    let var = ratings.iter().map(|r| (r - mean).powi(2)).sum::<f64>() / (n - 1) as f64;
    t975(n - 1) * (var / n as f64).sqrt() <= 0.5
}

/// Whether a choice question is decided: `counts` are the votes per choice
/// (every choice, voted or not), `remaining` the raters it may still get.
pub fn choice_decided(counts: &[u64], remaining: u64, prior: f64, threshold: f64) -> bool {
    let mut sorted = counts.to_vec();
    sorted.sort_unstable_by(|a, b| b.cmp(a));
    let (lead, second) = (sorted.first().copied().unwrap_or(0), sorted.get(1).copied().unwrap_or(0));
    if lead == 0 {
        return false;
    }
    // The leader keeps the lead even if every rater left picks the runner-up.
    if lead > second + remaining {
        return true;
    }
    lead > second && leader_probability(counts, prior) >= threshold
}

/// The posterior probability that the most voted choice has the largest
/// share, under Dirichlet(prior + counts): 20,000 draws, seeded by the
/// counts (the same votes always give the same answer).
pub fn leader_probability(counts: &[u64], prior: f64) -> f64 {
    use rand::SeedableRng;
    let Some((leader, _)) = counts.iter().enumerate().max_by_key(|(i, c)| (**c, std::cmp::Reverse(*i))) else {
        return 0.0;
    };
    let seed = counts.iter().fold(0x517c_c1b7_2722_0a95_u64, |h, c| (h ^ c).wrapping_mul(0x100_0000_01b3));
    let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
    const DRAWS: usize = 20_000;
    let mut wins = 0;
    let mut shares = vec![0.0; counts.len()];
    for _ in 0..DRAWS {
        for (s, c) in shares.iter_mut().zip(counts) {
            *s = gamma(prior + *c as f64, &mut rng);
        }
        let best = shares[leader];
        if shares.iter().enumerate().all(|(i, s)| i == leader || *s < best) {
            wins += 1;
        }
    }
    wins as f64 / DRAWS as f64
}

/// A Gamma(shape, 1) draw (Marsaglia and Tsang; shapes below 1 boosted).
fn gamma(shape: f64, rng: &mut impl rand::Rng) -> f64 {
    if shape < 1.0 {
        let u: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
        return gamma(shape + 1.0, rng) * u.powf(1.0 / shape);
    }
    let d = shape - 1.0 / 3.0;
    let c = 1.0 / (9.0 * d).sqrt();
    loop {
        let x = normal(rng);
        let v = (1.0 + c * x).powi(3);
        if v <= 0.0 {
            continue;
        }
        let u: f64 = rng.random::<f64>();
        if u < 1.0 - 0.0331 * x.powi(4) || u.ln() < 0.5 * x * x + d * (1.0 - v + v.ln()) {
            return d * v;
        }
    }
}

/// A standard normal draw (Box–Muller).
fn normal(rng: &mut impl rand::Rng) -> f64 {
    let u1: f64 = rng.random::<f64>().max(f64::MIN_POSITIVE);
    let u2: f64 = rng.random::<f64>();
    (-2.0 * u1.ln()).sqrt() * (std::f64::consts::TAU * u2).cos()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_t_quantiles_are_the_published_ones() {
        // Student's t, 0.975: df 1 12.706, df 2 4.303, df 8 2.306, df 30 2.042 (any table).
        assert_eq!((t975(1), t975(2), t975(8), t975(30), t975(100)), (12.706, 4.303, 2.306, 2.042, 1.96));
    }

    #[test]
    fn a_rating_is_decided_once_more_raters_could_not_move_its_level() {
        assert!(rating_decided(&[3.0, 3.0, 3.0]), "three raters agree: no spread");
        assert!(!rating_decided(&[3.0]), "one rater decides nothing");
        // 3, 3, 2: mean 2.667, s 0.577, half-width 4.303 x 0.333 = 1.43: the interval leaves [2.5, 3.5].
        assert!(!rating_decided(&[3.0, 3.0, 2.0]));
        // Nine raters, eight at 3 and one at 2: mean 2.889, s 0.333, half 2.306 x 0.111 = 0.256.
        assert!(rating_decided(&[3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 3.0, 2.0]));
        // Five raters, 4-1: mean 2.8, s 0.447, half 2.776 x 0.2 = 0.555: not yet within half a level.
        assert!(!rating_decided(&[3.0, 3.0, 3.0, 3.0, 2.0]));
        // Seven raters, 5-2: mean 2.714, s 0.488, half 2.447 x 0.184 = 0.451 <= 0.5: decided, although
        // the interval [2.26, 3.17] crosses 2.5 (the mean is known to half a level; its label is 3).
        assert!(rating_decided(&[3.0, 3.0, 3.0, 3.0, 3.0, 2.0, 2.0]));
        // Split between 1 and 3: undecided however many.
        assert!(!rating_decided(&[1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 1.0, 3.0, 2.0]));
    }

    #[test]
    fn a_choice_is_decided_when_the_leader_cannot_lose_or_is_almost_surely_ahead() {
        // 6-0 with 3 raters left: it cannot lose.
        assert!(choice_decided(&[6, 0, 0, 0, 0], 3, 1.0, 0.95));
        // 3-0 with 6 left: it could, and 3-0 of five choices is not yet 95 % sure.
        let p = leader_probability(&[3, 0, 0, 0, 0], 1.0);
        assert!(p > 0.5 && p < 0.95, "{p}");
        assert!(!choice_decided(&[3, 0, 0, 0, 0], 6, 1.0, 0.95));
        // A tie is never decided; a 2-1-0 split is far from sure.
        assert!(!choice_decided(&[2, 2, 0, 0, 0], 0, 1.0, 0.95));
        assert!(!choice_decided(&[2, 1, 0, 0, 0], 6, 1.0, 0.95));
        // Reproducible: the same votes give the same probability.
        assert_eq!(leader_probability(&[4, 1, 0, 0, 0], 1.0), leader_probability(&[4, 1, 0, 0, 0], 1.0));
        // Two choices, Beta posterior: P(p1 > 1/2 | 5-0, uniform prior) = 1 - 0.5^6 = 0.984375.
        let p = leader_probability(&[5, 0], 1.0);
        assert!((p - 0.984375).abs() < 0.005, "{p}");
    }
}
