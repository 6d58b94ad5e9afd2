//! Lists and maps in the settings form as lines of text (see
//! [`Editor`]): what the form shows for a value, and the value a posted
//! text stands for. Both directions are checked against each other in the
//! tests, so what the form shows is saved unchanged.

use crate::core::campaign::setting_help::Editor;
use serde_json::{Map, Value};

/// The value as lines for `editor`, or `None` when the lines cannot hold it
/// (the form then shows JSON).
pub fn to_lines(editor: Editor, value: &Value) -> Option<String> {
    match editor {
        Editor::Typed => None,
        Editor::Questions => {
            let lines: Option<Vec<String>> = value
                .as_array()?
                .iter()
                .map(|q| {
                    let id = q["id"].as_str().filter(|id| !id.contains(':') && !id.trim().is_empty())?;
                    let question = q["question"].as_str().filter(|t| !t.contains('|'))?;
                    let options: Option<Vec<&str>> =
                        q["options"].as_array()?.iter().map(|o| o.as_str().filter(|o| !o.contains('|'))).collect();
                    Some(format!("{id}: {question} | {}", options?.join(" | ")))
                })
                .collect();
            Some(lines?.join("\n"))
        }
        Editor::NamesPerKey => {
            let lines: Option<Vec<String>> = value
                .as_object()?
                .iter()
                .map(|(key, names)| {
                    let names: Vec<&str> = names
                        .as_array()?
                        .iter()
                        .map(|n| n.as_str().filter(|n| !n.contains(',')))
                        .collect::<Option<_>>()?;
                    (!key.contains(':')).then(|| format!("{key}: {}", names.join(", ")))
                })
                .collect();
            Some(lines?.join("\n"))
        }
        Editor::Numbers => match value {
            Value::Null => Some(String::new()),
            Value::Array(numbers) => {
                let numbers: Option<Vec<String>> = numbers.iter().map(|n| n.as_i64().map(|n| n.to_string())).collect();
                Some(numbers?.join(", "))
            }
            _ => None,
        },
    }
}

/// The value the posted lines stand for; the error names the line.
pub fn from_lines(editor: Editor, text: &str) -> Result<Value, String> {
    let lines = text.lines().enumerate().map(|(i, l)| (i + 1, l.trim())).filter(|(_, l)| !l.is_empty());
    match editor {
        Editor::Typed => serde_json::from_str(text).map_err(|e| format!("not valid JSON ({e})")),
        Editor::Questions => {
            let mut questions = Vec::new();
            for (n, line) in lines {
                let (id, rest) =
                    line.split_once(':').ok_or(format!("line {n}: expected `id: question | option | …`"))?;
                let mut parts = rest.split('|').map(str::trim);
                let question = parts.next().unwrap_or_default();
                let options: Vec<&str> = parts.filter(|o| !o.is_empty()).collect();
                if id.trim().is_empty() || question.is_empty() || options.len() < 2 {
                    return Err(format!("line {n}: expected an id, a question and at least two options"));
                }
                questions.push(serde_json::json!({"id": id.trim(), "question": question, "options": options}));
            }
            Ok(Value::Array(questions))
        }
        Editor::NamesPerKey => {
            let mut map = Map::new();
            for (n, line) in lines {
                let (key, names) = line.rsplit_once(':').ok_or(format!("line {n}: expected `key: name, name`"))?;
                let names: Vec<Value> =
                    names.split(',').map(str::trim).filter(|s| !s.is_empty()).map(Value::from).collect();
                if map.insert(key.trim().to_owned(), Value::Array(names)).is_some() {
                    return Err(format!("line {n}: `{}` is given twice", key.trim()));
                }
            }
            Ok(Value::Object(map))
        }
        Editor::Numbers => {
            let numbers: Vec<&str> = text.split(',').map(str::trim).filter(|s| !s.is_empty()).collect();
            if numbers.is_empty() {
                return Ok(Value::Null);
            }
            numbers
                .iter()
                .map(|s| s.parse::<i64>().map(Value::from).map_err(|_| format!("`{s}` is not a whole number")))
                .collect::<Result<Vec<_>, _>>()
                .map(Value::Array)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn lines_stand_for_the_value_they_show() {
        let questions = json!([
            {"id": "gender", "question": "Your gender?", "options": ["female", "male", "other", "prefer not to say"]},
            {"id": "age", "question": "Your age?", "options": ["18-24", "25-34"]}
        ]);
        let experts = json!({"garment parts": ["ana", "bo"], "upper body": []});
        for (editor, value) in
            [(Editor::Questions, questions), (Editor::NamesPerKey, experts), (Editor::Numbers, json!([5, 15, 25]))]
        {
            let lines = to_lines(editor, &value).expect("shown as lines");
            assert_eq!(from_lines(editor, &lines).expect("read back"), value, "{lines}");
        }
        assert_eq!(
            to_lines(Editor::Questions, &json!([{"id": "a", "question": "Q?", "options": ["x", "y"]}])).as_deref(),
            Some("a: Q? | x | y")
        );
        assert_eq!(from_lines(Editor::Numbers, " ").expect("empty"), Value::Null);
    }

    #[test]
    fn what_lines_cannot_hold_is_shown_as_json_and_bad_lines_are_named() {
        let piped = json!([{"id": "a", "question": "this | that?", "options": ["x", "y"]}]);
        assert_eq!(to_lines(Editor::Questions, &piped), None);
        assert_eq!(to_lines(Editor::NamesPerKey, &json!({"a:b": ["x"]})), None);
        assert_eq!(to_lines(Editor::NamesPerKey, &json!({"a": ["x, y"]})), None);
        let e =
            from_lines(Editor::Questions, "gender: Your gender? | female | male\nage: Your age?\n").expect_err("bad");
        assert!(e.starts_with("line 2:"), "{e}");
        let e = from_lines(Editor::NamesPerKey, "upper: ana\nupper: bo").expect_err("twice");
        assert!(e.contains("line 2") && e.contains("`upper` is given twice"), "{e}");
        assert!(from_lines(Editor::Numbers, "5, x").expect_err("nan").contains("`x`"));
    }
}
