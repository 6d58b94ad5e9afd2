//! The kind folders of this build, in one list: the core's registry, the
//! HTTP layer's pages and routes and the command line's subcommands all
//! come from [`MODULES`].

use super::module::{Kind, KindModule};
use super::{a100, fashionpedia, vsd, vton};
use std::io::Write;

use crate::core::Registry;
use crate::http::kind_routes::KindRoutes;
use crate::http::task_pages::KindPages;

/// Every kind folder of this build, in the order their kinds are listed.
pub const MODULES: &[KindModule] = &[a100::MODULE, vton::MODULE, vsd::MODULE, fashionpedia::MODULE];

/// Every kind this build knows, for the core.
pub fn registry() -> Registry {
    Registry::new(all().map(|k| k.core).collect())
}

/// How every kind is shown, for the HTTP layer.
pub fn pages() -> KindPages {
    KindPages::new(all().map(|k| (k.core.name(), k.pages)).collect())
}

fn all() -> impl Iterator<Item = &'static Kind> {
    MODULES.iter().flat_map(|m| m.kinds.iter())
}

/// Every kind's own HTTP routes, for the application.
pub fn routes() -> Vec<KindRoutes> {
    MODULES.iter().map(|m| (m.routes)()).collect()
}

/// A kind's command as parsed from the command line: `atelier vton curate
/// ...` is the VTON module's command with the matches of `vton`.
pub struct KindCommand {
    module: &'static KindModule,
    matches: clap::ArgMatches,
}

impl std::fmt::Debug for KindCommand {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("KindCommand").field("command", &self.matches.subcommand_name()).finish()
    }
}

impl KindCommand {
    /// Runs the command; output goes to `out`.
    pub async fn run(self, out: &mut dyn Write) -> anyhow::Result<()> {
        (self.module.cli.run)(&self.matches, out).await
    }

    fn module(name: &str) -> Option<&'static KindModule> {
        MODULES.iter().find(|m| (m.cli.command)().get_name() == name)
    }
}

impl clap::FromArgMatches for KindCommand {
    fn from_arg_matches(matches: &clap::ArgMatches) -> Result<Self, clap::Error> {
        let Some((name, sub)) = matches.subcommand() else {
            return Err(clap::Error::raw(clap::error::ErrorKind::MissingSubcommand, "a command is required"));
        };
        let module = Self::module(name).ok_or_else(|| {
            clap::Error::raw(clap::error::ErrorKind::InvalidSubcommand, format!("no command `{name}`"))
        })?;
        Ok(Self { module, matches: sub.clone() })
    }

    fn update_from_arg_matches(&mut self, matches: &clap::ArgMatches) -> Result<(), clap::Error> {
        *self = Self::from_arg_matches(matches)?;
        Ok(())
    }
}

impl clap::Subcommand for KindCommand {
    fn augment_subcommands(cmd: clap::Command) -> clap::Command {
        MODULES.iter().fold(cmd, |cmd, m| cmd.subcommand((m.cli.command)()))
    }

    fn augment_subcommands_for_update(cmd: clap::Command) -> clap::Command {
        Self::augment_subcommands(cmd)
    }

    fn has_subcommand(name: &str) -> bool {
        Self::module(name).is_some()
    }
}
