//! Login rate limiting per client address and per account name, so neither
//! guessing one password nor spraying many accounts from one address gets
//! far: a burst of 10 attempts, then one more per minute.

use governor::{DefaultKeyedRateLimiter, Quota, RateLimiter};
use std::num::NonZeroU32;
use std::sync::Arc;

/// Attempts allowed at once per key.
const BURST: u32 = 10;
/// After the burst, one more attempt per this period.
const REFILL: std::time::Duration = std::time::Duration::from_secs(60);

/// Shared limiter for login attempts.
#[derive(Clone)]
pub struct LoginLimiter {
    limiter: Arc<DefaultKeyedRateLimiter<String>>,
}

impl Default for LoginLimiter {
    fn default() -> Self {
        let burst = NonZeroU32::new(BURST).unwrap_or(NonZeroU32::MIN);
        let quota = Quota::with_period(REFILL).map_or_else(|| Quota::per_minute(burst), |q| q.allow_burst(burst));
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
