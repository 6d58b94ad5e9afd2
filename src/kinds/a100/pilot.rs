//! Pilot curation as in the A100 paper: the same small team (identified by
//! their worker id in every round) answers the question set in repeated
//! rounds, one campaign per round. Questions are ranked by how consistently
//! one answer wins over all members and rounds; each member's own
//! consistency across rounds is reported; the paper's selection (keep the
//! top N by consistency, then only questions at 100 % consistency) is a pair
//! of cut-offs, and the selected questions export as a question set ready to
//! import as the final LAT.

use std::collections::{BTreeMap, BTreeSet};

/// One pilot member's answer to one question in one round.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct PilotAnswer {
    /// 0-based round.
    pub round: usize,
    /// The member's worker id (the same in every round).
    pub member: String,
    /// Question id.
    pub question: String,
    /// Chosen choice id.
    pub choice: String,
}

/// One question's pilot record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct PilotQuestion {
    /// Question id.
    pub id: String,
    /// Votes per choice over all members and rounds.
    pub votes: BTreeMap<String, u64>,
    /// Share of all answers held by the most chosen choice (1.0: everyone,
    /// every round, chose the same).
    pub consistency: f64,
    /// The majority of each round (`None` for a tie or no votes).
    pub round_majorities: Vec<Option<String>>,
    /// True when every round had the same single majority.
    pub stable: bool,
}

/// One member's record.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct PilotMember {
    /// Worker id.
    pub member: String,
    /// Rounds (0-based) the member answered in.
    pub rounds: Vec<usize>,
    /// Questions the member answered in at least two rounds.
    pub repeated_questions: usize,
    /// Share of those answered the same in every round (`None` without any).
    pub consistency: Option<f64>,
    /// Share of the member's answers that match the question's overall most chosen answer.
    pub agreement: Option<f64>,
}

/// The cut-offs of the paper's selection.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Selection {
    /// Keep the N most consistent questions (`None`: all).
    pub top: Option<usize>,
    /// Of those, keep questions with at least this consistency (1.0 = 100 %).
    pub min_consistency: f64,
}

impl Default for Selection {
    fn default() -> Self {
        Self { top: None, min_consistency: 1.0 }
    }
}

/// Everything the pilot page shows.
#[derive(Debug, Clone, PartialEq, serde::Serialize, utoipa::ToSchema)]
pub struct PilotReport {
    /// Rounds compared.
    pub rounds: usize,
    /// Questions, most consistent first.
    pub questions: Vec<PilotQuestion>,
    /// Members, by worker id.
    pub members: Vec<PilotMember>,
    /// Members missing from some round (the protocol wants the same team each time).
    pub incomplete_members: Vec<String>,
    /// The cut-offs applied.
    pub selection: Selection,
    /// Ids of the selected questions, in rank order.
    pub selected: Vec<String>,
}

fn majority(votes: &BTreeMap<String, u64>) -> Option<String> {
    let top = votes.values().copied().max().filter(|t| *t > 0)?;
    let mut winners = votes.iter().filter(|(_, v)| **v == top);
    let first = winners.next()?;
    winners.next().is_none().then(|| first.0.clone())
}

/// Ranks the questions: most consistent first, ties by id.
pub fn rank(answers: &[PilotAnswer], rounds: usize) -> Vec<PilotQuestion> {
    let mut per_round: BTreeMap<&str, Vec<BTreeMap<String, u64>>> = BTreeMap::new();
    for a in answers.iter().filter(|a| a.round < rounds) {
        let entry = per_round.entry(&a.question).or_insert_with(|| vec![BTreeMap::new(); rounds]);
        *entry[a.round].entry(a.choice.clone()).or_default() += 1;
    }
    let mut out: Vec<PilotQuestion> = per_round
        .into_iter()
        .map(|(id, by_round)| {
            let mut votes: BTreeMap<String, u64> = BTreeMap::new();
            for (choice, n) in by_round.iter().flatten() {
                *votes.entry(choice.clone()).or_default() += n;
            }
            let round_majorities: Vec<Option<String>> = by_round.iter().map(majority).collect();
            let total: u64 = votes.values().sum();
            let top = votes.values().copied().max().unwrap_or(0);
            let first = round_majorities.first().cloned().flatten();
            let stable = first.is_some() && round_majorities.iter().all(|m| *m == first);
            PilotQuestion {
                id: id.to_owned(),
                consistency: if total > 0 { top as f64 / total as f64 } else { 0.0 },
                votes,
                round_majorities,
                stable,
            }
        })
        .collect();
    out.sort_by(|a, b| b.consistency.total_cmp(&a.consistency).then_with(|| a.id.cmp(&b.id)));
    out
}

/// Each member's consistency across rounds and agreement with the crowd of members.
pub fn members(answers: &[PilotAnswer], questions: &[PilotQuestion]) -> Vec<PilotMember> {
    let winner: BTreeMap<&str, Option<&String>> = questions
        .iter()
        .map(|q| {
            let top = q.votes.values().copied().max().unwrap_or(0);
            let winners: Vec<&String> = q.votes.iter().filter(|(_, v)| **v == top).map(|(k, _)| k).collect();
            (q.id.as_str(), (winners.len() == 1).then(|| winners[0]))
        })
        .collect();
    let mut by_member: BTreeMap<&str, BTreeMap<&str, BTreeMap<usize, &str>>> = BTreeMap::new();
    for a in answers {
        by_member.entry(&a.member).or_default().entry(&a.question).or_default().insert(a.round, &a.choice);
    }
    by_member
        .into_iter()
        .map(|(member, by_question)| {
            let rounds: BTreeSet<usize> = by_question.values().flat_map(|r| r.keys().copied()).collect();
            let repeated: Vec<&BTreeMap<usize, &str>> = by_question.values().filter(|r| r.len() > 1).collect();
            let same = repeated.iter().filter(|r| r.values().collect::<BTreeSet<_>>().len() == 1).count();
            let (mut matched, mut compared) = (0usize, 0usize);
            for (q, by_round) in &by_question {
                if let Some(Some(w)) = winner.get(q) {
                    compared += by_round.len();
                    matched += by_round.values().filter(|c| **c == w.as_str()).count();
                }
            }
            PilotMember {
                member: member.to_owned(),
                rounds: rounds.into_iter().collect(),
                repeated_questions: repeated.len(),
                consistency: (!repeated.is_empty()).then(|| same as f64 / repeated.len() as f64),
                agreement: (compared > 0).then(|| matched as f64 / compared as f64),
            }
        })
        .collect()
}

/// The full report with the selection applied.
pub fn report(answers: &[PilotAnswer], rounds: usize, selection: Selection) -> PilotReport {
    let questions = rank(answers, rounds);
    let members = members(answers, &questions);
    let incomplete_members = members.iter().filter(|m| m.rounds.len() < rounds).map(|m| m.member.clone()).collect();
    let selected = questions
        .iter()
        .take(selection.top.unwrap_or(usize::MAX))
        .filter(|q| q.consistency >= selection.min_consistency - 1e-12)
        .map(|q| q.id.clone())
        .collect();
    PilotReport { rounds, questions, members, incomplete_members, selection, selected }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn answer(round: usize, member: &str, question: &str, choice: &str) -> PilotAnswer {
        PilotAnswer { round, member: member.into(), question: question.into(), choice: choice.into() }
    }

    /// Two rounds, members m1..m3; q1 unanimous, q2 split, q3 unanimous but m3 skipped round 2.
    fn pilot() -> Vec<PilotAnswer> {
        let mut v = Vec::new();
        for round in 0..2 {
            for m in ["m1", "m2", "m3"] {
                v.push(answer(round, m, "q1", "a"));
                let q2 = if m == "m1" && round == 1 { "b" } else { "a" };
                v.push(answer(round, m, "q2", if m == "m3" { "b" } else { q2 }));
                if !(m == "m3" && round == 1) {
                    v.push(answer(round, m, "q3", "c"));
                }
            }
        }
        v
    }

    #[test]
    fn ranks_questions_and_members_and_applies_the_papers_cut_offs() {
        let r = report(&pilot(), 2, Selection { top: Some(2), min_consistency: 1.0 });
        let ids: Vec<&str> = r.questions.iter().map(|q| q.id.as_str()).collect();
        assert_eq!(ids, vec!["q1", "q3", "q2"]);
        assert_eq!(r.questions[0].consistency, 1.0);
        let q2 = &r.questions[2];
        // q2: round 1 a,a,b; round 2 b,a,b -> 3 a of 6; round majorities a then b.
        assert!((q2.consistency - 0.5).abs() < 1e-12);
        assert_eq!(q2.round_majorities, vec![Some("a".into()), Some("b".into())]);
        assert!(!q2.stable);
        assert_eq!(r.selected, vec!["q1", "q3"], "top 2, both at 100 %");
        let m1 = r.members.iter().find(|m| m.member == "m1").expect("m1");
        assert_eq!(m1.repeated_questions, 3);
        assert!((m1.consistency.expect("defined") - 2.0 / 3.0).abs() < 1e-12, "m1 changed q2");
        let m3 = r.members.iter().find(|m| m.member == "m3").expect("m3");
        assert_eq!(m3.rounds, vec![0, 1]);
        assert_eq!(m3.repeated_questions, 2, "q3 only once");
        assert!(r.incomplete_members.is_empty(), "m3 answered in both rounds");
        let loose = report(&pilot(), 2, Selection { top: None, min_consistency: 0.5 });
        assert_eq!(loose.selected.len(), 3);
    }
}
