//! Password hashing with argon2 (the crate's recommended defaults), a few at
//! a time and off the async workers. Each computation takes about 19 MiB and
//! tens of milliseconds of a core by design; run all at once, a burst of
//! logins would take a thread and that memory each. At most one runs per
//! core; the others wait their turn, briefly, or hear that the service is busy.

use crate::error::Code;
use crate::error::{Error, Result};
use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;
use std::sync::{Arc, LazyLock, OnceLock};
use std::time::Duration;
use tokio::sync::{OwnedSemaphorePermit, Semaphore};

/// Minimum password length accepted for new accounts.
pub const MIN_LENGTH: usize = 8;
/// Longest wait for a turn at the hasher before the caller hears "busy".
const TURN_WAIT: Duration = Duration::from_secs(10);

/// The hasher's turns: one per core of this machine.
static TURNS: LazyLock<Arc<Semaphore>> =
    LazyLock::new(|| Arc::new(Semaphore::new(std::thread::available_parallelism().map_or(2, |n| n.get()))));

/// A turn at the password hasher, needed to check a password; taken before a
/// login's other checks, so attempts that queued behind a flood meet the
/// login limiter as it stands when their turn comes.
pub struct Turn {
    _permit: OwnedSemaphorePermit,
}

/// Waits for a turn at the hasher, at most 10 s; [`Error::Busy`] when none
/// came.
pub async fn turn() -> Result<Turn> {
    match tokio::time::timeout(TURN_WAIT, TURNS.clone().acquire_owned()).await {
        Ok(Ok(permit)) => Ok(Turn { _permit: permit }),
        _ => Err(Error::Busy),
    }
}

/// Whether `password` follows the rules of every password (its length).
pub fn check_rules(password: &str) -> Result<()> {
    if password.chars().count() < MIN_LENGTH {
        return Err(Error::invalid(Code::WeakPassword, format!("passwords need at least {MIN_LENGTH} characters")));
    }
    Ok(())
}

/// Hashes a password into a PHC string, in a turn of its own.
pub async fn hash(password: &str) -> Result<String> {
    check_rules(password)?;
    let turn = turn().await?;
    let password = password.to_owned();
    run(turn, move || hash_now(&password)).await?
}

/// Checks a password against a stored hash in the caller's turn; a malformed
/// hash never matches, nor does `None` (no such account), which is checked
/// against a fixed hash all the same, so it takes as long as a wrong password.
pub async fn verify(turn: Turn, password: &str, stored: Option<String>) -> Result<bool> {
    let password = password.to_owned();
    run(turn, move || {
        let matches = verify_now(&password, stored.as_deref().unwrap_or_else(|| dummy_hash()));
        matches && stored.is_some()
    })
    .await
}

/// Runs `job` on a blocking thread while `turn` is held.
async fn run<T: Send + 'static>(turn: Turn, job: impl FnOnce() -> T + Send + 'static) -> Result<T> {
    tokio::task::spawn_blocking(move || {
        let _held = turn;
        job()
    })
    .await
    .map_err(|e| Error::internal("hashing a password", e))
}

fn hash_now(password: &str) -> Result<String> {
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::internal("hashing a password", e.to_string()))
}

fn verify_now(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// A fixed hash to verify against when the user does not exist.
fn dummy_hash() -> &'static str {
    static DUMMY: OnceLock<String> = OnceLock::new();
    DUMMY.get_or_init(|| hash_now("not-a-real-password").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn hashes_verify_and_reject() {
        let h = hash("correct horse").await.expect("hashes");
        assert!(h.starts_with("$argon2"));
        let check = async |password: &str, stored: Option<&str>| {
            verify(turn().await.expect("a turn"), password, stored.map(str::to_owned)).await.expect("runs")
        };
        assert!(check("correct horse", Some(&h)).await);
        assert!(!check("wrong horse", Some(&h)).await);
        assert!(!check("x", Some("not a hash")).await);
        assert!(!check("not-a-real-password", None).await, "no account never matches, not even the dummy's password");
        assert!(hash("short").await.is_err());
    }

    #[tokio::test]
    async fn at_most_one_hash_per_core_at_once() {
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let held: Vec<Turn> =
            futures_util::future::join_all((0..cores).map(|_| turn())).await.into_iter().flatten().collect();
        assert_eq!(held.len(), cores);
        assert!(
            tokio::time::timeout(Duration::from_millis(200), turn()).await.is_err(),
            "a turn beyond one per core waits"
        );
        drop(held);
        assert!(turn().await.is_ok(), "a turn given back is taken again");
    }
}
