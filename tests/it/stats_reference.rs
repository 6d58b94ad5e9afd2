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
        crate::support::say_skipped(
            "alpha_matches_the_shared_reference_files_when_present: ../shared/reference/alpha not found \
             (the published values are also checked in src/stats/alpha.rs)",
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

#[test]
fn retrieval_aucs_match_scikit_learn_on_random_data_with_ties() {
    use atelier::stats::retrieval::{retrieval_metrics, ScoredPair};
    let fixture: Value = serde_json::from_str(include_str!("../fixtures/metrics_random.json")).expect("JSON");
    let cases = fixture["retrieval"].as_array().expect("cases");
    assert!(cases.len() >= 25);
    for (i, case) in cases.iter().enumerate() {
        let pairs = case["pairs"].as_array().expect("pairs");
        let truth: Vec<(String, String, bool)> = pairs
            .iter()
            .map(|p| {
                (
                    p["query"].as_str().expect("q").to_owned(),
                    p["candidate"].as_str().expect("c").to_owned(),
                    p["label"] == 1,
                )
            })
            .collect();
        let scores: Vec<ScoredPair> = pairs
            .iter()
            .map(|p| ScoredPair {
                query: p["query"].as_str().expect("q").to_owned(),
                candidate: p["candidate"].as_str().expect("c").to_owned(),
                score: p["score"].as_f64().expect("score"),
            })
            .collect();
        let r = retrieval_metrics(&truth, &scores, &[5]);
        let got = [
            ("roc_auc_micro", r.roc_auc_micro),
            ("roc_auc_macro", r.roc_auc_macro),
            ("pr_auc_micro", r.pr_auc_micro),
            ("pr_auc_macro", r.pr_auc_macro),
        ];
        for (name, value) in got {
            let want = case["expected"][name].as_f64();
            match (want, value) {
                (None, None) => {}
                (Some(w), Some(g)) => assert!((w - g).abs() < 1e-9, "case {i} {name}: sklearn {w}, ours {g}"),
                _ => panic!("case {i} {name}: sklearn {want:?}, ours {value:?}"),
            }
        }
    }
}

#[test]
fn correlations_match_scipy_and_scikit_learn() {
    use atelier::stats::correlation::{pearson, r_squared, spearman};
    let fixture: Value = serde_json::from_str(include_str!("../fixtures/metrics_random.json")).expect("JSON");
    for (i, case) in fixture["rating"].as_array().expect("cases").iter().enumerate() {
        let v = |k: &str| {
            case[k].as_array().expect("array").iter().map(|x| x.as_f64().expect("number")).collect::<Vec<f64>>()
        };
        let (x, y) = (v("x"), v("y"));
        let close = |name: &str, ours: Option<f64>| {
            let want = case[name].as_f64().expect("reference value");
            let got = ours.expect("defined");
            assert!((want - got).abs() < 1e-9, "case {i} {name}: reference {want}, ours {got}");
        };
        close("pearson", pearson(&x, &y));
        close("spearman", spearman(&x, &y));
        close("r2", r_squared(&x, &y));
    }
}
