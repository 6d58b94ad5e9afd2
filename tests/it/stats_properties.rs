//! Invariants of the statistics, checked on generated data.

use atelier::stats::alpha::{alpha, Level, ReliabilityData};
use proptest::prelude::*;

const LEVELS: [Level; 4] = [Level::Nominal, Level::Ordinal, Level::Interval, Level::Ratio];

/// Units x coders matrices over values 1..=5 with missing cells.
fn matrix() -> impl Strategy<Value = Vec<Vec<Option<u8>>>> {
    (2usize..6, 2usize..25).prop_flat_map(|(coders, units)| {
        prop::collection::vec(prop::collection::vec(prop::option::weighted(0.8, 1u8..=5), coders), units)
    })
}

fn to_data(m: &[Vec<Option<u8>>]) -> ReliabilityData {
    let rows: Vec<Vec<Option<f64>>> = m.iter().map(|r| r.iter().map(|v| v.map(f64::from)).collect()).collect();
    ReliabilityData::from_matrix(&rows)
}

proptest! {
    #[test]
    fn alpha_never_exceeds_one(m in matrix()) {
        for level in LEVELS {
            if let Ok(a) = alpha(&to_data(&m), level).alpha {
                prop_assert!(a <= 1.0 + 1e-12, "{level:?}: {a}");
                prop_assert!(a.is_finite());
            }
        }
    }

    #[test]
    fn perfect_agreement_gives_one(values in prop::collection::vec((1u8..=5, 2usize..5), 2..20)) {
        let m: Vec<Vec<Option<u8>>> = values.iter().map(|&(v, n)| vec![Some(v); n]).collect();
        let distinct: std::collections::BTreeSet<u8> = values.iter().map(|&(v, _)| v).collect();
        for level in LEVELS {
            let a = alpha(&to_data(&m), level).alpha;
            if distinct.len() > 1 {
                prop_assert_eq!(a, Ok(1.0));
            } else {
                prop_assert!(a.is_err());
            }
        }
    }

    #[test]
    fn permuting_coders_or_units_changes_nothing(m in matrix(), seed in any::<u64>()) {
        use rand::{seq::SliceRandom, SeedableRng};
        let mut rng = rand::rngs::StdRng::seed_from_u64(seed);
        let mut units = m.clone();
        units.shuffle(&mut rng);
        let coders = m[0].len();
        let mut order: Vec<usize> = (0..coders).collect();
        order.shuffle(&mut rng);
        let permuted: Vec<Vec<Option<u8>>> = units.iter().map(|r| order.iter().map(|&c| r[c]).collect()).collect();
        for level in LEVELS {
            let a = alpha(&to_data(&m), level).alpha;
            let b = alpha(&to_data(&permuted), level).alpha;
            match (a, b) {
                (Ok(x), Ok(y)) => prop_assert!((x - y).abs() < 1e-9),
                (x, y) => prop_assert_eq!(x, y),
            }
        }
    }

    #[test]
    fn renaming_nominal_categories_changes_nothing(m in matrix(), shift in 10u8..100) {
        // A non-monotonic relabelling: reverse the scale and shift it.
        let renamed: Vec<Vec<Option<u8>>> = m.iter().map(|r| r.iter().map(|v| v.map(|x| shift + (6 - x) * 3)).collect()).collect();
        let a = alpha(&to_data(&m), Level::Nominal).alpha;
        let b = alpha(&to_data(&renamed), Level::Nominal).alpha;
        match (a, b) {
            (Ok(x), Ok(y)) => prop_assert!((x - y).abs() < 1e-9),
            (x, y) => prop_assert_eq!(x, y),
        }
    }
}
