//! A100 ground truth from the participants' answers: votes, shares, the
//! majority (ties reported, never broken) and consistency per question. The
//! result is also the ground-truth file `atelier a100 score` reads.
//!
//! Only submitted, counted questionnaires make the ground truth: answers of a
//! participant still answering (or who failed an attention check and has not
//! submitted yet) would move majorities and scores that are then published.

use super::question::from_item;
use crate::core::kind::{AggregationInput, Table};
use serde_json::{json, Map, Value};
use std::collections::{BTreeMap, HashMap, HashSet};

/// Per question: votes per choice id, from submitted questionnaires.
fn tally(input: &AggregationInput) -> HashMap<uuid::Uuid, BTreeMap<String, u64>> {
    let mut votes: HashMap<uuid::Uuid, BTreeMap<String, u64>> = HashMap::new();
    for r in input.responses.iter().filter(|r| r.submitted) {
        if let Some(c) = r.answer.get("choice").and_then(Value::as_str) {
            *votes.entry(r.item_id).or_default().entry(c.to_owned()).or_default() += 1;
        }
    }
    votes
}

/// Builds the ground truth of a LAT (`aat = false`) or an AAT.
pub fn aggregate(input: &AggregationInput, aat: bool) -> Value {
    let votes = tally(input);
    let mut questions = Vec::new();
    for item in &input.items {
        let Ok(q) = from_item(&item.payload, item.gold.as_ref()) else { continue };
        if q.attention_check {
            continue;
        }
        let choices: Vec<&str> = q.choices.iter().map(|c| c.id.as_str()).collect();
        let counts = votes.get(&item.id).cloned().unwrap_or_default();
        let participants: u64 = counts.values().sum();
        let top = counts.values().copied().max().unwrap_or(0);
        let tied: Vec<&String> = counts.iter().filter(|(_, &v)| v == top && top > 0).map(|(k, _)| k).collect();
        let shares: Map<String, Value> = choices
            .iter()
            .map(|c| {
                let v = counts.get(*c).copied().unwrap_or(0);
                ((*c).to_owned(), json!(if participants > 0 { v as f64 / participants as f64 } else { 0.0 }))
            })
            .collect();
        let all_votes: Map<String, Value> =
            choices.iter().map(|c| ((*c).to_owned(), json!(counts.get(*c).copied().unwrap_or(0)))).collect();
        let mut entry = json!({
            "id": q.id,
            "choices": choices,
            "votes": all_votes,
            "participants": participants,
            "shares": shares,
            "majority": if tied.len() == 1 { json!(tied[0]) } else { Value::Null },
            "tied": if tied.len() > 1 { json!(tied) } else { json!([]) },
            "consistency": if participants > 0 { top as f64 / participants as f64 } else { 0.0 },
            "blank_category": q.blank_category,
            "images": q.choices.iter().map(|c| (c.id.clone(), c.image.clone())).collect::<BTreeMap<_, _>>(),
        });
        if aat {
            let right = q.answer.as_ref().and_then(|a| counts.get(a)).copied().unwrap_or(0);
            if let Some(obj) = entry.as_object_mut() {
                obj.insert("answer".into(), json!(q.answer));
                obj.insert("dimension".into(), json!(q.dimension));
                obj.insert("sub_dimension".into(), json!(q.sub_dimension));
                obj.insert(
                    "human_accuracy".into(),
                    if participants > 0 { json!(right as f64 / participants as f64) } else { Value::Null },
                );
            }
        }
        questions.push(entry);
    }
    // x of the paper's Eq. 2: the people who took the test (submitted and counted).
    let participants: HashSet<uuid::Uuid> =
        input.responses.iter().filter(|r| r.submitted).map(|r| r.annotator_id).collect();
    json!({ "test": if aat { "aat" } else { "lat" }, "participants": participants.len(), "questions": questions })
}

/// Long table: one row per question and choice.
pub fn table(aggregate: &Value) -> Table {
    let aat = aggregate["test"] == "aat";
    let mut header = vec!["question", "choice", "votes", "share", "majority", "participants", "consistency"];
    if aat {
        // The AAT's key and what it tests, next to how people answered.
        header.extend(["correct", "answer", "dimension", "sub_dimension"]);
    }
    let mut rows = Vec::new();
    for q in aggregate["questions"].as_array().into_iter().flatten() {
        for c in q["choices"].as_array().into_iter().flatten() {
            let c = c.as_str().unwrap_or_default();
            let majority =
                q["majority"].as_str() == Some(c) || q["tied"].as_array().is_some_and(|t| t.iter().any(|x| x == c));
            let mut row = vec![
                q["id"].as_str().unwrap_or_default().to_owned(),
                c.to_owned(),
                q["votes"][c].to_string(),
                q["shares"][c].to_string(),
                majority.to_string(),
                q["participants"].to_string(),
                q["consistency"].to_string(),
            ];
            if aat {
                let text = |v: &Value| v.as_str().unwrap_or_default().to_owned();
                row.extend([
                    (q["answer"] == c).to_string(),
                    text(&q["answer"]),
                    text(&q["dimension"]),
                    text(&q["sub_dimension"]),
                ]);
            }
            rows.push(row);
        }
    }
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}
