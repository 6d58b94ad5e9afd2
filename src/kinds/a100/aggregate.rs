//! A100 ground truth from the participants' answers: votes, shares, the
//! majority (ties reported, never broken) and consistency per question. The
//! result is also the ground-truth file `atelier a100 score` reads.
//!
//! Only submitted, counted questionnaires make the ground truth: answers of a
//! participant still answering (or who failed an attention check and has not
//! submitted yet) would move majorities and scores that are then published.

use super::config::{A100Answer, A100Gold};
use super::question::Question;
use super::result::{A100Result, AatResult, QuestionResult};
use crate::core::kind::contract::{Records, Table};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap, HashSet};

/// What both tests aggregate: the kind's `AggregationInput` (the LAT's and
/// the AAT's records read alike).
pub type A100Input = Records<A100Gold, A100Answer>;

/// Per question: votes per choice id, from submitted questionnaires.
fn tally(input: &A100Input) -> HashMap<uuid::Uuid, BTreeMap<String, u64>> {
    let mut votes: HashMap<uuid::Uuid, BTreeMap<String, u64>> = HashMap::new();
    for r in input.responses.iter().filter(|r| r.submitted) {
        *votes.entry(r.item_id).or_default().entry(r.answer.choice.clone()).or_default() += 1;
    }
    votes
}

/// Builds the ground truth of a LAT (`aat = false`) or an AAT.
pub fn aggregate(input: &A100Input, aat: bool) -> A100Result {
    let votes = tally(input);
    let mut questions = Vec::new();
    for item in &input.items {
        let Ok(mut q) = item.payload.read::<Question>() else { continue };
        q.answer = item.gold.as_ref().and_then(|g| g.answer.clone());
        if q.attention_check {
            continue;
        }
        let choices: Vec<String> = q.choices.iter().map(|c| c.id.clone()).collect();
        let counts = votes.get(&item.id).cloned().unwrap_or_default();
        let participants: u64 = counts.values().sum();
        let share = |v: u64| if participants > 0 { v as f64 / participants as f64 } else { 0.0 };
        let top = counts.values().copied().max().unwrap_or(0);
        let tied: Vec<String> = counts.iter().filter(|(_, &v)| v == top && top > 0).map(|(k, _)| k.clone()).collect();
        let count = |c: &String| counts.get(c).copied().unwrap_or(0);
        let (majority, tied) = if tied.len() == 1 { (tied.into_iter().next(), Vec::new()) } else { (None, tied) };
        questions.push(QuestionResult {
            id: q.id.clone(),
            votes: choices.iter().map(|c| (c.clone(), count(c))).collect(),
            shares: choices.iter().map(|c| (c.clone(), share(count(c)))).collect(),
            choices,
            participants,
            majority,
            tied,
            consistency: share(top),
            blank_category: q.blank_category.clone(),
            images: q.choices.iter().map(|c| (c.id.clone(), c.image.clone())).collect(),
            aat: aat.then(|| AatResult {
                human_accuracy: (participants > 0)
                    .then(|| share(q.answer.as_ref().and_then(|a| counts.get(a)).copied().unwrap_or(0))),
                answer: q.answer.clone(),
                dimension: q.dimension.clone(),
                sub_dimension: q.sub_dimension.clone(),
            }),
        });
    }
    // x of the paper's Eq. 2: the people who took the test (submitted and counted).
    let participants: HashSet<uuid::Uuid> =
        input.responses.iter().filter(|r| r.submitted).map(|r| r.annotator_id).collect();
    A100Result { test: if aat { "aat" } else { "lat" }.to_owned(), participants: participants.len(), questions }
}

/// Long table: one row per question and choice.
pub fn table(aggregate: &[u8]) -> Table {
    let Ok(gt) = A100Result::from_json(aggregate) else { return Table::default() };
    let mut header = vec!["question", "choice", "votes", "share", "majority", "tied", "participants", "consistency"];
    if gt.is_aat() {
        // The AAT's key and what it tests, next to how people answered.
        header.extend(["correct", "answer", "dimension", "sub_dimension"]);
    }
    let number = |v: f64| Value::from(v).to_string();
    let mut rows = Vec::new();
    for q in &gt.questions {
        for c in &q.choices {
            let mut row = vec![
                q.id.clone(),
                c.clone(),
                q.votes.get(c).copied().unwrap_or(0).to_string(),
                q.shares.get(c).copied().map_or_else(|| "null".to_owned(), number),
                q.is_majority(c).to_string(),
                q.is_tied(c).to_string(),
                q.participants.to_string(),
                number(q.consistency),
            ];
            if let Some(a) = q.aat.as_ref().filter(|_| gt.is_aat()) {
                row.extend([
                    (a.answer.as_deref() == Some(c.as_str())).to_string(),
                    a.answer.clone().unwrap_or_default(),
                    a.dimension.clone().unwrap_or_default(),
                    a.sub_dimension.clone().unwrap_or_default(),
                ]);
            }
            rows.push(row);
        }
    }
    Table { header: header.iter().map(|h| (*h).to_owned()).collect(), rows }
}
