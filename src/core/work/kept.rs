//! What a service remembers of each assignment that never changes once the
//! assignment exists (its owner and kind, its items by handle, its
//! presentation), so that every instance may keep its own copy without
//! invalidation; a user keeping something that does change checks it
//! itself (the task page's campaigns, against their version). Bounded: past
//! the limit, everything is forgotten and read again as it is next needed.

use std::collections::HashMap;
use std::sync::Mutex;
use uuid::Uuid;

/// Values kept by id (an assignment's; a campaign's, checked against its
/// version by its user), at most `limit` of them.
pub struct Kept<V> {
    limit: usize,
    values: Mutex<HashMap<Uuid, V>>,
}

impl<V: Clone> Kept<V> {
    /// An empty store of at most `limit` assignments' values.
    pub fn new(limit: usize) -> Self {
        Self { limit, values: Mutex::new(HashMap::new()) }
    }

    /// The value kept for `assignment`, if any.
    pub fn get(&self, assignment: Uuid) -> Option<V> {
        self.values.lock().ok()?.get(&assignment).cloned()
    }

    /// Keeps `value` for `assignment`, forgetting every other first when
    /// the store is full.
    pub fn keep(&self, assignment: Uuid, value: V) {
        if let Ok(mut values) = self.values.lock() {
            if values.len() >= self.limit {
                values.clear();
            }
            values.insert(assignment, value);
        }
    }

    /// Forgets what is kept for `id` (a submitted assignment: nothing more
    /// is answered in it, and its values would only hold memory).
    pub fn forget(&self, id: Uuid) {
        if let Ok(mut values) = self.values.lock() {
            values.remove(&id);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_full_store_forgets_everything_before_keeping_the_next() {
        let kept = Kept::new(2);
        let (a, b, c) = (Uuid::new_v4(), Uuid::new_v4(), Uuid::new_v4());
        kept.keep(a, 1);
        kept.keep(b, 2);
        assert_eq!((kept.get(a), kept.get(b)), (Some(1), Some(2)));
        kept.keep(c, 3);
        assert_eq!((kept.get(a), kept.get(b), kept.get(c)), (None, None, Some(3)));
        kept.forget(c);
        assert_eq!(kept.get(c), None, "forgotten");
    }
}
