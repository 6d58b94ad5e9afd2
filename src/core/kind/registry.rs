//! The task kinds of this build. Built once at start-up (by whoever starts
//! the service or a command) and handed to the core, so the core never
//! names a kind.

use crate::core::campaign::campaigns::Campaign;
use crate::core::kind::contract::{CampaignRules, Invalid, TaskKind};
use crate::error::Code;
use crate::error::{Error, Result};
use std::collections::HashMap;
use std::sync::{Arc, Mutex};
use uuid::Uuid;

/// The kinds a campaign may have, looked up by their stored name.
#[derive(Clone)]
pub struct Registry {
    kinds: Arc<[&'static dyn TaskKind]>,
    /// Each campaign's rules as last made, with the campaign version they
    /// were made from (a change to the row bumps it).
    rules: Arc<Mutex<RulesByCampaign>>,
}

/// Each campaign's rules with the version they were made from.
type RulesByCampaign = HashMap<Uuid, (i64, Arc<dyn CampaignRules>)>;

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
        Self { kinds: kinds.into(), rules: Arc::default() }
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

    /// The campaign's kind bound to its configuration, parsed once per
    /// campaign version; a configuration this build no longer reads is a
    /// 409 naming the campaign.
    pub fn rules(&self, campaign: &Campaign) -> Result<Arc<dyn CampaignRules>> {
        let cached = |cache: &RulesByCampaign| {
            cache.get(&campaign.id).filter(|(version, _)| *version == campaign.version).map(|(_, r)| r.clone())
        };
        if let Some(rules) = cached(&self.rules.lock().unwrap_or_else(|p| p.into_inner())) {
            return Ok(rules);
        }
        let rules = bind(self.of(campaign)?, &campaign.name, &campaign.config)?;
        let mut cache = self.rules.lock().unwrap_or_else(|p| p.into_inner());
        // A slower reader of an older version must not replace a newer one.
        match cache.get(&campaign.id) {
            Some((version, _)) if *version > campaign.version => {}
            _ => {
                cache.insert(campaign.id, (campaign.version, rules.clone()));
            }
        }
        Ok(rules)
    }

    /// The campaign's configuration as its kind's type `C` (parsed once per
    /// campaign version, see [`Self::rules`]).
    pub fn config<C: Clone + 'static>(&self, campaign: &Campaign) -> Result<C> {
        let rules = self.rules(campaign)?;
        crate::core::kind::typed::config_of::<C>(&*rules).cloned().ok_or_else(|| {
            Error::unexpected(format!("campaign `{}` is read with another kind's configuration type", campaign.id))
        })
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

/// `kind` bound to a stored configuration of the campaign called `name`
/// (a snapshot's, say): one that no longer parses is a 409 naming it.
pub fn bind(kind: &dyn TaskKind, name: &str, config: &serde_json::Value) -> Result<Arc<dyn CampaignRules>> {
    kind.rules(config).map_err(|e| unreadable_config(name, e))
}

/// The refusal of a stored configuration this build no longer reads: a 409
/// naming the campaign and what no longer reads.
pub fn unreadable_config(name: &str, e: Invalid) -> Error {
    Error::conflict(
        Code::StoredConfigInvalid,
        format!(
            "the configuration of campaign \u{201c}{name}\u{201d} no longer reads in this version ({}); save its settings again",
            e.0
        ),
    )
}
