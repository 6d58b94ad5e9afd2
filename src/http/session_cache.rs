//! Sessions remembered between requests, so a busy annotator's every vote
//! does not read their session again. Every instance on the database hears
//! every change: the store announces each save and delete with `NOTIFY`, and
//! each instance's listener forgets the session at once. The memory is used
//! only while the listener is connected (a change announced while it was not
//! could be missed), and it is emptied whenever the listener connects again.

use super::expiring::Expiring;
use sqlx::postgres::PgListener;
use sqlx::PgPool;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex, Weak};
use std::time::Duration;
use tower_sessions::session::Record;

/// The channel sessions' changes are announced on (payload: the session id).
pub const CHANNEL: &str = "atelier_sessions";
/// Sessions kept at most (the memory is emptied when full: a bound, not an LRU).
const CAPACITY: usize = 100_000;
/// The longest a remembered session is used without reading it again, even
/// with no change heard (a backstop, not the mechanism).
const LONGEST: Duration = Duration::from_secs(30);
/// How often a listener with nothing to hear checks that its cache is still
/// wanted, and how long it waits before connecting again after a failure.
const TICK: Duration = Duration::from_secs(1);

/// The remembered sessions, shared by a store's clones.
pub struct SessionCache {
    entries: Mutex<Expiring<String, Record>>,
    /// Counts forgettings: a session read before a change and remembered
    /// after it would be stale, so a read is remembered only if no session
    /// was forgotten while it ran.
    changes: AtomicU64,
    /// Whether the listener is connected and listening now.
    listening: AtomicBool,
}

impl Default for SessionCache {
    fn default() -> Self {
        Self {
            entries: Mutex::new(Expiring::new(LONGEST, CAPACITY)),
            changes: AtomicU64::default(),
            listening: AtomicBool::default(),
        }
    }
}

/// Taken before reading a session from the database; see [`SessionCache::remember`].
pub struct Ticket(u64);

impl SessionCache {
    /// The session, if remembered, still live, and no change can have been missed.
    pub fn get(&self, id: &str) -> Option<Record> {
        if !self.listening.load(Ordering::Acquire) {
            return None;
        }
        let entries = self.entries.lock().ok()?;
        let record = entries.get(id)?;
        let live = record.expiry_date > tower_sessions::cookie::time::OffsetDateTime::now_utc();
        live.then(|| record.clone())
    }

    /// A ticket for a read about to start.
    pub fn ticket(&self) -> Ticket {
        Ticket(self.changes.load(Ordering::Acquire))
    }

    /// Keeps a session read from the database, unless anything was
    /// forgotten since its ticket was taken.
    pub fn remember(&self, ticket: Ticket, record: &Record) {
        if !self.listening.load(Ordering::Acquire) {
            return;
        }
        let Ok(mut entries) = self.entries.lock() else { return };
        // Checked under the lock that forgetting takes too.
        if self.changes.load(Ordering::Acquire) != ticket.0 {
            return;
        }
        entries.insert(record.id.to_string(), record.clone());
    }

    /// Forgets one session (it changed or ended).
    pub fn forget(&self, id: &str) {
        if let Ok(mut entries) = self.entries.lock() {
            self.changes.fetch_add(1, Ordering::AcqRel);
            entries.remove(id);
        }
    }

    /// Forgets every session (changes may have been missed).
    fn forget_all(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            self.changes.fetch_add(1, Ordering::AcqRel);
            entries.clear();
        }
    }

    /// Lets go of sessions too old to be used (when a sweep is due): an
    /// idle service does not hold a finished crowd's sessions.
    fn sweep(&self) {
        if let Ok(mut entries) = self.entries.lock() {
            entries.sweep();
        }
    }

    /// Starts the listener that keeps this cache true to the database; it
    /// ends soon after the cache is dropped or the pool closed.
    pub fn listen(self: &Arc<Self>, pool: PgPool) {
        tokio::spawn(listen(Arc::downgrade(self), pool));
    }
}

async fn listen(cache: Weak<SessionCache>, pool: PgPool) {
    while !pool.is_closed() {
        if let Ok(mut listener) = PgListener::connect_with(&pool).await {
            if listener.listen(CHANNEL).await.is_ok() {
                let Some(c) = cache.upgrade() else { return };
                // Nothing announced before now can still be heard.
                c.forget_all();
                c.listening.store(true, Ordering::Release);
                drop(c);
                let connected = hear(&cache, &mut listener).await;
                if let Some(c) = cache.upgrade() {
                    c.listening.store(false, Ordering::Release);
                    c.forget_all();
                }
                if !connected {
                    return;
                }
            }
        }
        tokio::time::sleep(TICK).await;
    }
}

/// Forgets each announced session until the connection is lost (`true`) or
/// the cache is no longer wanted (`false`).
async fn hear(cache: &Weak<SessionCache>, listener: &mut PgListener) -> bool {
    loop {
        match tokio::time::timeout(TICK, listener.try_recv()).await {
            Ok(Ok(Some(notification))) => match cache.upgrade() {
                Some(c) => c.forget(notification.payload()),
                None => return false,
            },
            // The connection was lost: announcements may have been missed.
            Ok(Ok(None)) | Ok(Err(_)) => return true,
            Err(_) => match cache.upgrade() {
                Some(c) => c.sweep(),
                None => return false,
            },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tower_sessions::session::Id;

    fn record(id: i128, minutes: i64) -> Record {
        Record {
            id: Id(id),
            data: Default::default(),
            expiry_date: tower_sessions::cookie::time::OffsetDateTime::now_utc()
                + tower_sessions::cookie::time::Duration::minutes(minutes),
        }
    }

    fn listening() -> SessionCache {
        let cache = SessionCache::default();
        cache.listening.store(true, Ordering::Release);
        cache
    }

    #[test]
    fn a_read_is_remembered_unless_something_changed_while_it_ran() {
        let cache = listening();
        let (a, b) = (record(1, 10), record(2, 10));
        let ticket = cache.ticket();
        cache.remember(ticket, &a);
        assert!(cache.get(&a.id.to_string()).is_some());
        let ticket = cache.ticket();
        cache.forget(&a.id.to_string());
        cache.remember(ticket, &b);
        assert!(cache.get(&b.id.to_string()).is_none(), "a change during the read: not remembered");
        assert!(cache.get(&a.id.to_string()).is_none(), "forgotten");
    }

    #[test]
    fn nothing_is_used_while_not_listening_and_expired_sessions_never() {
        let cache = SessionCache::default();
        let a = record(1, 10);
        cache.remember(cache.ticket(), &a);
        assert!(cache.get(&a.id.to_string()).is_none());
        let cache = listening();
        let old = record(3, -1);
        cache.remember(cache.ticket(), &old);
        assert!(cache.get(&old.id.to_string()).is_none(), "expired");
        cache.remember(cache.ticket(), &a);
        cache.listening.store(false, Ordering::Release);
        assert!(cache.get(&a.id.to_string()).is_none(), "the listener is gone");
    }
}
