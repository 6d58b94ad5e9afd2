//! A map whose entries are used for a short time only (the session and
//! account caches'), and which lets them go once they are too old to be
//! used: kept until the map filled up, a crowd campaign's ten thousand
//! workers' sessions and accounts stayed in memory for good.

use std::borrow::Borrow;
use std::collections::HashMap;
use std::hash::Hash;
use std::time::{Duration, Instant};

/// Entries younger than `fresh` are served; older ones are swept out at
/// most once per `fresh`, as the map is next written or [`swept`](Self::sweep).
pub struct Expiring<K, V> {
    fresh: Duration,
    capacity: usize,
    entries: HashMap<K, (Instant, V)>,
    swept: Instant,
}

impl<K: Eq + Hash, V> Expiring<K, V> {
    /// An empty map serving entries for `fresh`, holding at most `capacity`
    /// (when full it is emptied: a bound, not an LRU).
    pub fn new(fresh: Duration, capacity: usize) -> Self {
        Self { fresh, capacity, entries: HashMap::new(), swept: Instant::now() }
    }

    /// The entry for `key`, if it is still fresh.
    pub fn get<Q: Eq + Hash + ?Sized>(&self, key: &Q) -> Option<&V>
    where
        K: Borrow<Q>,
    {
        self.entries.get(key).filter(|(at, _)| at.elapsed() < self.fresh).map(|(_, value)| value)
    }

    /// Keeps `value` for `key` from now on.
    pub fn insert(&mut self, key: K, value: V) {
        self.sweep();
        if self.entries.len() >= self.capacity {
            self.entries = HashMap::new();
        }
        self.entries.insert(key, (Instant::now(), value));
    }

    /// Forgets `key`.
    pub fn remove<Q: Eq + Hash + ?Sized>(&mut self, key: &Q)
    where
        K: Borrow<Q>,
    {
        self.entries.remove(key);
    }

    /// Forgets everything.
    pub fn clear(&mut self) {
        self.entries = HashMap::new();
    }

    /// Lets go of the entries too old to be served, once per freshness
    /// period (each sweep reads every entry), and of the room they took.
    pub fn sweep(&mut self) {
        if self.swept.elapsed() < self.fresh {
            return;
        }
        self.swept = Instant::now();
        let fresh = self.fresh;
        self.entries.retain(|_, (at, _)| at.elapsed() < fresh);
        self.entries.shrink_to_fit();
    }

    /// How many entries are held, fresh or not.
    pub fn len(&self) -> usize {
        self.entries.len()
    }

    /// Whether nothing is held.
    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn old_entries_are_not_served_and_are_let_go_when_the_map_is_next_written() {
        let mut map = Expiring::new(Duration::from_millis(30), 10);
        map.insert(1, "one");
        assert_eq!(map.get(&1), Some(&"one"));
        std::thread::sleep(Duration::from_millis(40));
        assert_eq!(map.get(&1), None, "too old to serve");
        assert_eq!(map.len(), 1, "held until swept");
        map.insert(2, "two");
        assert_eq!((map.len(), map.get(&2)), (1, Some(&"two")), "the old one swept out");
    }

    #[test]
    fn a_full_map_is_emptied_and_removed_entries_are_gone() {
        let mut map = Expiring::new(Duration::from_secs(60), 2);
        map.insert(1, 1);
        map.insert(2, 2);
        map.insert(3, 3);
        assert_eq!((map.get(&1), map.get(&2), map.get(&3)), (None, None, Some(&3)));
        map.remove(&3);
        assert!(map.is_empty());
    }

    #[test]
    fn a_sweep_waits_for_its_period() {
        let mut map = Expiring::new(Duration::from_millis(30), 10);
        map.insert(1, 1);
        std::thread::sleep(Duration::from_millis(40));
        map.sweep();
        assert!(map.is_empty(), "swept: the period has passed since the map was made");
        map.insert(2, 2);
        std::thread::sleep(Duration::from_millis(40));
        map.insert(3, 3);
        assert_eq!(map.len(), 1, "the insert swept");
        map.sweep();
        assert_eq!(map.len(), 1, "not again within the period");
    }
}
