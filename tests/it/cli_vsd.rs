//! `atelier vsd suspects|estimate|robustness` through the real binary, on
//! hand-made files and a case checked against SciPy.

use crate::cli_stats::{atelier, write};
use crate::vsd_case;
use serde_json::{json, Value};

const RANKINGS: &str = "model,query,candidate,rank,score
m1,q1,a,0,0.9
m1,q1,b,1,0.8
m1,q1,c,2,0.7
m2,q1,b,0,0.95
m2,q1,q1,1,1.0
m2,a,q1,0,0.9
m2,a,b,1,0.5
";

#[test]
fn suspects_are_the_union_of_top_k_ordered_pairs_with_provenance_and_overlap() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rankings = write(&dir, "rankings.csv", RANKINGS);
    let (ok, out, err) = atelier(&["vsd", "suspects", "--rankings", &rankings, "--k", "2", "--json"]);
    assert!(ok, "{err}");
    let s: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(s["k"], 2);
    assert_eq!(s["models"], json!(["m1", "m2"]));
    assert_eq!(s["queries"], 2);
    // S_k is a set of ordered (query, candidate) pairs: the query is the image
    // the model ranked for ((a, q1) and (q1, a) are two suspects, labelled once);
    // m2's own query at rank 1 is dropped, its list re-ranked.
    assert_eq!(s["suspects"], 4);
    assert_eq!(s["upper_bound"], 8);
    assert_eq!(s["per_model"], json!({"m1": 2, "m2": 3}));
    assert_eq!(s["overlap"], json!({"m1": {"m1": 2, "m2": 1}, "m2": {"m1": 1, "m2": 3}}));
    assert_eq!(
        s["pairs"],
        json!([
            {"query": "a", "candidate": "b", "proposed_by": {"m2": 1}},
            {"query": "a", "candidate": "q1", "proposed_by": {"m2": 0}},
            {"query": "q1", "candidate": "a", "proposed_by": {"m1": 0}},
            {"query": "q1", "candidate": "b", "proposed_by": {"m1": 1, "m2": 0}},
        ])
    );

    // Same product: a regex capturing the product id leaves such pairs out.
    let products = write(&dir, "p.csv", "model,query,candidate,rank\nm,p1_front,p1_back,0\nm,p1_front,p2_side,1\n");
    let (ok, out, err) =
        atelier(&["vsd", "suspects", "--rankings", &products, "--k", "5", "--same-product", "^(p[0-9]+)_", "--json"]);
    assert!(ok, "{err}");
    let s: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(
        s["pairs"],
        json!([{"query": "p1_front", "candidate": "p2_side", "proposed_by": {"m": 0}}]),
        "the same product's image dropped and the list re-ranked"
    );
}

#[test]
fn bad_files_name_the_file_line_and_field_and_exit_2() {
    let dir = tempfile::tempdir().expect("tempdir");
    let bad = write(&dir, "bad.csv", "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,first\n");
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_atelier"))
        .args(["vsd", "suspects", "--rankings", &bad, "--k", "2", "--json"])
        .output()
        .expect("runs");
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("bad.csv:3") && err.contains("rank"), "{err}");

    let rankings = write(&dir, "rankings.csv", RANKINGS);
    let labels = write(&dir, "labels.csv", "query,candidate,expert,label\nq1,a,e1,maybe\n");
    let (ok, _, err) = atelier(&[
        "vsd",
        "estimate",
        "--rankings",
        &rankings,
        "--k",
        "2",
        "--labels",
        &labels,
        "--queries",
        "1",
        "--catalog",
        "3",
        "--json",
    ]);
    assert!(!ok);
    assert!(err.contains("labels.csv:2") && err.contains("label: `maybe`"), "{err}");
    let (ok, _, err) = atelier(&["vsd", "suspects", "--rankings", &rankings, "--k", "2", "--same-product", "p[0-9]+"]);
    assert!(!ok && err.contains("--same-product") && err.contains("capture group"), "{err}");
    let (ok, _, err) = atelier(&["vsd", "suspects", "--rankings", &rankings, "--k", "0"]);
    assert!(!ok && err.contains("--k"), "a top 0 is refused: {err}");
}

#[test]
fn estimate_applies_the_label_rule_and_the_estimates_of_p() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rankings = write(&dir, "rankings.csv", RANKINGS);
    // (a, q1): 2 similar of 3 -> 1. (b, q1): 1-1 tie -> 0. (a, b): only unsure -> no label.
    let labels = write(
        &dir,
        "labels.csv",
        "query,candidate,expert,label\nq1,a,e1,1\nq1,a,e2,1\na,q1,e3,0\nq1,b,e1,1\nq1,b,e2,0\nq1,b,e3,unsure\na,b,e1,unsure\n",
    );
    let sample =
        write(&dir, "sample.csv", "query,candidate,expert,label\nq1,c,e1,0\nq1,d,e1,1\nq1,e,e1,0\nq1,f,e1,0\n");
    // The same rankings and labels, with |Q|, |D| and extra flags.
    let estimate_with = |queries: &str, catalog: &str, extra: &[&str]| {
        let mut args = vec!["vsd", "estimate", "--rankings", &rankings, "--k", "2", "--labels", &labels];
        args.extend(["--queries", queries, "--catalog", catalog]);
        args.extend(extra);
        atelier(&args)
    };
    let estimate = |extra: &[&str]| estimate_with("2", "10", &[&["--json"], extra].concat());
    let (ok, out, err) = estimate(&["--sample", &sample]);
    assert!(ok, "{err}");
    let e: Value = serde_json::from_str(&out).expect("JSON");
    // Ordered suspects: (a, q1) and (q1, a) share the one label 1; (q1, b) 0; (a, b) none.
    assert_eq!((e["suspects"].as_u64(), e["labelled"].as_u64(), e["unlabelled"].as_u64()), (Some(4), Some(3), Some(1)));
    assert_eq!(e["positives"], 2);
    assert!((e["p_k"].as_f64().expect("p_k") - 2.0 / 3.0).abs() < 1e-12);
    assert_eq!(e["p_k_by_model"], json!({"m1": 0.5, "m2": 0.5}));
    // Closed catalog: |A| = 2 x (10 - 1).
    assert_eq!(e["pairs_total"], 18);
    assert!((e["p_lb"].as_f64().expect("p_lb") - 2.0 / 18.0).abs() < 1e-12);
    assert_eq!(e["sample"], json!({"b": 4, "a": 1}));
    assert_eq!(e["p_hat"], 0.25, "max(p_lb, a / b)");
    assert!((e["speedup"].as_f64().expect("speed-up") - 8.0 / 3.0).abs() < 1e-12);
    assert!(e["alpha"].is_number(), "{e}");
    // In the wild |A| = |Q| x |D|, and without a sample p-hat is p_lb.
    let (ok, out, _) = estimate(&["--wild"]);
    assert!(ok);
    let e: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(e["pairs_total"], 20);
    assert_eq!(e["sample"], Value::Null);
    assert_eq!(e["p_hat"], e["p_lb"]);

    // |Q| and |D| that cannot hold the rankings are refused, naming the flag.
    let (ok, _, err) = estimate_with("1", "10", &[]);
    assert!(!ok && err.contains("--queries") && err.contains("2 distinct queries"), "{err}");
    let (ok, _, err) = estimate_with("2", "1", &[]);
    assert!(!ok && err.contains("--catalog") && err.contains("0 possible pairs"), "{err}");
}

fn close(a: &Value, b: &Value, path: &str) {
    match (a, b) {
        (Value::Number(x), Value::Number(y)) => {
            let (x, y) = (x.as_f64().expect("f64"), y.as_f64().expect("f64"));
            assert!((x - y).abs() < 1e-9, "{path}: {x} vs {y}");
        }
        (Value::Object(x), Value::Object(y)) => {
            assert_eq!(x.keys().collect::<Vec<_>>(), y.keys().collect::<Vec<_>>(), "{path}");
            for (k, v) in x {
                close(v, &y[k], &format!("{path}.{k}"));
            }
        }
        (Value::Array(x), Value::Array(y)) => {
            assert_eq!(x.len(), y.len(), "{path}");
            for (i, (v, w)) in x.iter().zip(y).enumerate() {
                close(v, w, &format!("{path}[{i}]"));
            }
        }
        _ => assert_eq!(a, b, "{path}"),
    }
}

#[test]
fn robustness_matches_a_scipy_reference() {
    let dir = tempfile::tempdir().expect("tempdir");
    let rankings = write(&dir, "rankings.csv", vsd_case::RANKINGS);
    let gt = write(&dir, "gt.json", vsd_case::GROUND_TRUTH);
    let mut args: Vec<String> =
        ["vsd", "robustness", "--rankings", &rankings, "--k", "2", "--ground-truth", &gt, "--json"]
            .map(String::from)
            .to_vec();
    for (name, content) in
        [("s1", vsd_case::S1), ("s2", vsd_case::S2), ("s3", vsd_case::S3), ("s4", vsd_case::S4), ("s5", vsd_case::S5)]
    {
        args.push("--scores".into());
        args.push(format!("{name}={}", write(&dir, &format!("{name}.csv"), content)));
    }
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let (ok, out, err) = atelier(&refs);
    assert!(ok, "{err}");
    let got: Value = serde_json::from_str(&out).expect("JSON");
    let expected: Value = serde_json::from_str(vsd_case::EXPECTED).expect("expected JSON");
    close(&got, &expected, "$");
}

#[test]
fn the_robustness_tables_full_row_is_what_stats_retrieval_and_scikit_learn_give() {
    // q1 and a rank each other; the model scores (a, q1) and (q1, a) differently.
    // Written out as scikit-learn's roc_auc_score sees the labelled pairs:
    // positives (q1, a) 0.2 and (a, q1) 0.9, negative (q1, b) 0.5 -> 1 of 2 pairs won: 0.5.
    let dir = tempfile::tempdir().expect("tempdir");
    let rankings = write(&dir, "r.csv", "model,query,candidate,rank\nm1,q1,a,0\nm1,q1,b,1\nm1,a,q1,0\n");
    let gt = write(
        &dir,
        "gt.json",
        r#"[{"key": ["q1", "a"], "value": 1}, {"key": ["q1", "b"], "value": 0}, {"key": ["a", "q1"], "value": 1}]"#,
    );
    let scores = write(&dir, "s.csv", "query,candidate,score\na,q1,0.9\nq1,a,0.2\nq1,b,0.5\n");
    let (ok, out, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--json"]);
    assert!(ok, "{err}");
    let table: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(table["roc_auc_micro"], 0.5);
    let model = format!("m={scores}");
    let (ok, out, err) = atelier(&[
        "vsd",
        "robustness",
        "--rankings",
        &rankings,
        "--k",
        "2",
        "--ground-truth",
        &gt,
        "--scores",
        &model,
        "--json",
    ]);
    assert!(ok, "{err}");
    let robustness: Value = serde_json::from_str(&out).expect("JSON");
    for key in ["roc_auc_micro", "roc_auc_macro"] {
        let (full, main) = (robustness["full"]["m"][key].as_f64(), table[key].as_f64());
        assert!(matches!((full, main), (Some(f), Some(m)) if (f - m).abs() < 1e-12), "{key}: {full:?} vs {main:?}");
    }
}

#[test]
fn stats_retrieval_never_ranks_the_query_itself_and_filters_products_as_the_official_code() {
    let dir = tempfile::tempdir().expect("tempdir");
    let gt = write(&dir, "gt.json", r#"[{"key": ["q", "a"], "value": 1}, {"key": ["q", "b"], "value": 0}]"#);
    let scores = write(&dir, "s.csv", "query,candidate,score\nq,q,1.0\nq,b,0.9\nq,a,0.8\n");
    let (ok, out, err) = atelier(&["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--k", "2", "--json"]);
    assert!(ok, "{err}");
    let r: Value = serde_json::from_str(&out).expect("JSON");
    // Top 2 = [b, a]: HR@2 = 1 / (2 x 1); MRR@2 = (1/2) / (1 + 1/2).
    assert_eq!(r["hr"]["2"], 0.5);
    assert!((r["mrr"]["2"].as_f64().expect("mrr") - 1.0 / 3.0).abs() < 1e-12, "{r}");
    // One image per product (the official filter_results_unique_ids): p2_b loses its place to p3_a.
    let gt =
        write(&dir, "gt2.json", r#"[{"key": ["p1_a", "p3_a"], "value": 1}, {"key": ["p1_a", "p2_a"], "value": 0}]"#);
    let scores =
        write(&dir, "s2.csv", "query,candidate,score\np1_a,p1_b,0.99\np1_a,p2_a,0.9\np1_a,p2_b,0.8\np1_a,p3_a,0.7\n");
    let args =
        ["stats", "retrieval", "--gt", &gt, "--scores", &scores, "--k", "2", "--json", "--same-product", r"^(p\d+)_"];
    let (ok, out, err) = atelier(&args);
    assert!(ok, "{err}");
    let r: Value = serde_json::from_str(&out).expect("JSON");
    assert_eq!(r["hr"]["2"], 0.5, "{r}");
    assert!((r["mrr"]["2"].as_f64().expect("mrr") - 1.0 / 3.0).abs() < 1e-12, "{r}");
}
