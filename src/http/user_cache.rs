//! A short-lived memory of who a session's user is, so a busy annotator's
//! every vote does not look their account up again. Entries live a few
//! seconds (accounts change rarely: never their role), so several instances
//! never disagree for longer than that.

use super::expiring::Expiring;
use crate::auth::users::User;
use std::sync::{Arc, Mutex};
use std::time::Duration;
use uuid::Uuid;

/// How long a looked-up account is reused.
const TTL: Duration = Duration::from_secs(5);
/// Entries kept at most (the map is cleared when full: a bound, not an LRU).
const CAPACITY: usize = 50_000;

/// The cache, shared by the handlers.
#[derive(Clone)]
pub struct UserCache {
    inner: Arc<Mutex<Expiring<Uuid, User>>>,
}

impl Default for UserCache {
    fn default() -> Self {
        Self { inner: Arc::new(Mutex::new(Expiring::new(TTL, CAPACITY))) }
    }
}

impl UserCache {
    /// The account, from memory when looked up in the last few seconds.
    pub async fn get<'e>(&self, db: impl sqlx::PgExecutor<'e>, id: Uuid) -> crate::error::Result<Option<User>> {
        if let Some(user) = self.inner.lock().ok().and_then(|map| map.get(&id).cloned()) {
            return Ok(Some(user));
        }
        let user = crate::auth::users::get(db, id).await?;
        if let (Some(u), Ok(mut map)) = (&user, self.inner.lock()) {
            map.insert(id, u.clone());
        }
        Ok(user)
    }

    /// Forgets an account at once (disabled, or its password reset), so
    /// this instance does not serve it from memory for the next seconds.
    pub fn forget(&self, id: Uuid) {
        if let Ok(mut map) = self.inner.lock() {
            map.remove(&id);
        }
    }
}
