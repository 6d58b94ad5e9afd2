//! The A100 question-set import format and its validation.

use super::outfit::{self, Rule, CATEGORIES};
use serde_json::{json, Value};
use std::collections::HashSet;

/// The six aesthetic dimensions of the AAT.
pub const DIMENSIONS: [&str; 6] = ["Color", "Style", "Occasion", "Season", "Material", "Balance"];

/// The AAT's sub-dimensions per dimension, as in the A100 paper's Table 2.
pub const SUB_DIMENSIONS: [(&str, &[&str]); 6] = [
    ("Color", &["Same Color", "Warm Tone", "Cool Tone", "Contrast Color"]),
    ("Style", &["Street-wear", "Modern", "Vintage", "Sweet", "Elegant", "Sporty", "Minimal", "Bohemian"]),
    ("Occasion", &["Formal", "Cocktail", "Smart Casual", "Casual", "Party"]),
    ("Season", &["Spring", "Summer", "Autumn", "Winter"]),
    ("Material", &["Element", "Pattern", "Texture"]),
    ("Balance", &["Silhouette", "Simple & Complicated", "Proportion"]),
];

/// The sub-dimensions of a dimension (empty for an unknown dimension).
pub fn sub_dimensions(dimension: &str) -> &'static [&'static str] {
    SUB_DIMENSIONS.iter().find(|(d, _)| *d == dimension).map_or(&[], |(_, subs)| subs)
}

/// An item of the partial outfit.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct OutfitItem {
    /// Image URL or path (e.g. from `POST /api/v1/admin/images`).
    pub image: String,
    /// One of the 20 categories.
    pub category: String,
}

/// A candidate for the blank.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Choice {
    /// Choice id, unique within the question; answers are stored as this id.
    pub id: String,
    /// Image URL or path.
    pub image: String,
    /// Category; defaults to the blanked category.
    #[serde(default)]
    pub category: Option<String>,
}

/// An admin's decision to accept a question that breaks an outfit rule.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct Override {
    /// The rule (e.g. `one_per_clothing` for layering).
    pub rule: Rule,
    /// Why it is accepted; recorded with the question.
    pub reason: String,
}

/// One fill-in-the-blank question as imported.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
#[serde(deny_unknown_fields)]
pub struct Question {
    /// Question id, unique within the set.
    pub id: String,
    /// The partial outfit: 1 to 7 items.
    pub outfit: Vec<OutfitItem>,
    /// Category of the missing item.
    pub blank_category: String,
    /// The five candidates.
    pub choices: Vec<Choice>,
    /// AAT: the correct choice id. LAT: only for attention checks.
    #[serde(default)]
    pub answer: Option<String>,
    /// AAT: the dimension tested.
    #[serde(default)]
    pub dimension: Option<String>,
    /// AAT: the sub-dimension (e.g. Warm Tone).
    #[serde(default)]
    pub sub_dimension: Option<String>,
    /// LAT: an attention check with an obvious answer (`answer` required).
    #[serde(default)]
    pub attention_check: bool,
    /// Accepted rule violations with reasons.
    #[serde(default)]
    pub overrides: Vec<Override>,
}

/// A question set.
#[derive(Debug, Clone, serde::Deserialize, utoipa::ToSchema)]
pub struct QuestionSet {
    /// The questions.
    pub questions: Vec<Question>,
}

/// Validates one question for a LAT (`aat = false`) or AAT; every problem
/// is listed, each outfit-rule failure by name.
pub fn validate(q: &Question, aat: bool) -> Result<(), String> {
    let mut problems = Vec::new();
    if q.outfit.is_empty() || q.outfit.len() > 7 {
        problems.push(format!("the outfit has {} items (1 to 7 allowed)", q.outfit.len()));
    }
    for c in q
        .outfit
        .iter()
        .map(|i| i.category.as_str())
        .chain([q.blank_category.as_str()])
        .chain(q.choices.iter().filter_map(|c| c.category.as_deref()))
    {
        if !CATEGORIES.contains(&c) {
            problems.push(format!("unknown category `{c}`"));
        }
    }
    let ids: HashSet<&str> = q.choices.iter().map(|c| c.id.as_str()).collect();
    if ids.len() != q.choices.len() || ids.contains("") {
        problems.push("choice ids must be distinct and non-empty".into());
    }
    if q.outfit.iter().map(|i| &i.image).chain(q.choices.iter().map(|c| &c.image)).any(|i| i.trim().is_empty()) {
        problems.push("every item and choice needs an image".into());
    }
    let outfit: Vec<&str> = q.outfit.iter().map(|i| i.category.as_str()).collect();
    let choices: Vec<&str> = q.choices.iter().map(|c| c.category.as_deref().unwrap_or(&q.blank_category)).collect();
    let overridden: HashSet<Rule> = q.overrides.iter().map(|o| o.rule).collect();
    for o in &q.overrides {
        if o.reason.trim().is_empty() {
            problems.push(format!("the override of `{}` needs a reason", o.rule.name()));
        }
    }
    for v in outfit::check(&outfit, &q.blank_category, &choices) {
        if !overridden.contains(&v.rule) {
            problems.push(format!("rule `{}`: {}", v.rule.name(), v.detail));
        }
    }
    if let Some(a) = &q.answer {
        if !ids.contains(a.as_str()) {
            problems.push(format!("answer `{a}` is not one of the choices"));
        }
    }
    if aat {
        if q.answer.is_none() {
            problems.push("AAT questions need the correct `answer`".into());
        }
        match q.dimension.as_deref() {
            Some(d) if DIMENSIONS.contains(&d) => {}
            Some(d) => problems.push(format!("unknown dimension `{d}` (one of {})", DIMENSIONS.join(", "))),
            None => problems.push("AAT questions need a `dimension`".into()),
        }
        match (q.dimension.as_deref(), q.sub_dimension.as_deref()) {
            (_, None) => problems.push("AAT questions need a `sub_dimension`".into()),
            (_, Some(s)) if s.trim().is_empty() => problems.push("AAT questions need a `sub_dimension`".into()),
            (Some(d), Some(s))
                if DIMENSIONS.contains(&d)
                    && !sub_dimensions(d).contains(&s)
                    && !overridden.contains(&Rule::KnownSubDimension) =>
            {
                problems.push(format!(
                    "rule `{}`: `{s}` is not a sub-dimension of {d} (one of {})",
                    Rule::KnownSubDimension.name(),
                    sub_dimensions(d).join(", ")
                ));
            }
            _ => {}
        }
    } else if q.attention_check != q.answer.is_some() {
        problems.push("in a LAT only attention checks have an `answer`, and they must have one".into());
    }
    // One message per problem: an unknown category used by all five choices is one problem.
    let mut seen = HashSet::new();
    problems.retain(|p| seen.insert(p.clone()));
    if problems.is_empty() {
        Ok(())
    } else {
        Err(problems.join("; "))
    }
}

/// Splits a question into the stored item: payload (shown, minus the key)
/// and gold (the key or the attention check's answer).
pub fn to_item(q: &Question) -> (Value, Option<Value>) {
    let payload = json!({
        "id": q.id,
        "outfit": q.outfit,
        "blank_category": q.blank_category,
        "choices": q.choices,
        "dimension": q.dimension,
        "sub_dimension": q.sub_dimension,
        "attention_check": q.attention_check,
        "overrides": q.overrides,
    });
    (payload, q.answer.as_ref().map(|a| json!({ "answer": a })))
}

/// Parses a question-set file into items to import.
pub fn parse_set(
    text: &str,
) -> Result<Vec<crate::core::item::new_item::NewItem>, crate::core::kind::contract::Invalid> {
    let set: QuestionSet = serde_json::from_str(text)
        .map_err(|e| crate::core::kind::contract::Invalid(format!("line {}: {e}", e.line())))?;
    Ok(to_items(&set))
}

/// The items to import for a question set.
pub fn to_items(set: &QuestionSet) -> Vec<crate::core::item::new_item::NewItem> {
    set.questions
        .iter()
        .map(|q| {
            let (payload, gold) = to_item(q);
            crate::core::item::new_item::NewItem { external_id: q.id.clone(), payload, gold }
        })
        .collect()
}

/// Reads a stored payload back into a question (with its gold answer).
pub fn from_item(payload: &Value, gold: Option<&Value>) -> Result<Question, String> {
    let mut v = payload.clone();
    if let Some(obj) = v.as_object_mut() {
        obj.insert("answer".into(), gold.and_then(|g| g.get("answer")).cloned().unwrap_or(Value::Null));
    }
    serde_json::from_value(v).map_err(|e| e.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn question() -> Question {
        let choice =
            |i: usize| Choice { id: format!("c{i}"), image: format!("/c{i}.png"), category: Some("Shoes".into()) };
        Question {
            id: "q1".into(),
            outfit: vec![
                OutfitItem { image: "/top.png".into(), category: "Tops".into() },
                OutfitItem { image: "/pants.png".into(), category: "Pants".into() },
            ],
            blank_category: "Shoes".into(),
            choices: (1..=5).map(choice).collect(),
            answer: Some("c3".into()),
            dimension: Some("Color".into()),
            sub_dimension: Some("Warm Tone".into()),
            attention_check: false,
            overrides: vec![],
        }
    }

    #[test]
    fn valid_aat_question_and_roundtrip_through_storage() {
        let q = question();
        assert_eq!(validate(&q, true), Ok(()));
        let (payload, gold) = to_item(&q);
        assert!(payload.get("answer").is_none(), "the key never goes into the payload");
        assert_eq!(from_item(&payload, gold.as_ref()), Ok(q));
    }

    #[test]
    fn rule_failures_are_reported_and_can_be_overridden_with_a_reason() {
        let mut q = question();
        q.outfit.push(OutfitItem { image: "/coat.png".into(), category: "Tops".into() });
        let err = validate(&q, true).expect_err("two tops");
        assert!(err.contains("one_per_clothing"), "{err}");
        q.overrides.push(Override { rule: Rule::OnePerClothing, reason: "layering on purpose".into() });
        assert_eq!(validate(&q, true), Ok(()));
        q.overrides[0].reason = " ".into();
        assert!(validate(&q, true).is_err());
    }

    #[test]
    fn lat_questions_have_no_key_unless_attention_checks() {
        let mut q = question();
        assert!(validate(&q, false).is_err());
        q.attention_check = true;
        assert_eq!(validate(&q, false), Ok(()));
        q.answer = None;
        q.attention_check = false;
        assert_eq!(validate(&q, false), Ok(()));
        q.dimension = Some("Vibes".into());
        q.answer = Some("c1".into());
        assert!(validate(&q, true).is_err_and(|e| e.contains("Vibes")));
    }

    #[test]
    fn each_problem_is_reported_once() {
        let mut q = question();
        q.blank_category = "Capes".into();
        for c in &mut q.choices {
            c.category = Some("Capes".into());
        }
        let err = validate(&q, true).expect_err("unknown category");
        assert_eq!(err.matches("unknown category `Capes`").count(), 1, "{err}");
    }

    #[test]
    fn aat_sub_dimensions_follow_table_2_unless_overridden_with_a_reason() {
        let mut q = question();
        for (dimension, subs) in SUB_DIMENSIONS {
            for sub in subs {
                q.dimension = Some(dimension.into());
                q.sub_dimension = Some((*sub).into());
                assert_eq!(validate(&q, true), Ok(()), "{dimension}/{sub}");
            }
        }
        assert_eq!(SUB_DIMENSIONS.iter().map(|(_, s)| s.len()).sum::<usize>(), 27);
        q.dimension = Some("Color".into());
        q.sub_dimension = Some("Casual".into());
        let err = validate(&q, true).expect_err("Casual is an Occasion");
        assert!(err.contains("known_sub_dimension") && err.contains("Warm Tone"), "{err}");
        q.overrides.push(Override { rule: Rule::KnownSubDimension, reason: "pilot taxonomy".into() });
        assert_eq!(validate(&q, true), Ok(()));
    }
}
