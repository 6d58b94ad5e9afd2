//! A100 questionnaire scores: LATs and mLATs against crowd votes, AATs and
//! per-dimension indexes against an expert answer key.

use std::collections::{BTreeMap, HashMap};

/// One LAT question: the crowd's votes per choice id.
#[derive(Debug, Clone, PartialEq)]
pub struct LatQuestion {
    /// Question id.
    pub id: String,
    /// Votes per choice id (choices without votes may be absent).
    pub votes: HashMap<String, u64>,
}

/// One AAT question with its key.
#[derive(Debug, Clone, PartialEq)]
pub struct AatQuestion {
    /// Question id.
    pub id: String,
    /// The correct choice id.
    pub answer: String,
    /// Aesthetic dimension (Color, Style, ...).
    pub dimension: String,
    /// Sub-dimension within the dimension.
    pub sub_dimension: String,
}

/// How a model choosing one of t tied majority choices is credited in LATs.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, serde::Serialize, serde::Deserialize, clap::ValueEnum)]
#[serde(rename_all = "lowercase")]
pub enum TieCredit {
    /// 1/t (the default: a tie is split evenly among the tied choices).
    #[default]
    Fraction,
    /// 0: a tie has no majority to match.
    None,
    /// 1: any of the tied choices is the majority.
    Full,
}

/// A model's per-question credit on a LAT.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LatCredit {
    /// Question id.
    pub id: String,
    /// The model's choice, if it answered.
    pub answer: Option<String>,
    /// LATs credit: 1 for the majority choice, within a t-way tie as the
    /// [`TieCredit`] says (1/t by default), else 0.
    pub lats: f64,
    /// mLATs credit: votes for the model's choice divided by the number of
    /// people who took the test (the paper's Eq. 2).
    pub mlats: f64,
}

/// LAT scores of one model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct LatScore {
    /// Mean LATs credit over all questions.
    pub lats: f64,
    /// Mean mLATs credit over all questions.
    pub mlats: f64,
    /// Per-question detail.
    pub questions: Vec<LatCredit>,
}

/// Scores a model's answers (question id -> choice id) on a LAT. Unanswered
/// questions count 0; an empty question set scores 0. `participants` is x of
/// the paper's Eq. 2, the number of people who took the test; without it each
/// question's own vote total is used (the same when everyone answered
/// everything).
pub fn score_lat(
    questions: &[LatQuestion],
    answers: &HashMap<String, String>,
    participants: Option<u64>,
    ties: TieCredit,
) -> LatScore {
    let mut detail = Vec::with_capacity(questions.len());
    for q in questions {
        let answer = answers.get(&q.id).cloned();
        let total = participants.unwrap_or_else(|| q.votes.values().sum());
        let top = q.votes.values().copied().max().unwrap_or(0);
        let tied = q.votes.values().filter(|&&v| v == top).count();
        let chosen = answer.as_ref().and_then(|a| q.votes.get(a)).copied().unwrap_or(0);
        let lats = match (top > 0 && chosen == top, tied, ties) {
            (false, _, _) => 0.0,
            (true, 1, _) | (true, _, TieCredit::Full) => 1.0,
            (true, _, TieCredit::None) => 0.0,
            (true, t, TieCredit::Fraction) => 1.0 / t as f64,
        };
        let mlats = if total > 0 { chosen as f64 / total as f64 } else { 0.0 };
        detail.push(LatCredit { id: q.id.clone(), answer, lats, mlats });
    }
    let n = detail.len().max(1) as f64;
    LatScore {
        lats: detail.iter().map(|d| d.lats).sum::<f64>() / n,
        mlats: detail.iter().map(|d| d.mlats).sum::<f64>() / n,
        questions: detail,
    }
}

/// A model's per-question result on an AAT.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AatCredit {
    /// Question id.
    pub id: String,
    /// The model's choice, if it answered.
    pub answer: Option<String>,
    /// Whether it matches the key.
    pub correct: bool,
}

/// AAT scores of one model.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct AatScore {
    /// Share of questions answered with the key.
    pub aats: f64,
    /// Accuracy per dimension.
    pub indexes: BTreeMap<String, f64>,
    /// Accuracy per "Dimension/Sub-dimension".
    pub sub_indexes: BTreeMap<String, f64>,
    /// Per-question detail.
    pub questions: Vec<AatCredit>,
}

/// Scores a model's answers on an AAT.
pub fn score_aat(questions: &[AatQuestion], answers: &HashMap<String, String>) -> AatScore {
    let mut dims: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut subs: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    let mut detail = Vec::with_capacity(questions.len());
    for q in questions {
        let answer = answers.get(&q.id).cloned();
        let correct = answer.as_deref() == Some(q.answer.as_str());
        for (map, key) in
            [(&mut dims, q.dimension.clone()), (&mut subs, format!("{}/{}", q.dimension, q.sub_dimension))]
        {
            let e = map.entry(key).or_default();
            e.0 += usize::from(correct);
            e.1 += 1;
        }
        detail.push(AatCredit { id: q.id.clone(), answer, correct });
    }
    let ratio = |(c, n): &(usize, usize)| *c as f64 / *n as f64;
    AatScore {
        aats: detail.iter().filter(|d| d.correct).count() as f64 / detail.len().max(1) as f64,
        indexes: dims.iter().map(|(k, v)| (k.clone(), ratio(v))).collect(),
        sub_indexes: subs.iter().map(|(k, v)| (k.clone(), ratio(v))).collect(),
        questions: detail,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn votes(pairs: &[(&str, u64)]) -> HashMap<String, u64> {
        pairs.iter().map(|&(c, v)| (c.to_owned(), v)).collect()
    }

    fn answers(pairs: &[(&str, &str)]) -> HashMap<String, String> {
        pairs.iter().map(|&(q, c)| (q.to_owned(), c.to_owned())).collect()
    }

    #[test]
    fn lat_scores_worked_by_hand() {
        let qs = vec![
            LatQuestion { id: "q1".into(), votes: votes(&[("a", 6), ("b", 3), ("c", 1)]) },
            LatQuestion { id: "q2".into(), votes: votes(&[("a", 4), ("b", 4), ("c", 2)]) },
            LatQuestion { id: "q3".into(), votes: votes(&[("d", 5), ("e", 5)]) },
        ];
        // q1: majority -> 1, mLATs 6/10. q2: one of a 2-way tie -> 1/2, mLATs 4/10.
        // q3: unanswered -> 0, 0.
        let s = score_lat(&qs, &answers(&[("q1", "a"), ("q2", "b")]), None, TieCredit::Fraction);
        assert!((s.lats - 1.5 / 3.0).abs() < 1e-12);
        assert!((s.mlats - 1.0 / 3.0).abs() < 1e-12);
        assert_eq!(s.questions[1].lats, 0.5);
        let none = score_lat(&qs, &answers(&[("q1", "a"), ("q2", "b")]), None, TieCredit::None);
        assert!((none.lats - 1.0 / 3.0).abs() < 1e-12);
        let full = score_lat(&qs, &answers(&[("q1", "a"), ("q2", "b")]), None, TieCredit::Full);
        assert!((full.lats - 2.0 / 3.0).abs() < 1e-12);
    }

    #[test]
    fn mlats_divide_by_the_people_who_took_the_test() {
        // 12 people took the test; q1 got 10 answers, q2 all 12.
        let qs = vec![
            LatQuestion { id: "q1".into(), votes: votes(&[("a", 6), ("b", 4)]) },
            LatQuestion { id: "q2".into(), votes: votes(&[("a", 3), ("b", 9)]) },
        ];
        let a = answers(&[("q1", "a"), ("q2", "b")]);
        let s = score_lat(&qs, &a, Some(12), TieCredit::Fraction);
        assert!((s.mlats - (6.0 / 12.0 + 9.0 / 12.0) / 2.0).abs() < 1e-12);
        let per_question = score_lat(&qs, &a, None, TieCredit::Fraction);
        assert!((per_question.mlats - (6.0 / 10.0 + 9.0 / 12.0) / 2.0).abs() < 1e-12);
    }

    #[test]
    fn aat_scores_and_indexes() {
        let q = |id: &str, ans: &str, d: &str, s: &str| AatQuestion {
            id: id.into(),
            answer: ans.into(),
            dimension: d.into(),
            sub_dimension: s.into(),
        };
        let qs = vec![
            q("1", "a", "Color", "Warm Tone"),
            q("2", "b", "Color", "Cool Tone"),
            q("3", "c", "Style", "Casual"),
            q("4", "d", "Style", "Casual"),
        ];
        let s = score_aat(&qs, &answers(&[("1", "a"), ("2", "x"), ("3", "c"), ("4", "d")]));
        assert_eq!(s.aats, 0.75);
        assert_eq!(s.indexes["Color"], 0.5);
        assert_eq!(s.indexes["Style"], 1.0);
        assert_eq!(s.sub_indexes["Color/Cool Tone"], 0.0);
        assert_eq!(s.sub_indexes["Style/Casual"], 1.0);
    }
}
