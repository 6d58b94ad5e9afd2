//! Random codes for secrets handed to people (tokens, invitations,
//! completion codes, CSRF tokens). A leaf module every layer may use.

use rand::distr::{Alphanumeric, SampleString};

/// Characters of completion codes: upper case, none that looks like another
/// (no 0/O, 1/I/L), so a worker copying one by eye cannot get it wrong.
const UNAMBIGUOUS: &[u8] = b"ABCDEFGHJKMNPQRSTUVWXYZ23456789";

/// A completion code: 8 unambiguous characters.
pub fn completion_code() -> String {
    use rand::Rng;
    let mut rng = rand::rng();
    (0..8).map(|_| char::from(UNAMBIGUOUS[rng.random_range(0..UNAMBIGUOUS.len())])).collect()
}

/// A random alphanumeric string of `len` characters from the OS RNG.
pub fn random_code(len: usize) -> String {
    Alphanumeric.sample_string(&mut rand::rng(), len)
}

#[cfg(test)]
mod tests {
    #[test]
    fn completion_codes_have_no_look_alike_characters() {
        for _ in 0..200 {
            let code = super::completion_code();
            assert_eq!(code.len(), 8);
            assert!(code.chars().all(|c| c.is_ascii_uppercase() || c.is_ascii_digit()), "{code}");
            assert!(!code.contains(['0', 'O', '1', 'I', 'L']), "{code}");
        }
    }
}
