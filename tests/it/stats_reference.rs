//! Krippendorff's alpha against published values and the PyPI package.

use atelier::stats::alpha::{alpha, Level, ReliabilityData};
use serde_json::Value;
use std::path::Path;

const LEVELS: [Level; 4] = [Level::Nominal, Level::Ordinal, Level::Interval, Level::Ratio];

fn level_value(data: &ReliabilityData, level: Level) -> Option<f64> {
    alpha(data, level).alpha.ok()
}

fn assert_matches(name: &str, data: &ReliabilityData, expected: &Value, tolerance: f64) {
    for level in LEVELS {
        let want = expected[level.name()].as_f64();
        let got = level_value(data, level);
        match (want, got) {
            (None, None) => {}
            (Some(w), Some(g)) => assert!((w - g).abs() < tolerance, "{name} {level:?}: expected {w}, got {g}"),
            _ => panic!("{name} {level:?}: expected {want:?}, got {got:?}"),
        }
    }
}

#[test]
fn alpha_matches_the_pypi_krippendorff_package_on_random_matrices() {
    let text = include_str!("../fixtures/alpha_random.json");
    let fixture: Value = serde_json::from_str(text).expect("fixture is JSON");
    let cases = fixture["cases"].as_array().expect("cases");
    assert!(cases.len() >= 40);
    for (i, case) in cases.iter().enumerate() {
        let rows: Vec<Vec<Option<f64>>> = case["units"]
            .as_array()
            .expect("units")
            .iter()
            .map(|u| u.as_array().expect("row").iter().map(Value::as_f64).collect())
            .collect();
        let data = ReliabilityData::from_matrix(&rows);
        assert_matches(&format!("case {i}"), &data, &case["expected"], 1e-9);
    }
}

/// Reads a wide reliability file (no header, empty field = missing).
fn read_wide(path: &Path) -> ReliabilityData {
    let text = std::fs::read_to_string(path).expect("readable reference file");
    let rows: Vec<Vec<Option<f64>>> = text
        .lines()
        .filter(|l| !l.is_empty())
        .map(|l| l.split(',').map(|f| f.trim().parse::<f64>().ok()).collect())
        .collect();
    ReliabilityData::from_matrix(&rows)
}

#[test]
fn alpha_matches_the_shared_reference_files_when_present() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("../shared/reference/alpha");
    let Ok(expected) = std::fs::read_to_string(dir.join("expected.json")) else {
        eprintln!(
            "SKIPPED: ../shared/reference/alpha not found; the published values are also checked in src/stats/alpha.rs"
        );
        return;
    };
    let expected: Value = serde_json::from_str(&expected).expect("expected.json is JSON");
    let files = expected.as_object().expect("object");
    assert!(files.len() >= 6);
    for (file, values) in files {
        assert_matches(file, &read_wide(&dir.join(file)), values, 1e-9);
    }
}
