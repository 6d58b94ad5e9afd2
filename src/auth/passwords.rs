//! Password hashing with argon2 (the crate's recommended defaults).

use crate::core::{Error, Result};
use argon2::password_hash::{rand_core::OsRng, PasswordHash, PasswordHasher, PasswordVerifier, SaltString};
use argon2::Argon2;

/// Minimum password length accepted for new accounts.
pub const MIN_LENGTH: usize = 8;

/// Hashes a password into a PHC string.
pub fn hash(password: &str) -> Result<String> {
    if password.chars().count() < MIN_LENGTH {
        return Err(Error::invalid("weak_password", format!("passwords need at least {MIN_LENGTH} characters")));
    }
    let salt = SaltString::generate(&mut OsRng);
    Argon2::default()
        .hash_password(password.as_bytes(), &salt)
        .map(|h| h.to_string())
        .map_err(|e| Error::Internal(format!("hashing password: {e}")))
}

/// Checks a password against a stored hash; a malformed hash never matches.
pub fn verify(password: &str, stored: &str) -> bool {
    PasswordHash::new(stored).is_ok_and(|h| Argon2::default().verify_password(password.as_bytes(), &h).is_ok())
}

/// A fixed hash to verify against when the user does not exist, so a login
/// for an unknown name takes as long as one with a wrong password.
pub fn dummy_hash() -> &'static str {
    static DUMMY: std::sync::OnceLock<String> = std::sync::OnceLock::new();
    DUMMY.get_or_init(|| hash("not-a-real-password").unwrap_or_default())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hashes_verify_and_reject() {
        let h = hash("correct horse").expect("hashes");
        assert!(h.starts_with("$argon2"));
        assert!(verify("correct horse", &h));
        assert!(!verify("wrong horse", &h));
        assert!(!verify("x", "not a hash"));
        assert!(hash("short").is_err());
    }
}
