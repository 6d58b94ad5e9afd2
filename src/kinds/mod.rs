//! Task kinds that plug into the core. Adding a kind means implementing
//! [`TaskKind`] in its own module and listing it in [`ALL`].

pub mod a100;
pub mod vton;

use crate::core::kind::TaskKind;

/// Every kind this build knows.
pub static ALL: &[&dyn TaskKind] = &[&a100::Lat, &a100::Aat, &vton::Vton];

/// The kind with this name.
pub fn find(name: &str) -> Option<&'static dyn TaskKind> {
    ALL.iter().copied().find(|k| k.name() == name)
}

/// Names of all kinds, for error messages.
pub fn names() -> Vec<&'static str> {
    ALL.iter().map(|k| k.name()).collect()
}
