//! Agreement coefficients other than alpha: percent agreement, Fleiss' kappa
//! and each coder's agreement with the others.

use std::collections::HashMap;
use std::hash::Hash;

/// The most frequent value of a tally when it is unique (no tie at the top).
pub fn unique_mode<T: Clone + Eq + Hash>(counts: &HashMap<T, usize>) -> Option<T> {
    let top = counts.values().copied().max()?;
    let mut at_top = counts.iter().filter(|(_, &n)| n == top);
    let first = at_top.next()?;
    if at_top.next().is_some() {
        return None;
    }
    Some(first.0.clone())
}

/// Percent agreement: over units with at least two values, the mean share of
/// coder pairs within the unit that gave the same value. `None` when no unit
/// is pairable.
pub fn percent_agreement<T: Eq + Hash>(units: &[Vec<T>]) -> Option<f64> {
    let mut total = 0.0;
    let mut pairable = 0usize;
    for unit in units {
        let m = unit.len();
        if m < 2 {
            continue;
        }
        let mut counts: HashMap<&T, usize> = HashMap::new();
        for v in unit {
            *counts.entry(v).or_default() += 1;
        }
        let agreeing: usize = counts.values().map(|&n| n * (n - 1)).sum();
        total += agreeing as f64 / (m * (m - 1)) as f64;
        pairable += 1;
    }
    (pairable > 0).then(|| total / pairable as f64)
}

/// Fleiss' kappa from per-unit category counts (`counts[unit][category]`).
///
/// Units may have different numbers of raters; units with fewer than two
/// ratings are skipped. `None` when no unit is pairable or when every rating
/// falls into one category (chance agreement is 1, kappa is undefined).
pub fn fleiss_kappa(counts: &[Vec<u32>]) -> Option<f64> {
    let categories = counts.iter().map(Vec::len).max().unwrap_or(0);
    let mut per_category = vec![0.0; categories];
    let mut total_ratings = 0.0;
    let mut observed_sum = 0.0;
    let mut units = 0usize;
    for unit in counts {
        let n: u32 = unit.iter().sum();
        if n < 2 {
            continue;
        }
        let n = f64::from(n);
        let same: f64 = unit.iter().map(|&c| f64::from(c) * (f64::from(c) - 1.0)).sum();
        observed_sum += same / (n * (n - 1.0));
        for (j, &c) in unit.iter().enumerate() {
            per_category[j] += f64::from(c);
        }
        total_ratings += n;
        units += 1;
    }
    if units == 0 {
        return None;
    }
    let observed = observed_sum / units as f64;
    let chance: f64 = per_category.iter().map(|&c| (c / total_ratings).powi(2)).sum();
    if (1.0 - chance).abs() < f64::EPSILON {
        return None;
    }
    Some((observed - chance) / (1.0 - chance))
}

/// One coder's agreement with the rest of the group.
#[derive(Debug, Clone, PartialEq)]
pub struct CoderAgreement<C> {
    /// The coder.
    pub coder: C,
    /// Units where the other coders had a unique most frequent value.
    pub compared: usize,
    /// Of those, units where this coder gave that value.
    pub agreed: usize,
}

impl<C> CoderAgreement<C> {
    /// Share of compared units where the coder agreed; `None` if nothing was compared.
    pub fn share(&self) -> Option<f64> {
        (self.compared > 0).then(|| self.agreed as f64 / self.compared as f64)
    }
}

/// For every coder, the share of their answers that equal the majority of the
/// *other* coders on the same unit. Units where the others tie for the most
/// frequent value, or where nobody else answered, are not counted.
///
/// `units` holds `(coder, value)` pairs per unit; coders come back sorted.
pub fn coder_agreement<C, T>(units: &[Vec<(C, T)>]) -> Vec<CoderAgreement<C>>
where
    C: Clone + Ord + Hash,
    T: Clone + Eq + Hash,
{
    let mut by_coder: std::collections::BTreeMap<C, (usize, usize)> = Default::default();
    for unit in units {
        let mut counts: HashMap<T, usize> = HashMap::new();
        for (_, v) in unit {
            *counts.entry(v.clone()).or_default() += 1;
        }
        for (coder, value) in unit {
            let entry = by_coder.entry(coder.clone()).or_default();
            // Remove this coder's own vote to see what the others said.
            if let Some(n) = counts.get_mut(value) {
                *n -= 1;
            }
            let others: HashMap<T, usize> =
                counts.iter().filter(|(_, &n)| n > 0).map(|(k, &n)| (k.clone(), n)).collect();
            if let Some(majority) = unique_mode(&others) {
                entry.0 += 1;
                if &majority == value {
                    entry.1 += 1;
                }
            }
            if let Some(n) = counts.get_mut(value) {
                *n += 1;
            }
        }
    }
    by_coder.into_iter().map(|(coder, (compared, agreed))| CoderAgreement { coder, compared, agreed }).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fleiss_kappa_matches_fleiss_1971_example() {
        // The classic example (10 subjects, 14 raters, 5 categories), kappa = 0.210.
        let table: Vec<Vec<u32>> = vec![
            vec![0, 0, 0, 0, 14],
            vec![0, 2, 6, 4, 2],
            vec![0, 0, 3, 5, 6],
            vec![0, 3, 9, 2, 0],
            vec![2, 2, 8, 1, 1],
            vec![7, 7, 0, 0, 0],
            vec![3, 2, 6, 3, 0],
            vec![2, 5, 3, 2, 2],
            vec![6, 5, 2, 1, 0],
            vec![0, 2, 2, 3, 7],
        ];
        let kappa = fleiss_kappa(&table).expect("defined");
        assert!((kappa - 0.210).abs() < 5e-4, "{kappa}");
        assert_eq!(fleiss_kappa(&[vec![3, 0], vec![2, 0]]), None);
        assert_eq!(fleiss_kappa(&[vec![1, 0]]), None);
    }

    #[test]
    fn percent_agreement_averages_pairwise_agreement_per_unit() {
        // Unit 1: all agree (1.0); unit 2: 1 of 3 pairs agree; unit 3 not pairable.
        let units = vec![vec![1, 1, 1], vec![1, 1, 2], vec![5]];
        let p = percent_agreement(&units).expect("defined");
        assert!((p - (1.0 + 1.0 / 3.0) / 2.0).abs() < 1e-12);
        assert_eq!(percent_agreement::<u8>(&[vec![1]]), None);
    }

    #[test]
    fn coder_agreement_compares_with_the_others_majority() {
        let units =
            vec![vec![("a", 1), ("b", 1), ("c", 2)], vec![("a", 3), ("b", 3), ("c", 3)], vec![("a", 1), ("b", 2)]];
        let result = coder_agreement(&units);
        let c = result.iter().find(|r| r.coder == "c").expect("c present");
        assert_eq!((c.compared, c.agreed), (2, 1));
        let a = result.iter().find(|r| r.coder == "a").expect("a present");
        // Unit 1: others b=1, c=2 tie -> not counted; unit 2 agreed; unit 3: b=2 differs.
        assert_eq!((a.compared, a.agreed), (2, 1));
        assert_eq!(a.share(), Some(0.5));
    }
}
