//! A short-lived memory of who a session's user is, so a busy annotator's
//! every vote does not look their account up again. Entries live a few
//! seconds (accounts change rarely: never their role), so several instances
//! never disagree for longer than that.

use crate::auth::users::User;
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};
use uuid::Uuid;

/// How long a looked-up account is reused.
const TTL: Duration = Duration::from_secs(5);
/// Entries kept at most (the map is cleared when full: a bound, not an LRU).
const CAPACITY: usize = 50_000;

/// The cache, shared by the handlers.
#[derive(Clone, Default)]
pub struct UserCache {
    inner: Arc<Mutex<HashMap<Uuid, (Instant, User)>>>,
}

impl UserCache {
    /// The account, from memory when looked up in the last few seconds.
    pub async fn get(&self, pool: &sqlx::PgPool, id: Uuid) -> crate::core::Result<Option<User>> {
        if let Ok(map) = self.inner.lock() {
            if let Some((at, user)) = map.get(&id) {
                if at.elapsed() < TTL {
                    return Ok(Some(user.clone()));
                }
            }
        }
        let user = crate::auth::users::get(pool, id).await?;
        if let (Some(u), Ok(mut map)) = (&user, self.inner.lock()) {
            if map.len() >= CAPACITY {
                map.clear();
            }
            map.insert(id, (Instant::now(), u.clone()));
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
