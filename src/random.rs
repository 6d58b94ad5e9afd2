//! Random codes for secrets handed to people (tokens, invitations,
//! completion codes, CSRF tokens). A leaf module every layer may use.

use rand::distr::{Alphanumeric, SampleString};

/// A random alphanumeric string of `len` characters from the OS RNG.
pub fn random_code(len: usize) -> String {
    Alphanumeric.sample_string(&mut rand::rng(), len)
}
