//! Login rate limiting: a few attempts per minute per client address and
//! per account name, so neither guessing one password nor spraying many
//! accounts from one address gets far.

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;

/// Attempts allowed per key per minute.
const PER_MINUTE: u32 = 10;

/// Shared limiter for login attempts.
#[derive(Clone)]
pub struct LoginLimiter {
    limiter: Arc<DefaultKeyedRateLimiter<String>>,
}

impl Default for LoginLimiter {
    fn default() -> Self {
        let quota = Quota::per_minute(NonZeroU32::new(PER_MINUTE).unwrap_or(NonZeroU32::MIN));
        Self { limiter: Arc::new(RateLimiter::keyed(quota)) }
    }
}

impl LoginLimiter {
    /// Records an attempt; false when the address or the name is over its limit.
    pub fn allow(&self, address: &str, name: &str) -> bool {
        let by_address = self.limiter.check_key(&format!("ip:{address}")).is_ok();
        let by_name = self.limiter.check_key(&format!("name:{}", name.trim().to_lowercase())).is_ok();
        by_address && by_name
    }
}
