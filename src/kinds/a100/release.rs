//! What an A100 release records beyond its ground-truth file: the fixed
//! rules, the labels to compare releases by, and the datasheet's sections.

use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The rules fixed in code that shape the ground truth and the scores.
pub fn parameters() -> Value {
    json!({
        "counted": "submitted questionnaires whose responses are not excluded",
        "ties": "no majority when the top vote count is shared: majority null, tied choices listed",
        "lats_tie_credit": "fraction (1/t for one of t tied choices)",
        "mlats_denominator": "participants: people who took the test (Eq. 2)",
    })
}

/// Question id -> majority choice (`tie: a|b` when tied, `no votes`).
pub fn labels(aggregate: &[u8]) -> BTreeMap<String, String> {
    /// What labels read of a ground truth: each question's id, majority and
    /// tie (the rest is skipped unparsed: a release diff reads two).
    #[derive(serde::Deserialize)]
    struct GroundTruth {
        #[serde(default)]
        questions: Vec<Question>,
    }
    #[derive(serde::Deserialize)]
    struct Question {
        id: String,
        majority: Option<String>,
        #[serde(default)]
        tied: Vec<String>,
    }
    let Ok(gt) = serde_json::from_slice::<GroundTruth>(aggregate) else { return BTreeMap::new() };
    gt.questions
        .into_iter()
        .map(|q| {
            let label = match q.majority {
                Some(m) => m,
                None if !q.tied.is_empty() => format!("tie: {}", q.tied.join("|")),
                None => "no votes".to_owned(),
            };
            (q.id, label)
        })
        .collect()
}

/// The task as participants saw it.
pub fn task(aat: bool) -> String {
    let test = if aat {
        "the Academicism Aesthetic Test (AAT): each question has an expert answer key and a dimension \
         (Color, Style, Occasion, Season, Material, Balance) with a sub-dimension"
    } else {
        "the Liberalism Aesthetic Test (LAT): the ground truth is the participants' majority and the share of votes \
         per choice"
    };
    format!(
        "Participants saw a partial outfit (one to seven fashion items) with one item missing, and five candidate \
         images for the missing item; they chose the one that completes the outfit best (click, or keys 1-5 then \
         Enter). Question and choice order were shuffled per participant; answers are stored as choice ids. This is \
         {test}. Attention checks with an obvious answer were hidden among the questions."
    )
}

/// Agreement and quality control read from the ground truth.
pub fn quality(aggregate: &Value) -> String {
    let questions = aggregate["questions"].as_array().cloned().unwrap_or_default();
    let consistency: Vec<f64> = questions.iter().filter_map(|q| q["consistency"].as_f64()).collect();
    let tied = questions.iter().filter(|q| q["tied"].as_array().is_some_and(|t| !t.is_empty())).count();
    let mean = |v: &[f64]| if v.is_empty() { None } else { Some(v.iter().sum::<f64>() / v.len() as f64) };
    let mut md = format!(
        "Participants who missed an attention check have all their answers kept but excluded \
         (`attention_check_failed`). {} people took the test. Agreement: the mean share of the most chosen answer \
         per question (consistency) is {}; {tied} of {} questions have a tied majority.",
        aggregate["participants"],
        mean(&consistency).map_or_else(|| "undefined (no answers)".to_owned(), |m| format!("{m:.4}")),
        questions.len()
    );
    let accuracy: Vec<f64> = questions.iter().filter_map(|q| q["human_accuracy"].as_f64()).collect();
    if let Some(a) = mean(&accuracy) {
        md.push_str(&format!(" Mean human accuracy against the expert key: {a:.4}."));
    }
    md
}

#[cfg(test)]
mod tests {
    #[test]
    fn each_question_is_labelled_by_its_majority_its_tie_or_no_votes() {
        let gt = serde_json::json!({"questions": [
            {"id": "q1", "majority": "q1c2", "tied": [], "shares": {"q1c2": 1.0}},
            {"id": "q2", "majority": null, "tied": ["q2c0", "q2c3"]},
            {"id": "q3", "majority": null, "tied": []},
        ], "participants": 3});
        let labels = super::labels(gt.to_string().as_bytes());
        let expected = [("q1", "q1c2"), ("q2", "tie: q2c0|q2c3"), ("q3", "no votes")];
        assert_eq!(labels, expected.iter().map(|(k, v)| ((*k).to_owned(), (*v).to_owned())).collect());
        assert!(super::labels(b"not json").is_empty());
    }
}
