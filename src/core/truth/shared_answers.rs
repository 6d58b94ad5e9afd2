//! One shared copy of each distinct answer while aggregating or taking a
//! release's snapshot: a crowd campaign's hundreds of thousands of answers
//! take a handful of values (`{"rating": 2}`), and each parsed JSON object
//! costs hundreds of bytes.

use serde_json::Value;
use std::collections::HashMap;
use std::sync::Arc;

/// Hands out one `Arc` per distinct answer.
#[derive(Debug, Default)]
pub struct SharedAnswers {
    by_text: HashMap<String, Arc<Value>>,
}

impl SharedAnswers {
    /// The answer written as JSON text (PostgreSQL writes equal `jsonb`
    /// values as equal text), parsed once per distinct text.
    pub fn from_text(&mut self, text: &str) -> Result<Arc<Value>, serde_json::Error> {
        if let Some(shared) = self.by_text.get(text) {
            return Ok(shared.clone());
        }
        let parsed = Arc::new(serde_json::from_str::<Value>(text)?);
        self.by_text.insert(text.to_owned(), parsed.clone());
        Ok(parsed)
    }

    /// The shared copy of an answer already parsed (keyed by its compact
    /// text, which equal values share: objects' keys are sorted).
    pub fn share(&mut self, answer: Arc<Value>) -> Arc<Value> {
        let text = answer.to_string();
        self.by_text.entry(text).or_insert(answer).clone()
    }

    /// Distinct answers seen.
    #[cfg(test)]
    fn distinct(&self) -> usize {
        self.by_text.len()
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn equal_answers_share_one_copy_and_different_ones_do_not() {
        let mut shared = SharedAnswers::default();
        let a = shared.from_text(r#"{"rating": 2}"#).expect("valid JSON");
        let b = shared.from_text(r#"{"rating": 2}"#).expect("valid JSON");
        let c = shared.from_text(r#"{"rating": 3}"#).expect("valid JSON");
        assert!(Arc::ptr_eq(&a, &b));
        assert!(!Arc::ptr_eq(&a, &c));
        assert_eq!(*a, json!({"rating": 2}));
        assert_eq!(*c, json!({"rating": 3}));
        assert_eq!(shared.distinct(), 2);
        assert!(shared.from_text("{").is_err());
        let mut parsed = SharedAnswers::default();
        let first = parsed.share(Arc::new(json!({"rating": 2, "note": "x"})));
        let again = parsed.share(Arc::new(json!({"note": "x", "rating": 2})));
        let other = parsed.share(Arc::new(json!({"rating": 3})));
        assert!(Arc::ptr_eq(&first, &again), "equal parsed answers share one copy");
        assert!(!Arc::ptr_eq(&first, &other));
    }
}
