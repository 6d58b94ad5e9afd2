//! `atelier a100 score` on hand-made ground truths, worked out by hand.

use crate::cli_stats::{atelier, write};
use serde_json::Value;

const LAT: &str = r#"{"test": "lat", "questions": [
  {"id": "q1", "choices": ["a", "b", "c", "d", "e"], "votes": {"a": 6, "b": 3, "c": 1}},
  {"id": "q2", "choices": ["f", "g", "h", "i", "j"], "votes": {"f": 4, "g": 4, "h": 2}},
  {"id": "q3", "choices": ["k", "l", "m", "n", "o"], "votes": {"k": 1, "l": 9}, "participants": 10},
  {"id": "q4", "choices": ["p", "q", "r", "s", "t"], "votes": {"p": 5, "q": 5}}
]}"#;

const AAT: &str = r#"{"test": "aat", "questions": [
  {"id": "1", "choices": ["a","b","c","d","e"], "answer": "a", "dimension": "Color", "sub_dimension": "Warm Tone"},
  {"id": "2", "choices": ["a","b","c","d","e"], "answer": "b", "dimension": "Color", "sub_dimension": "Cool Tone"},
  {"id": "3", "choices": ["a","b","c","d","e"], "answer": "c", "dimension": "Style", "sub_dimension": "Casual"},
  {"id": "4", "choices": ["a","b","c","d","e"], "answer": "d", "dimension": "Season", "sub_dimension": "Winter"}
]}"#;

fn score(gt: &str, answers: &str) -> (bool, Value, String) {
    score_with(gt, answers, &[])
}

fn score_with(gt: &str, answers: &str, extra: &[&str]) -> (bool, Value, String) {
    let dir = tempfile::tempdir().expect("tempdir");
    let g = write(&dir, "gt.json", gt);
    let a = write(&dir, "answers.csv", answers);
    let mut args = vec!["a100", "score", "--ground-truth", &g, "--answers", &a, "--json"];
    args.extend_from_slice(extra);
    let (ok, out, err) = atelier(&args);
    (ok, serde_json::from_str(&out).unwrap_or(Value::Null), err)
}

#[test]
fn mlats_divide_by_the_participants_of_the_file_when_it_names_them() {
    // Eq. 2 of the paper: x = 12 people took the test (not every one answered q1..q4).
    let with_x = LAT.replacen(r#"{"test": "lat","#, r#"{"test": "lat", "participants": 12,"#, 1);
    let (ok, r, err) = score(&with_x, "question_id,choice_id\nq1,a\nq2,g\nq3,k\n");
    assert!(ok, "{err}");
    assert_eq!(r["participants"], 12);
    assert!((r["mlats"].as_f64().expect("mlats") - (6.0 + 4.0 + 1.0) / 12.0 / 4.0).abs() < 1e-12);
    assert!((r["lats"].as_f64().expect("lats") - 1.5 / 4.0).abs() < 1e-12, "LATs do not depend on x");
}

#[test]
fn tie_credit_is_a_choice_of_the_user() {
    // q2: g in a 2-way tie; q4: p in a 2-way tie. q1 a clear majority.
    let answers = "question_id,choice_id\nq1,a\nq2,g\nq4,p\n";
    for (credit, lats) in [(None, 2.0), (Some("fraction"), 2.0), (Some("none"), 1.0), (Some("full"), 3.0)] {
        let extra: Vec<&str> = credit.map(|c| vec!["--tie-credit", c]).unwrap_or_default();
        let (ok, r, err) = score_with(LAT, answers, &extra);
        assert!(ok, "{err}");
        assert!((r["lats"].as_f64().expect("lats") - lats / 4.0).abs() < 1e-12, "{credit:?}: {r}");
        assert_eq!(r["tie_credit"], credit.unwrap_or("fraction"));
    }
    let (ok, _, err) = score_with(LAT, answers, &["--tie-credit", "half"]);
    assert!(!ok && err.contains("half"), "{err}");
}

#[test]
fn lat_scores_are_worked_out_by_hand() {
    // q1: majority a -> LATs 1, mLATs 6/10.
    // q2: g is in a 2-way tie -> LATs 1/2, mLATs 4/10.
    // q3: k is not the majority -> LATs 0, mLATs 1/10.
    // q4: unanswered -> 0, 0.
    let (ok, r, err) = score(LAT, "question_id,choice_id\nq1,a\nq2,g\nq3,k\n");
    assert!(ok, "{err}");
    assert_eq!(r["test"], "lat");
    assert_eq!(r["questions"], 4);
    assert_eq!(r["answered"], 3);
    assert!((r["lats"].as_f64().expect("lats") - 1.5 / 4.0).abs() < 1e-12);
    assert!((r["mlats"].as_f64().expect("mlats") - (0.6 + 0.4 + 0.1) / 4.0).abs() < 1e-12);
    assert!(r.get("aats").is_none() && r.get("indexes").is_none());
}

#[test]
fn aat_scores_and_dimension_indexes_are_worked_out_by_hand() {
    // Right on 1 and 3, wrong on 2, unanswered 4: AATs 2/4; Color 1/2, Style 1, Season 0.
    let (ok, r, err) = score(AAT, "question_id,choice_id\n1,a\n2,a\n3,c\n");
    assert!(ok, "{err}");
    assert_eq!(r["aats"], 0.5);
    assert_eq!(r["indexes"]["Color"], 0.5);
    assert_eq!(r["indexes"]["Style"], 1.0);
    assert_eq!(r["indexes"]["Season"], 0.0);
    assert_eq!(r["sub_indexes"]["Color/Warm Tone"], 1.0);
    assert_eq!(r["sub_indexes"]["Color/Cool Tone"], 0.0);
    assert!(r.get("mlats").is_none());
}

#[test]
fn bad_answers_name_the_line() {
    for (answers, needle) in [
        ("question_id,choice_id\nq1,a\nq9,a\n", ":3:"),
        ("question_id,choice_id\nq1,z\n", "choice_id"),
        ("question_id,choice_id\nq1,a\nq1,b\n", "already answered on line 2"),
        ("question,choice\nq1,a\n", "question_id"),
    ] {
        let (ok, _, err) = score(LAT, answers);
        assert!(!ok, "{answers}");
        assert!(err.contains(needle), "{answers} -> {err}");
    }
    let (ok, _, err) = score(
        r#"{"test": "lat", "questions": [{"id": "q", "choices": ["a"], "votes": {"x": 1}}]}"#,
        "question_id,choice_id\n",
    );
    assert!(!ok && err.contains("`x`"), "{err}");
}
