//! The task kinds of this build. Built once at start-up (by whoever starts
//! the service or a command) and handed to the core, so the core never
//! names a kind.

use crate::core::campaign::campaigns::Campaign;
use crate::core::kind::contract::TaskKind;
use crate::error::Code;
use crate::error::{Error, Result};
use std::sync::Arc;

/// The kinds a campaign may have, looked up by their stored name.
#[derive(Clone)]
pub struct Registry {
    kinds: Arc<[&'static dyn TaskKind]>,
}

impl std::fmt::Debug for Registry {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.names()).finish()
    }
}

impl Registry {
    /// A registry of these kinds (names must be unique).
    pub fn new(kinds: Vec<&'static dyn TaskKind>) -> Self {
        debug_assert!(
            kinds.iter().enumerate().all(|(i, k)| kinds[..i].iter().all(|o| o.name() != k.name())),
            "two task kinds share a name"
        );
        Self { kinds: kinds.into() }
    }

    /// The kind with this name, if this build has it.
    pub fn find(&self, name: &str) -> Option<&'static dyn TaskKind> {
        self.kinds.iter().copied().find(|k| k.name() == name)
    }

    /// The kind with this name, or a 422 listing the known kinds.
    pub fn get(&self, name: &str) -> Result<&'static dyn TaskKind> {
        self.find(name).ok_or_else(|| {
            Error::invalid(
                Code::UnknownKind,
                format!("unknown kind `{name}`; known kinds: {}", self.names().join(", ")),
            )
        })
    }

    /// The kind of a stored campaign.
    pub fn of(&self, campaign: &Campaign) -> Result<&'static dyn TaskKind> {
        self.find(&campaign.kind)
            .ok_or_else(|| Error::unexpected(format!("campaign of unknown kind `{}`", campaign.kind)))
    }

    /// Names of all kinds, in registration order.
    pub fn names(&self) -> Vec<&'static str> {
        self.kinds.iter().map(|k| k.name()).collect()
    }

    /// Every kind, in registration order.
    pub fn all(&self) -> impl Iterator<Item = &'static dyn TaskKind> + '_ {
        self.kinds.iter().copied()
    }
}
