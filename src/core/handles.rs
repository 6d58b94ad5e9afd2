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

#[cfg(test)]
mod tests {
    use super::handle;
    use uuid::Uuid;

    #[test]
    fn one_item_has_a_different_handle_in_each_assignment() {
        let (a1, a2, item) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        assert_ne!(handle(a1, item), handle(a2, item));
        assert_eq!(handle(a1, item), handle(a1, item), "stable within an assignment");
        assert_ne!(handle(a1, item), item);
        assert_eq!(handle(a1, item).get_version_num(), 8);
    }
}
