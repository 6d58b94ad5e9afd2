//! Images that show an item at a glance on admin pages (the data browser):
//! by default every image address in its payload, named by its key.

use serde_json::Value;

/// One image of an item.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Thumbnail {
    /// Where the admin's browser fetches it.
    pub url: String,
    /// What it shows (the payload key it came from, e.g. `tryon`), for its
    /// alt text and caption.
    pub label: String,
}

/// File endings of the images the default finds.
const IMAGE_ENDINGS: [&str; 7] = [".png", ".jpg", ".jpeg", ".gif", ".webp", ".svg", ".avif"];

/// Whether a payload string is an image's address: uploaded images, and
/// other absolute or site addresses ending like an image file.
fn is_image_address(s: &str) -> bool {
    if s.starts_with(crate::core::item::images::UPLOADED) || s.starts_with(crate::core::item::images::IN_BUCKET) {
        return true;
    }
    let path = s.split(['?', '#']).next().unwrap_or_default().to_ascii_lowercase();
    (s.starts_with('/') || s.starts_with("https://") || s.starts_with("http://"))
        && IMAGE_ENDINGS.iter().any(|e| path.ends_with(e))
}

/// Every image address in `payload`, in document order, labelled by the
/// nearest object key (an array's elements by that key and their number).
pub fn in_payload(payload: &Value) -> Vec<Thumbnail> {
    fn walk(value: &Value, label: &str, out: &mut Vec<Thumbnail>) {
        match value {
            Value::String(s) if is_image_address(s) => out.push(Thumbnail { url: s.clone(), label: label.to_owned() }),
            Value::Array(items) => {
                for (n, v) in items.iter().enumerate() {
                    walk(v, &format!("{label} {}", n + 1), out);
                }
            }
            Value::Object(fields) => {
                for (k, v) in fields {
                    // An image under a generic key (`image`, `image_url`)
                    // is named by what holds it.
                    let label = match () {
                        _ if label.is_empty() => k.clone(),
                        _ if k.contains("image") || k == "url" => label.to_owned(),
                        _ => format!("{label} {k}"),
                    };
                    walk(v, &label, out);
                }
            }
            _ => {}
        }
    }
    let mut out = Vec::new();
    walk(payload, "", &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn image_addresses_are_found_and_named_by_their_keys() {
        let payload = json!({
            "tryon": "/images/abc.png", "garment": "https://cdn.example/g.JPG?w=200", "model": "model-a",
            "page": "https://example.org/about", "outfit": [{"image": "/demo/images/outfit/1.svg"}, {"image": "/o/2.webp"}],
        });
        let found: Vec<(String, String)> = in_payload(&payload).into_iter().map(|t| (t.label, t.url)).collect();
        assert_eq!(
            found,
            [
                ("garment", "https://cdn.example/g.JPG?w=200"),
                ("outfit 1", "/demo/images/outfit/1.svg"),
                ("outfit 2", "/o/2.webp"),
                ("tryon", "/images/abc.png"),
            ]
            .map(|(l, u)| (l.to_owned(), u.to_owned()))
        );
    }

    #[test]
    fn text_that_only_looks_like_a_file_is_not_an_image() {
        for s in ["notes.png", "javascript:alert(1).png", "data:image/png;base64,xx", "/images"] {
            assert!(!is_image_address(s), "{s}");
        }
    }
}
