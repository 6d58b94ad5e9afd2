//! An item's payload as its compact JSON text, parsed where it is read: a
//! campaign's payloads as parsed `Value`s take several times their text,
//! held through the whole of a release cut and of a ground
//! truth's computation, though each kind reads a few fields of each item
//! once.

use serde_json::value::RawValue;
use serde_json::Value;
use std::sync::Arc;

/// The payload, exactly as serde writes the document compactly (so the raw
/// files and the items table hold the same bytes as when it was a `Value`),
/// shared by its clones. Read back from a file it is written again the
/// same way, whatever spacing the file had.
#[derive(Debug, Clone)]
pub struct Payload(Arc<RawValue>);

impl Payload {
    /// The payload `value` as compact text.
    pub fn of(value: &Value) -> Self {
        // Writing a `Value` always gives valid JSON: `null` is never used.
        let text = serde_json::value::to_raw_value(value).unwrap_or_else(|_| RawValue::NULL.to_owned());
        Self(Arc::from(text))
    }

    /// The compact text.
    pub fn text(&self) -> &str {
        self.0.get()
    }

    /// The document read into a kind's type `T` (each call parses: keep it
    /// only as long as it is needed).
    pub fn read<T: serde::de::DeserializeOwned>(&self) -> Result<T, serde_json::Error> {
        serde_json::from_str(self.0.get())
    }

    /// The document, parsed again (each call parses: keep it only as long
    /// as it is needed).
    pub fn value(&self) -> Value {
        // The text was written from a `Value`: it always parses.
        serde_json::from_str(self.0.get()).unwrap_or(Value::Null)
    }
}

impl From<&Value> for Payload {
    fn from(value: &Value) -> Self {
        Self::of(value)
    }
}

impl From<Value> for Payload {
    fn from(value: Value) -> Self {
        Self::of(&value)
    }
}

impl PartialEq for Payload {
    fn eq(&self, other: &Self) -> bool {
        self.text() == other.text()
    }
}

impl serde::Serialize for Payload {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        self.0.serialize(s)
    }
}

impl<'de> serde::Deserialize<'de> for Payload {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        Value::deserialize(d).map(|value| Self::of(&value))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_text_is_the_values_compact_text_and_parses_back_to_it() {
        let value = serde_json::json!({"tryon": "/t.jpg", "garment": "/g é.jpg", "n": 1.5, "l": [1, {"b": 2, "a": 1}]});
        let payload = Payload::of(&value);
        assert_eq!(payload.text(), value.to_string());
        assert_eq!(payload.value(), value);
        assert_eq!(serde_json::to_string(&payload).expect("written"), value.to_string());
        let read: Payload = serde_json::from_str(&serde_json::to_string_pretty(&value).expect("pretty")).expect("read");
        assert_eq!(read, payload, "the spacing read is not kept");
    }
}
