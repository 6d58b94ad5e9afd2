//! Reading a kind's configuration with errors that name the setting: serde
//! alone says "invalid value: integer `-3`, expected usize"; an admin needs
//! "`tasks_per_questionnaire`: invalid value: integer `-3`, expected a whole
//! number, 0 or more".

use crate::core::kind::contract::Invalid;
use serde::de::DeserializeOwned;
use serde_json::Value;

/// Reads a configuration (`null` as `{}`) into its typed form; a refusal
/// names the setting's path and the kind of value wanted in words.
pub fn parse<T: DeserializeOwned>(config: &Value) -> Result<T, Invalid> {
    let empty = Value::Object(serde_json::Map::new());
    let config = if config.is_null() { &empty } else { config };
    serde_path_to_error::deserialize(config).map_err(|e| {
        let path = e.path().to_string();
        let message = in_words(&e.inner().to_string());
        match path.as_str() {
            "." | "" => Invalid(format!("configuration: {message}")),
            path => Invalid(format!("`{path}`: {message}")),
        }
    })
}

/// Serde's Rust type names in a message, as an admin reads them.
fn in_words(message: &str) -> String {
    [
        ("expected usize", "expected a whole number, 0 or more"),
        ("expected u64", "expected a whole number, 0 or more"),
        ("expected u32", "expected a whole number, 0 or more"),
        ("expected u16", "expected a whole number, 0 or more"),
        ("expected u8", "expected a whole number, 0 or more"),
        ("expected i64", "expected a whole number"),
        ("expected i32", "expected a whole number"),
        ("expected f64", "expected a number"),
        ("expected f32", "expected a number"),
    ]
    .iter()
    .fold(message.to_owned(), |m, (rust, words)| m.replace(rust, words))
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[derive(Debug, serde::Deserialize)]
    #[serde(deny_unknown_fields)]
    struct Example {
        #[serde(default)]
        tasks_per_questionnaire: usize,
        #[serde(default)]
        curation: Curation,
    }

    #[derive(Debug, Default, serde::Deserialize)]
    struct Curation {
        #[serde(default)]
        min_alpha: f64,
    }

    #[test]
    fn refusals_name_the_setting_in_words() {
        let e = parse::<Example>(&json!({"tasks_per_questionnaire": -3})).expect_err("negative");
        assert_eq!(e.0, "`tasks_per_questionnaire`: invalid value: integer `-3`, expected a whole number, 0 or more");
        let e = parse::<Example>(&json!({"curation": {"min_alpha": "high"}})).expect_err("text");
        assert_eq!(e.0, "`curation.min_alpha`: invalid type: string \"high\", expected a number");
        let e = parse::<Example>(&json!({"tasks": 1})).expect_err("unknown");
        assert!(e.0.starts_with("`tasks`: unknown field `tasks`, expected"), "{}", e.0);
        let e = parse::<Example>(&json!("all")).expect_err("not an object");
        assert!(e.0.starts_with("configuration: invalid type: string"), "{}", e.0);
        let read = parse::<Example>(&json!({"curation": {"min_alpha": 0.5}})).expect("fine");
        assert_eq!((read.tasks_per_questionnaire, read.curation.min_alpha), (0, 0.5));
        assert_eq!(parse::<Example>(&Value::Null).expect("null is {}").tasks_per_questionnaire, 0);
    }
}
