//! VTON curation end to end through `atelier vton curate`: a simulated
//! campaign with known true qualities, honest workers and planted bad ones.

use crate::cli_stats::{atelier, write};
use atelier::stats::correlation::pearson;
use rand::{Rng, SeedableRng};
use serde_json::Value;
use std::collections::HashMap;

const QUESTIONNAIRES: usize = 24;
const TASKS: usize = 20;

#[derive(Clone, Copy, PartialEq, Debug)]
enum Kind {
    Honest,
    StraightLiner,
    RandomClicker,
    SanityFailer,
}

fn honest(q: f64, rng: &mut impl Rng) -> u8 {
    // Box-Muller noise around the true quality.
    let (u1, u2): (f64, f64) = (rng.random_range(1e-9..1.0), rng.random());
    let noise = 0.3 * (-2.0 * u1.ln()).sqrt() * (2.0 * std::f64::consts::PI * u2).cos();
    (q + noise).round().clamp(1.0, 3.0) as u8
}

#[test]
fn curation_removes_exactly_the_planted_annotators_and_improves_the_scores() {
    let mut rng = rand::rngs::StdRng::seed_from_u64(2026);
    let mut csv = String::from("questionnaire,annotator,task,rating\n");
    let mut truth: HashMap<String, f64> = HashMap::new();
    let mut planted: HashMap<(String, String), Kind> = HashMap::new();
    for qn in 0..QUESTIONNAIRES {
        let q = format!("q{qn}");
        let mut qualities: Vec<f64> = (0..TASKS).map(|i| 1.0 + 2.0 * (i as f64 + 0.5) / TASKS as f64).collect();
        use rand::seq::SliceRandom;
        qualities.shuffle(&mut rng);
        let bad = match qn % 4 {
            0 => Kind::StraightLiner,
            1 => Kind::RandomClicker,
            2 => Kind::SanityFailer,
            _ => Kind::Honest,
        };
        let crew: Vec<(String, Kind)> =
            (0..3).map(|i| (format!("h{qn}-{i}"), Kind::Honest)).chain([(format!("x{qn}"), bad)]).collect();
        for (annotator, kind) in &crew {
            planted.insert((q.clone(), annotator.clone()), *kind);
            // Two shared sanity tasks: a broken render (1) and a real photo (3).
            let (s1, s3) = if *kind == Kind::SanityFailer { (3, 1) } else { (1, 3) };
            csv.push_str(&format!("{q},{annotator},sanity-broken,{s1}\n{q},{annotator},sanity-real,{s3}\n"));
            for (t, &quality) in qualities.iter().enumerate() {
                let task = format!("{q}-t{t}");
                truth.insert(task.clone(), quality);
                let honest_rating = honest(quality, &mut rng);
                let rating = match kind {
                    Kind::Honest | Kind::SanityFailer => honest_rating,
                    Kind::StraightLiner => 3,
                    // A random clicker who never lands on the obvious answer.
                    Kind::RandomClicker => {
                        let obvious = quality.round().clamp(1.0, 3.0) as u8;
                        let others: Vec<u8> = (1..=3).filter(|r| *r != obvious).collect();
                        others[rng.random_range(0..others.len())]
                    }
                };
                csv.push_str(&format!("{q},{annotator},{task},{rating}\n"));
            }
        }
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let answers = write(&dir, "answers.csv", &csv);
    let sanity = write(&dir, "sanity.csv", "task,expected\nsanity-broken,1\nsanity-real,3\n");
    let (ok, out, err) = atelier(&["vton", "curate", "--answers", &answers, "--sanity", &sanity, "--json"]);
    assert!(ok, "{err}");
    let result: Value = serde_json::from_str(&out).expect("JSON");

    for a in result["annotators"].as_array().expect("annotators") {
        let key = (a["questionnaire"].as_str().expect("q").to_owned(), a["annotator"].as_str().expect("a").to_owned());
        let expected = match planted[&key] {
            Kind::Honest => Value::Null,
            Kind::StraightLiner => "identical".into(),
            Kind::RandomClicker => "disagreement".into(),
            Kind::SanityFailer => "sanity".into(),
        };
        assert_eq!(a["excluded_by"], expected, "{key:?}");
    }
    assert_eq!(result["annotators"].as_array().expect("annotators").len(), QUESTIONNAIRES * 4);
    let before = result["alpha_mean_before"].as_f64().expect("before");
    let after = result["alpha_mean_after"].as_f64().expect("after");
    assert!(after > before + 0.1, "alpha rises: {before} -> {after}");
    for q in result["questionnaires"].as_array().expect("questionnaires") {
        let n: usize = q["questionnaire"].as_str().expect("id")[1..].parse().expect("number");
        assert_eq!(q["kept"], true, "{q}");
        assert_eq!(q["annotators_kept"], if n % 4 == 3 { 4 } else { 3 }, "{q}");
    }

    // Curated scores track the truth better than the raw means.
    let mut raw: HashMap<String, (f64, f64)> = HashMap::new();
    for line in csv.lines().skip(1) {
        let f: Vec<&str> = line.split(',').collect();
        if !f[2].starts_with("sanity") {
            let e = raw.entry(f[2].to_owned()).or_default();
            e.0 += f[3].parse::<f64>().expect("rating");
            e.1 += 1.0;
        }
    }
    let scores = result["scores"].as_array().expect("scores");
    assert_eq!(scores.len(), QUESTIONNAIRES * TASKS, "sanity tasks are not scored");
    let (mut t, mut curated, mut uncurated) = (Vec::new(), Vec::new(), Vec::new());
    for s in scores {
        let task = s["task"].as_str().expect("task");
        t.push(truth[task]);
        curated.push(s["mean"].as_f64().expect("mean"));
        uncurated.push(raw[task].0 / raw[task].1);
        assert!(s["n"] == 3 || s["n"] == 4);
    }
    let r_curated = pearson(&t, &curated).expect("defined");
    let r_raw = pearson(&t, &uncurated).expect("defined");
    assert!(r_curated > r_raw + 0.02, "curated {r_curated} vs raw {r_raw}");
    let mae = |v: &[f64]| v.iter().zip(&t).map(|(a, b)| (a - b).abs()).sum::<f64>() / t.len() as f64;
    assert!(mae(&curated) < mae(&uncurated), "curated scores are closer to the truth");
}

#[test]
fn curate_rejects_bad_input_naming_the_line() {
    let dir = tempfile::tempdir().expect("tempdir");
    let header = "questionnaire,annotator,task,rating\n";
    for (content, needle) in [
        (format!("{header}q,a,t,4\n"), ":2:"),
        (format!("{header}q,a,t,1\nq,b,t,2\nq,a,t,2\n"), ":4:"),
        ("questionnaire,annotator,rating\nq,a,1\n".to_owned(), "task"),
    ] {
        let file = write(&dir, "bad.csv", &content);
        let (ok, out, err) = atelier(&["vton", "curate", "--answers", &file, "--json"]);
        assert!(!ok && out.is_empty(), "{content}");
        assert!(err.contains(needle), "{content} -> {err}");
    }
    let file = write(&dir, "dup.csv", &format!("{header}q,a,t,1\nq,a,t,2\n"));
    let (_, _, err) = atelier(&["vton", "curate", "--answers", &file]);
    assert!(err.contains("line 2"), "{err}");
}

#[test]
fn the_help_names_the_disagreement_rule_for_what_it_is_a_plurality() {
    let (ok, out, err) = atelier(&["vton", "curate", "--help"]);
    assert!(ok, "{err}");
    assert!(out.contains("plurality") && !out.contains("strict majority"), "{out}");
    assert!(out.contains("--preset") && out.contains("vton-qbench-code"), "{out}");
}

#[test]
fn the_released_code_preset_reads_positions_and_tolerances_from_the_files() {
    // One form of 20 positions: three consistent responses, one whose answers
    // in position order are one long run (the file lists them shuffled), and
    // one that misses the attention task at position 5 by 1 (tolerance 1).
    let pattern = |i: usize| [1, 2, 3, 2, 1][i % 5];
    let mut csv = String::from("questionnaire,annotator,task,rating,position\n");
    for who in ["a", "b", "c", "near"] {
        for i in 0..20 {
            let r = if who == "near" && i == 4 { 2 } else { pattern(i) };
            csv.push_str(&format!("f1,{who},t{},{r},{}\n", i + 1, i + 1));
        }
    }
    for i in (0..20).rev() {
        let r = if i < 17 { 2 } else { pattern(i) };
        csv.push_str(&format!("f1,runner,t{},{r},{}\n", i + 1, i + 1));
    }
    let dir = tempfile::tempdir().expect("tempdir");
    let answers = write(&dir, "answers.csv", &csv);
    let sanity = write(&dir, "sanity.csv", "task,expected,tolerance\nt5,1,1\n");
    let run = |extra: &[&str]| {
        let mut args = vec!["vton", "curate", "--answers", &answers, "--sanity", &sanity, "--json"];
        args.extend_from_slice(extra);
        let (ok, out, err) = atelier(&args);
        assert!(ok, "{err}");
        serde_json::from_str::<Value>(&out).expect("json")
    };
    let rule = |result: &Value, who: &str| {
        result["annotators"].as_array().expect("annotators").iter().find(|a| a["annotator"] == who).expect("who")
            ["excluded_by"]
            .clone()
    };
    let code = run(&["--preset", "vton-qbench-code"]);
    assert_eq!(rule(&code, "runner"), "run", "17 of 20 identical in position order");
    assert_eq!(rule(&code, "near"), Value::Null, "within the attention task's tolerance");
    assert_eq!(rule(&code, "a"), Value::Null);
    assert_eq!(code["questionnaires"][0]["kept"], true);
    // Every threshold flag is honoured or refused, never ignored.
    let strict = run(&["--preset", "vton-qbench-code", "--min-annotators", "5"]);
    assert_eq!(strict["questionnaires"][0]["kept"], false, "4 responses left, 5 wanted");
    let no_alpha = run(&["--preset", "vton-qbench-code", "--min-alpha", "1.01"]);
    assert_eq!(no_alpha["questionnaires"][0]["kept"], false, "an alpha filter only when asked");
    let (ok, _, err) =
        atelier(&["vton", "curate", "--answers", &answers, "--preset", "vton-qbench-code", "--max-identical", "0.5"]);
    assert!(!ok && err.contains("--max-identical") && err.contains("paper preset only"), "{err}");
    let (ok, _, err) = atelier(&["vton", "curate", "--answers", &answers, "--min-variance", "0.2"]);
    assert!(!ok && err.contains("--min-variance") && err.contains("vton-qbench-code only"), "{err}");
    let paper = run(&[]);
    assert_ne!(rule(&paper, "runner"), "run", "the paper preset has no run rule");
    let (ok, _, err) = atelier(&["vton", "curate", "--answers", &answers, "--preset", "majority"]);
    assert!(!ok && err.contains("majority"), "{err}");
    let bad = write(&dir, "bad.csv", "questionnaire,annotator,task,rating,position\nf,a,t,2,zero\n");
    let (ok, _, err) = atelier(&["vton", "curate", "--answers", &bad]);
    assert!(!ok && err.contains(":2:") && err.contains("position"), "{err}");
}
