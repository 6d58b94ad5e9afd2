//! Krippendorff's alpha for nominal, ordinal, interval and ratio data.
//!
//! Computed through the coincidence matrix exactly as in Krippendorff,
//! "Computing Krippendorff's Alpha-Reliability" (2011). Units with fewer than
//! two values are not pairable and contribute nothing.

use std::collections::HashMap;

/// Level of measurement, which decides the distance between two values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Level {
    /// Categories without order: any two different values are equally far apart.
    Nominal,
    /// Ordered categories: distance grows with the number of values ranked between them.
    Ordinal,
    /// Numbers on an interval scale: squared difference.
    Interval,
    /// Numbers with a true zero: squared relative difference.
    Ratio,
}

impl Level {
    /// The lowercase name used on the command line and in JSON.
    pub fn name(self) -> &'static str {
        match self {
            Level::Nominal => "nominal",
            Level::Ordinal => "ordinal",
            Level::Interval => "interval",
            Level::Ratio => "ratio",
        }
    }
}

/// Why alpha has no value for a data set.
#[derive(Debug, Clone, Copy, PartialEq, Eq, thiserror::Error)]
pub enum AlphaUndefined {
    /// No unit has two or more values, so nothing can be compared.
    #[error("no pairable units (every unit has fewer than two values)")]
    NoPairableUnits,
    /// All pairable values are identical: expected disagreement is zero, so
    /// agreement cannot be told apart from chance.
    #[error("no variation (all pairable values are identical)")]
    NoVariation,
}

/// Reliability data in the shape alpha needs: per unit, the values the coders
/// gave it (missing values simply absent), coded as indexes into `values`.
#[derive(Debug, Clone, Default)]
pub struct ReliabilityData {
    /// Distinct values, sorted ascending (the order matters for ordinal,
    /// interval and ratio; nominal ignores it).
    values: Vec<f64>,
    /// Codes of all units, concatenated.
    codes: Vec<u32>,
    /// `codes[offsets[u]..offsets[u + 1]]` are the codes of unit `u`.
    offsets: Vec<usize>,
}

impl ReliabilityData {
    /// Builds the data from numeric values per unit (missing values omitted).
    pub fn from_units<I, U>(units: I) -> Self
    where
        I: IntoIterator<Item = U>,
        U: IntoIterator<Item = f64>,
    {
        let units: Vec<Vec<f64>> = units.into_iter().map(|u| u.into_iter().collect()).collect();
        let mut values: Vec<f64> = units.iter().flatten().copied().collect();
        values.sort_by(f64::total_cmp);
        values.dedup();
        let mut codes = Vec::with_capacity(units.iter().map(Vec::len).sum());
        let mut offsets = Vec::with_capacity(units.len() + 1);
        offsets.push(0);
        for unit in &units {
            for v in unit {
                // Every value is in `values`, so the search always succeeds.
                let code = values.partition_point(|x| x.total_cmp(v).is_lt());
                codes.push(code as u32);
            }
            offsets.push(codes.len());
        }
        Self { values, codes, offsets }
    }

    /// Builds the data from a units x coders matrix where `None` is missing.
    pub fn from_matrix(rows: &[Vec<Option<f64>>]) -> Self {
        Self::from_units(rows.iter().map(|row| row.iter().flatten().copied()))
    }

    /// Builds nominal data from labels: categories are numbered in order of
    /// first appearance (their order is irrelevant for nominal alpha).
    pub fn from_labels<I, U, S>(units: I) -> Self
    where
        I: IntoIterator<Item = U>,
        U: IntoIterator<Item = S>,
        S: AsRef<str>,
    {
        let mut index: HashMap<String, u32> = HashMap::new();
        let mut codes = Vec::new();
        let mut offsets = vec![0];
        for unit in units {
            for label in unit {
                let next = index.len() as u32;
                let code = *index.entry(label.as_ref().to_owned()).or_insert(next);
                codes.push(code);
            }
            offsets.push(codes.len());
        }
        let values = (0..index.len()).map(|i| i as f64).collect();
        Self { values, codes, offsets }
    }

    /// Builds the data directly from codes into a sorted list of distinct
    /// values; the fast path for callers that already hold coded ratings.
    ///
    /// Returns `None` if a code is out of range or `values` is not strictly
    /// increasing.
    pub fn from_codes<I, U>(values: Vec<f64>, units: I) -> Option<Self>
    where
        I: IntoIterator<Item = U>,
        U: AsRef<[u32]>,
    {
        if values.windows(2).any(|w| w[0].total_cmp(&w[1]).is_ge()) {
            return None;
        }
        let units = units.into_iter();
        let mut codes = Vec::with_capacity(units.size_hint().0 * 4);
        let mut offsets = Vec::with_capacity(units.size_hint().0 + 1);
        offsets.push(0);
        for unit in units {
            for &c in unit.as_ref() {
                if c as usize >= values.len() {
                    return None;
                }
                codes.push(c);
            }
            offsets.push(codes.len());
        }
        Some(Self { values, codes, offsets })
    }

    /// Number of units, pairable or not.
    pub fn units(&self) -> usize {
        self.offsets.len().saturating_sub(1)
    }

    fn unit(&self, u: usize) -> &[u32] {
        &self.codes[self.offsets[u]..self.offsets[u + 1]]
    }
}

/// Alpha together with the counts that explain it.
#[derive(Debug, Clone, PartialEq)]
pub struct AlphaReport {
    /// The coefficient, or why it is undefined.
    pub alpha: Result<f64, AlphaUndefined>,
    /// Units with at least two values.
    pub pairable_units: usize,
    /// Values in pairable units (n in Krippendorff's notation).
    pub pairable_values: usize,
}

/// Computes Krippendorff's alpha at the given level of measurement.
pub fn alpha(data: &ReliabilityData, level: Level) -> AlphaReport {
    let k = data.values.len();
    let mut coincidence = vec![0.0f64; k * k];
    let mut counts = vec![0u32; k];
    let mut touched: Vec<usize> = Vec::with_capacity(8);
    let mut pairable_units = 0;
    let mut pairable_values = 0;
    for u in 0..data.units() {
        let unit = data.unit(u);
        let m = unit.len();
        if m < 2 {
            continue;
        }
        pairable_units += 1;
        pairable_values += m;
        for &c in unit {
            let c = c as usize;
            if counts[c] == 0 {
                touched.push(c);
            }
            counts[c] += 1;
        }
        let weight = 1.0 / (m as f64 - 1.0);
        for &c in &touched {
            let nc = f64::from(counts[c]);
            for &d in &touched {
                let nd = f64::from(counts[d]);
                let pairs = if c == d { nc * (nc - 1.0) } else { nc * nd };
                coincidence[c * k + d] += pairs * weight;
            }
        }
        for &c in &touched {
            counts[c] = 0;
        }
        touched.clear();
    }
    let report = |alpha| AlphaReport { alpha, pairable_units, pairable_values };
    if pairable_units == 0 {
        return report(Err(AlphaUndefined::NoPairableUnits));
    }
    let marginals: Vec<f64> = (0..k).map(|c| coincidence[c * k..(c + 1) * k].iter().sum()).collect();
    let n: f64 = marginals.iter().sum();
    let delta = distance_matrix(&data.values, &marginals, level);
    let mut observed = 0.0;
    let mut expected = 0.0;
    for c in 0..k {
        for d in 0..k {
            let dist = delta[c * k + d];
            if dist == 0.0 {
                continue;
            }
            observed += coincidence[c * k + d] * dist;
            expected += marginals[c] * marginals[d] * dist;
        }
    }
    if expected <= 0.0 {
        return report(Err(AlphaUndefined::NoVariation));
    }
    report(Ok(1.0 - (n - 1.0) * observed / expected))
}

/// Squared distance between every two values (row-major, k x k).
fn distance_matrix(values: &[f64], marginals: &[f64], level: Level) -> Vec<f64> {
    let k = values.len();
    let mut delta = vec![0.0; k * k];
    // Cumulative marginals let the ordinal distance be read off in O(1).
    let mut cumulative = vec![0.0; k + 1];
    for (i, m) in marginals.iter().enumerate() {
        cumulative[i + 1] = cumulative[i] + m;
    }
    for c in 0..k {
        for d in 0..k {
            if c == d {
                continue;
            }
            delta[c * k + d] = match level {
                Level::Nominal => 1.0,
                Level::Ordinal => {
                    let (lo, hi) = if c < d { (c, d) } else { (d, c) };
                    let between = cumulative[hi + 1] - cumulative[lo];
                    let x = between - (marginals[lo] + marginals[hi]) / 2.0;
                    x * x
                }
                Level::Interval => (values[c] - values[d]).powi(2),
                Level::Ratio => {
                    let sum = values[c] + values[d];
                    if sum == 0.0 {
                        0.0
                    } else {
                        ((values[c] - values[d]) / sum).powi(2)
                    }
                }
            };
        }
    }
    delta
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Krippendorff (2011), "Computing Krippendorff's Alpha-Reliability",
    /// section C: 4 coders x 12 units with missing values.
    fn k2011() -> Vec<Vec<Option<f64>>> {
        let rows: [[Option<u8>; 4]; 12] = [
            [Some(1), Some(1), None, Some(1)],
            [Some(2), Some(2), Some(3), Some(2)],
            [Some(3), Some(3), Some(3), Some(3)],
            [Some(3), Some(3), Some(3), Some(3)],
            [Some(2), Some(2), Some(2), Some(2)],
            [Some(1), Some(2), Some(3), Some(4)],
            [Some(4), Some(4), Some(4), Some(4)],
            [Some(1), Some(1), Some(2), Some(1)],
            [Some(2), Some(2), Some(2), Some(2)],
            [None, Some(5), Some(5), Some(5)],
            [None, None, Some(1), Some(1)],
            [None, None, Some(3), None],
        ];
        rows.iter().map(|r| r.iter().map(|v| v.map(f64::from)).collect()).collect()
    }

    fn value(data: &ReliabilityData, level: Level) -> f64 {
        alpha(data, level).alpha.expect("alpha is defined")
    }

    #[test]
    fn matches_krippendorffs_published_worked_example() {
        let data = ReliabilityData::from_matrix(&k2011());
        let published =
            [(Level::Nominal, 0.743), (Level::Ordinal, 0.815), (Level::Interval, 0.849), (Level::Ratio, 0.797)];
        for (level, expected) in published {
            let got = value(&data, level);
            assert!((got - expected).abs() < 5e-4, "{level:?}: {got} vs {expected}");
        }
        let report = alpha(&data, Level::Nominal);
        assert_eq!(report.pairable_units, 11);
        assert_eq!(report.pairable_values, 40);
    }

    #[test]
    fn matches_wikipedia_exact_fractions() {
        // Wikipedia's computational example: nominal 56/81, interval 643/793.
        let rows: [[Option<u8>; 3]; 15] = [
            [None, Some(1), None],
            [None, None, None],
            [None, Some(2), Some(2)],
            [None, Some(1), Some(1)],
            [None, Some(3), Some(3)],
            [Some(3), Some(3), Some(4)],
            [Some(4), Some(4), Some(4)],
            [Some(1), Some(3), None],
            [Some(2), None, Some(2)],
            [Some(1), None, Some(1)],
            [Some(1), None, Some(1)],
            [Some(3), None, Some(3)],
            [Some(3), None, Some(3)],
            [None, None, None],
            [Some(3), None, Some(4)],
        ];
        let rows: Vec<Vec<Option<f64>>> = rows.iter().map(|r| r.iter().map(|v| v.map(f64::from)).collect()).collect();
        let data = ReliabilityData::from_matrix(&rows);
        assert!((value(&data, Level::Nominal) - 56.0 / 81.0).abs() < 1e-12);
        assert!((value(&data, Level::Interval) - 643.0 / 793.0).abs() < 1e-12);
    }

    #[test]
    fn binary_two_coder_example_from_krippendorff_2004() {
        let pairs = [(1, 0), (1, 1), (0, 1), (0, 0), (0, 0), (0, 1), (0, 0), (0, 1), (0, 0), (0, 0)];
        let data = ReliabilityData::from_units(pairs.iter().map(|&(a, b)| [f64::from(a), f64::from(b)]));
        assert!((value(&data, Level::Nominal) - 0.095238095238095).abs() < 1e-9);
    }

    #[test]
    fn undefined_cases_are_typed() {
        let lonely = ReliabilityData::from_units([vec![1.0], vec![2.0], vec![]]);
        assert_eq!(alpha(&lonely, Level::Nominal).alpha, Err(AlphaUndefined::NoPairableUnits));
        let same = ReliabilityData::from_units([vec![2.0, 2.0], vec![2.0, 2.0, 2.0]]);
        assert_eq!(alpha(&same, Level::Ordinal).alpha, Err(AlphaUndefined::NoVariation));
        let empty = ReliabilityData::default();
        assert_eq!(alpha(&empty, Level::Interval).alpha, Err(AlphaUndefined::NoPairableUnits));
    }

    #[test]
    fn labels_and_codes_agree_with_numbers() {
        let numeric = ReliabilityData::from_units([vec![1.0, 2.0, 1.0], vec![2.0, 2.0], vec![3.0, 1.0, 3.0]]);
        let labels = ReliabilityData::from_labels([vec!["a", "b", "a"], vec!["b", "b"], vec!["c", "a", "c"]]);
        let coded = ReliabilityData::from_codes(vec![1.0, 2.0, 3.0], [vec![0, 1, 0], vec![1, 1], vec![2, 0, 2]])
            .expect("valid codes");
        let n = value(&numeric, Level::Nominal);
        assert!((n - value(&labels, Level::Nominal)).abs() < 1e-12);
        assert!((value(&numeric, Level::Ordinal) - value(&coded, Level::Ordinal)).abs() < 1e-12);
        assert!(ReliabilityData::from_codes(vec![1.0, 1.0], [[0u32]]).is_none());
        assert!(ReliabilityData::from_codes(vec![1.0], [[3u32]]).is_none());
    }
}
