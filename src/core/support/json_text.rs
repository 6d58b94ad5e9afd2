//! Compact JSON text of big documents in a buffer of exactly their length.
//! Written straight into a growing buffer, a big ground truth leaves
//! every smaller buffer it outgrew behind (about as much again) and needs
//! the old and the new one at once at each step; measuring first costs one
//! more pass over the document and no memory.

/// The compact JSON text of `value`, sized exactly.
pub fn exact(value: &impl serde::Serialize) -> serde_json::Result<String> {
    written(length(value)?, value)
}

/// The length of `value`'s compact JSON text, nothing kept.
pub fn length(value: &impl serde::Serialize) -> serde_json::Result<usize> {
    let mut length = Length(0);
    serde_json::to_writer(&mut length, value)?;
    Ok(length.0)
}

/// The compact JSON text of `value` in a buffer of `length` bytes (its
/// [`length`], measured on the same document, perhaps before it was handed
/// over to be consumed as it is written).
pub fn written(length: usize, value: &impl serde::Serialize) -> serde_json::Result<String> {
    let mut text = Vec::with_capacity(length);
    serde_json::to_writer(&mut text, value)?;
    String::from_utf8(text).map_err(serde::ser::Error::custom)
}

/// Counts what is written to it.
struct Length(usize);

impl std::io::Write for Length {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.0 += bytes.len();
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_text_is_serde_jsons_with_no_room_left() {
        let value = serde_json::json!({"b": [1, 2.5, "x\"y"], "a": {"nested": null}, "n": -3});
        let text = super::exact(&value).expect("text");
        assert_eq!(text, value.to_string());
        assert_eq!(text.capacity(), text.len());
    }
}
