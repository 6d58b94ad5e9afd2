//! `atelier stats ...` driven as a user would, through the real binary.

use std::process::Command;

/// Runs the binary; returns (exit success, stdout, stderr).
pub fn atelier(args: &[&str]) -> (bool, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_atelier")).args(args).output().expect("binary runs");
    (
        out.status.success(),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// Writes `content` to a fresh file in `dir` and returns its path as a string.
pub fn write(dir: &tempfile::TempDir, name: &str, content: &str) -> String {
    let path = dir.path().join(name);
    std::fs::write(&path, content).expect("temp file written");
    path.to_string_lossy().into_owned()
}

const K2011_WIDE: &str =
    "1,1,,1\n2,2,3,2\n3,3,3,3\n3,3,3,3\n2,2,2,2\n1,2,3,4\n4,4,4,4\n1,1,2,1\n2,2,2,2\n,5,5,5\n,,1,1\n,,3,\n";

#[test]
fn alpha_prints_the_published_value_and_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file = write(&dir, "k2011.csv", K2011_WIDE);
    let (ok, out, _) = atelier(&["stats", "alpha", "--level", "ordinal", &file]);
    assert!(ok);
    let value: f64 = out.trim().parse().expect("a number");
    assert!((value - 0.8153875037548814).abs() < 1e-12);

    let (ok, out, _) = atelier(&["stats", "alpha", "--level", "nominal", "--json", &file]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!((json["alpha"].as_f64().expect("alpha") - 0.743421052631579).abs() < 1e-12);
    assert_eq!(json["level"], "nominal");
    assert_eq!(json["units"], 12);
    assert_eq!(json["pairable_values"], 40);
    assert_eq!(json["coders"], 4);
}

#[test]
fn alpha_long_format_equals_wide_and_rejects_duplicates() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut long = String::from("unit,coder,value\n");
    for (u, line) in K2011_WIDE.lines().enumerate() {
        for (c, v) in line.split(',').enumerate() {
            if !v.is_empty() {
                long.push_str(&format!("u{u},c{c},{v}\n"));
            }
        }
    }
    let file = write(&dir, "long.csv", &long);
    let (ok, out, _) = atelier(&["stats", "alpha", "--level", "interval", "--format", "long", "--json", &file]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!((json["alpha"].as_f64().expect("alpha") - 0.8491071428571428).abs() < 1e-12);

    let dup = write(&dir, "dup.csv", "u1,a,1\nu1,b,2\nu1,a,2\n");
    let (ok, _, err) = atelier(&["stats", "alpha", "--level", "nominal", "--format", "long", &dup]);
    assert!(!ok);
    assert!(err.contains(":3:") && err.contains("line 1"), "{err}");
}

#[test]
fn alpha_undefined_is_null_and_bad_input_names_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let same = write(&dir, "same.csv", "2,2\n2,2\n");
    let (ok, out, _) = atelier(&["stats", "alpha", "--level", "ratio", "--json", &same]);
    assert!(ok);
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert!(json["alpha"].is_null());

    let ragged = write(&dir, "ragged.csv", "1,2\n1,2,3\n");
    let (ok, out, err) = atelier(&["stats", "alpha", "--level", "nominal", &ragged]);
    assert!(!ok && out.is_empty());
    assert!(err.contains("ragged.csv:2:"), "{err}");

    let text = write(&dir, "text.csv", "1,2\n1,high\n");
    let (ok, _, err) = atelier(&["stats", "alpha", "--level", "interval", &text]);
    assert!(!ok);
    assert!(err.contains(":2:") && err.contains("high"), "{err}");
    // Nominal data may be labels.
    let (ok, _, _) = atelier(&["stats", "alpha", "--level", "nominal", &text]);
    assert!(ok);

    // A missing file is named once, with the reason once.
    let missing = dir.path().join("missing.csv");
    let (ok, _, err) = atelier(&["stats", "alpha", "--level", "nominal", &missing.to_string_lossy()]);
    assert!(!ok);
    assert_eq!(err.matches("missing.csv").count(), 1, "{err}");
    assert_eq!(err.matches("os error 2").count(), 1, "{err}");
}

#[test]
fn aggregate_majority_applies_the_tie_rule() {
    let dir = tempfile::tempdir().expect("tempdir");
    let file =
        write(&dir, "votes.csv", "item,annotator,label\ni1,a,yes\ni1,b,no\ni2,a,3\ni2,b,3\ni2,c,1\ni3,a,2\ni3,b,1\n");
    let (ok, out, _) = atelier(&["stats", "aggregate", "--method", "majority", "--ties", "negative", &file]);
    assert!(ok);
    assert_eq!(out, "item,label,confidence\ni1,no,0.5\ni2,3,0.6666666666666666\ni3,,0.5\n");
    let (_, out, _) = atelier(&["stats", "aggregate", "--method", "majority", "--ties", "low", &file]);
    assert!(out.contains("i3,1,0.5"));
    let (_, out, _) = atelier(&["stats", "aggregate", "--ties", "none", &file]);
    assert!(out.contains("i1,,0.5"));

    let missing = write(&dir, "missing.csv", "item,label\ni1,yes\n");
    let (ok, _, err) = atelier(&["stats", "aggregate", &missing]);
    assert!(!ok && err.contains("annotator"), "{err}");
}

#[test]
fn aggregate_dawid_skene_outputs_posteriors() {
    let dir = tempfile::tempdir().expect("tempdir");
    let mut csv = String::from("item,annotator,label\n");
    for i in 0..10 {
        for a in ["a", "b", "c"] {
            csv.push_str(&format!("i{i},{a},{}\n", if i % 2 == 0 { "cat" } else { "dog" }));
        }
    }
    let file = write(&dir, "ds.csv", &csv);
    let (ok, out, _) = atelier(&["stats", "aggregate", "--method", "dawid-skene", &file]);
    assert!(ok);
    let mut rows = csv::Reader::from_reader(out.as_bytes());
    let mut n = 0;
    for row in rows.records() {
        let row = row.expect("CSV row");
        let item: usize = row[0][1..].parse().expect("item number");
        assert_eq!(&row[1], if item.is_multiple_of(2) { "cat" } else { "dog" });
        assert!(row[2].parse::<f64>().expect("posterior") > 0.95);
        n += 1;
    }
    assert_eq!(n, 10);
}

#[test]
fn retrieval_reports_vsd_metrics_as_json() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gt = write(
        &dir,
        "gt.json",
        r#"[{"key": ["q1", "a"], "value": 1}, {"key": ["q1", "b"], "value": 0}, {"key": ["q2", "x"], "value": 1}, {"key": ["q2", "y"], "value": 0}]"#,
    );
    let scores = write(&dir, "scores.csv", "query,candidate,score\nq1,a,0.9\nq1,b,0.1\nq2,y,0.8\nq2,x,0.3\n");
    let (ok, out, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--k", "1,2", "--json"]);
    assert!(ok, "{err}");
    let json: serde_json::Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(json["roc_auc_macro"], 0.5);
    assert_eq!(json["hr"]["1"], 0.5);
    // MRR@2: q1 rank 1, q2 rank 2 -> (1 + 1/2) / (2 * 1.5).
    assert_eq!(json["mrr"]["2"], 0.5);
    assert_eq!(json["queries"], 2);
    assert_eq!(json["pairs"], 4);

    // Scores given as (candidate, query) count as the service counts them.
    let flipped = write(&dir, "flipped.csv", "query,candidate,score\na,q1,0.9\nb,q1,0.1\ny,q2,0.8\nx,q2,0.3\n");
    let (ok, same, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &flipped, "--k", "1,2", "--json"]);
    assert!(ok, "{err}");
    let same: serde_json::Value = serde_json::from_str(&same).expect("JSON");
    assert_eq!((same["unscored_pairs"].as_u64(), &same["roc_auc_macro"]), (Some(0), &json["roc_auc_macro"]));
    assert_eq!(same["mrr"], json["mrr"]);

    let bad = write(&dir, "bad.csv", "query,candidate,score\nq1,a,high\n");
    let (ok, _, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &bad]);
    assert!(!ok && err.contains("bad.csv:2:"), "{err}");

    // A pair scored twice the same way counts once; scored two ways, both lines are named.
    let again = write(&dir, "again.csv", "query,candidate,score\nq1,a,0.9\nq1,b,0.1\nq2,y,0.8\nq2,x,0.3\nq1,a,0.9\n");
    let (ok, twice, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &again, "--k", "1,2", "--json"]);
    assert!(ok, "{err}");
    assert_eq!(twice, out, "the repeated line changes nothing");
    let two_ways = write(&dir, "two_ways.csv", "query,candidate,score\nq1,a,0.9\nq1,a,0.2\n");
    let (ok, _, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &two_ways]);
    assert!(!ok && err.contains("two_ways.csv:3:") && err.contains("line 2"), "{err}");
    let (ok, _, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--k", "0"]);
    assert!(!ok && err.contains("--k"), "a cut-off of 0 is refused: {err}");
}
