//! What an annotator's pages and the API call an item: a handle of its own
//! in each assignment, never the item's id. The same sanity task shared by
//! every questionnaire therefore has a different handle in each, and two
//! workers comparing their questionnaires cannot match items by id.
//!
//! A handle is the first 16 bytes of SHA-256(assignment id ‖ item id), as
//! a version-8 UUID: workers never see item ids (random v4 UUIDs), so
//! handles can be neither inverted nor linked across assignments. The
//! answer path maps a handle back through the assignment's batch (read
//! once per assignment and remembered, see `record`).

use crate::core::item::images::{IN_BUCKET, UPLOADED};
use sha2::{Digest, Sha256};
use uuid::Uuid;

/// The item's handle in this assignment.
pub fn handle(assignment_id: Uuid, item_id: Uuid) -> Uuid {
    let digest = Sha256::new().chain_update(assignment_id.as_bytes()).chain_update(item_id.as_bytes()).finalize();
    let mut bytes = [0u8; 16];
    bytes.copy_from_slice(&digest[..16]);
    // Version 8 (custom), RFC 9562 variant.
    bytes[6] = (bytes[6] & 0x0f) | 0x80;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    Uuid::from_bytes(bytes)
}

/// The name an uploaded image (`file`, as stored) has in this assignment:
/// 32 hex digits of SHA-256(assignment id ‖ file name), with the file's
/// extension. The same image is named differently in every questionnaire.
pub fn image_name(assignment_id: Uuid, file: &str) -> String {
    let digest = Sha256::new().chain_update(assignment_id.as_bytes()).chain_update(file.as_bytes()).finalize();
    let extension = file.rsplit_once('.').map(|(_, e)| e).unwrap_or("img");
    format!("{}.{extension}", hex::encode(&digest[..16]))
}

/// The address an annotator fetches an uploaded image at in this assignment.
pub fn image_address(assignment_id: Uuid, file: &str) -> String {
    format!("/work/a/{assignment_id}/img/{}", image_name(assignment_id, file))
}

/// The address an admin's browser fetches an image at: an image of the
/// lab's bucket (`s3://bucket/key`) through the admin's own route (the
/// bucket stays private), any other address as it is.
pub fn admin_address(address: &str) -> String {
    match address.strip_prefix(IN_BUCKET).and_then(|rest| rest.split_once('/')) {
        Some((_, key)) => format!("/admin/bucket/{key}"),
        None => address.to_owned(),
    }
}

/// Rewrites every uploaded image's address, and every image of the lab's
/// bucket an item names, in a payload to its name in this assignment: a
/// worker never receives a bucket's address or key (other addresses, such
/// as external hosts', stay).
pub fn rename_images(assignment_id: Uuid, payload: &mut serde_json::Value) {
    match payload {
        serde_json::Value::String(s) => {
            if let Some(file) = s.strip_prefix(UPLOADED) {
                *s = image_address(assignment_id, file);
            } else if s.starts_with(IN_BUCKET) {
                *s = image_address(assignment_id, s);
            }
        }
        serde_json::Value::Array(items) => items.iter_mut().for_each(|v| rename_images(assignment_id, v)),
        serde_json::Value::Object(fields) => fields.values_mut().for_each(|v| rename_images(assignment_id, v)),
        _ => {}
    }
}

/// The stored file behind `name` in this assignment, among the uploaded
/// images its items' payloads show (an upload's name, or the whole
/// `s3://bucket/key` reference of an image in the lab's bucket).
pub fn image_named<'a>(
    assignment_id: Uuid,
    name: &str,
    payloads: impl IntoIterator<Item = &'a serde_json::Value>,
) -> Option<String> {
    fn files<'v>(value: &'v serde_json::Value, out: &mut Vec<&'v str>) {
        match value {
            serde_json::Value::String(s) if s.starts_with(IN_BUCKET) => out.push(s),
            serde_json::Value::String(s) => out.extend(s.strip_prefix(UPLOADED)),
            serde_json::Value::Array(items) => items.iter().for_each(|v| files(v, out)),
            serde_json::Value::Object(fields) => fields.values().for_each(|v| files(v, out)),
            _ => {}
        }
    }
    let mut all = Vec::new();
    for payload in payloads {
        files(payload, &mut all);
    }
    all.into_iter().find(|file| image_name(assignment_id, file) == name).map(|file| {
        if file.starts_with(IN_BUCKET) {
            file.to_owned()
        } else {
            format!("{UPLOADED}{file}")
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use uuid::Uuid;

    #[test]
    fn an_uploaded_image_has_a_name_of_its_own_in_each_assignment() {
        let (a1, a2) = (Uuid::new_v4(), Uuid::new_v4());
        let file = "9f86d081884c7d659a2feaa0c55ad015a3bf4f1b2b0b822cd15d6c15b0f00a08.png";
        let mut payload = serde_json::json!({"tryon": format!("/images/{file}"), "other": "https://cdn.example/x.png",
                                             "nested": [{"person": format!("/images/{file}")}]});
        let original = payload.clone();
        rename_images(a1, &mut payload);
        let shown = payload["tryon"].as_str().expect("address").to_owned();
        assert!(shown.starts_with(&format!("/work/a/{a1}/img/")) && shown.ends_with(".png"), "{shown}");
        assert!(!shown.contains(&file[..16]), "the content hash is not shown");
        assert_eq!(payload["nested"][0]["person"], shown.as_str());
        assert_eq!(payload["other"], "https://cdn.example/x.png", "external addresses stay");
        assert_ne!(image_name(a1, file), image_name(a2, file));
        let name = shown.rsplit('/').next().expect("name");
        assert_eq!(image_named(a1, name, [&original]), Some(format!("/images/{file}")));
        assert_eq!(image_named(a2, name, [&original]), None, "another assignment's name finds nothing");
    }

    #[test]
    fn an_image_of_the_labs_bucket_is_named_per_assignment_and_its_key_never_shown() {
        let (a1, a2) = (Uuid::new_v4(), Uuid::new_v4());
        let reference = "s3://lab-images/qbench/sanity/broken-17.jpg";
        let original = serde_json::json!({"tryon": reference});
        let mut payload = original.clone();
        rename_images(a1, &mut payload);
        let shown = payload["tryon"].as_str().expect("address").to_owned();
        assert!(shown.starts_with(&format!("/work/a/{a1}/img/")) && shown.ends_with(".jpg"), "{shown}");
        assert!(!shown.contains("lab-images") && !shown.contains("sanity"), "{shown}");
        let name = shown.rsplit('/').next().expect("name");
        assert_eq!(image_named(a1, name, [&original]).as_deref(), Some(reference));
        assert_eq!(image_named(a2, name, [&original]), None);
    }

    #[test]
    fn one_item_has_a_different_handle_in_each_assignment() {
        let (a1, a2, item) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        assert_ne!(handle(a1, item), handle(a2, item));
        assert_eq!(handle(a1, item), handle(a1, item), "stable within an assignment");
        assert_ne!(handle(a1, item), item);
        assert_eq!(handle(a1, item).get_version_num(), 8);
    }
}
