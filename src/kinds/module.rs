//! What one kind folder hands the application: its core kinds, its HTTP
//! surface and its commands, as one value, so that the lists of kinds the
//! core, the server and the command line see come from one line each.

use crate::core::kind::contract::TaskKind;
use crate::http::kind_routes::KindRoutes;
use crate::http::task_pages::TaskPages;
use futures_util::future::LocalBoxFuture;
use std::io::Write;

/// One kind folder as the application plugs it in.
pub struct KindModule {
    /// The kinds it defines (A100 defines two: LAT and AAT).
    pub kinds: &'static [Kind],
    /// Its routes: API, imports and admin pages.
    pub routes: fn() -> KindRoutes,
    /// Its commands, `atelier <name> ...`.
    pub cli: KindCli,
}

/// One kind: what it is (the core's trait) and how it is shown (the
/// HTTP layer's), usually both implemented by one unit struct.
pub struct Kind {
    /// The kind as the core sees it.
    pub core: &'static dyn TaskKind,
    /// Its task page, answers and admin page.
    pub pages: &'static dyn TaskPages,
}

impl Kind {
    /// A kind whose struct implements both traits.
    pub const fn of<K: TaskKind + TaskPages>(kind: &'static K) -> Self {
        Self { core: kind, pages: kind }
    }
}

/// A kind's commands: a clap command named after the kind whose
/// subcommands are the kind's own, and how to run what was parsed.
pub struct KindCli {
    /// The command (`Command::new("vton")` with the kind's subcommands).
    pub command: fn() -> clap::Command,
    /// Runs the subcommand in these matches (those of the kind's command).
    pub run: for<'a> fn(&clap::ArgMatches, &'a mut dyn Write) -> LocalBoxFuture<'a, anyhow::Result<()>>,
}

impl KindModule {
    /// A registry of this folder's kinds alone, for its own commands (an
    /// import checks the campaign is one of them first).
    pub fn registry(&self) -> crate::core::Registry {
        crate::core::Registry::new(self.kinds.iter().map(|k| k.core).collect())
    }
}

impl KindCli {
    /// The command `name` with the subcommands of `C` and `about` as its help.
    pub fn command<C: clap::Subcommand>(name: &'static str, about: &'static str) -> clap::Command {
        // After the subcommands: they bring the enum's own doc comment as help.
        C::augment_subcommands(clap::Command::new(name).subcommand_required(true)).about(about)
    }

    /// Parses `C` from a kind command's matches, for [`KindCli::run`].
    pub fn parse<C: clap::FromArgMatches>(matches: &clap::ArgMatches) -> anyhow::Result<C> {
        Ok(C::from_arg_matches(matches)?)
    }
}

#[cfg(test)]
mod tests {
    use super::super::registry::MODULES;
    use clap::Subcommand;

    #[test]
    fn every_module_adds_its_kinds_and_one_command_of_its_own() {
        let names: Vec<String> = MODULES.iter().map(|m| (m.cli.command)().get_name().to_owned()).collect();
        let distinct: std::collections::BTreeSet<_> = names.iter().collect();
        assert_eq!(distinct.len(), MODULES.len(), "command names clash: {names:?}");
        assert_eq!(names, ["a100", "vton", "vsd", "fashionpedia"]);
        assert!(MODULES.iter().all(|m| !m.kinds.is_empty()));
        assert_eq!(super::super::registry::registry().names(), ["a100-lat", "a100-aat", "vton", "vsd", "fashionpedia"]);
        let cmd = super::super::registry::KindCommand::augment_subcommands(clap::Command::new("atelier"));
        assert!(cmd.find_subcommand("vton").and_then(|v| v.find_subcommand("curate")).is_some());
        assert!(
            super::super::registry::KindCommand::has_subcommand("vsd")
                && !super::super::registry::KindCommand::has_subcommand("serve")
        );
    }

    #[test]
    fn every_kinds_default_configuration_is_what_an_empty_one_parses_to() {
        use crate::core::TypedKind;
        fn check<K: TypedKind>(kind: &K) {
            let parsed: K::Config = crate::core::campaign::config_text::parse(&serde_json::json!({}))
                .expect("an empty configuration parses");
            kind.policy(&parsed).expect("an empty configuration holds together");
            assert_eq!(
                serde_json::to_value(parsed).expect("json"),
                serde_json::to_value(K::Config::default()).expect("json"),
                "{}",
                kind.about().name
            );
        }
        check(&super::super::a100::Lat);
        check(&super::super::a100::Aat);
        check(&super::super::vton::Vton);
        check(&super::super::vsd::Vsd);
        check(&super::super::fashionpedia::Fashionpedia);
    }

    #[test]
    fn every_kind_refuses_an_answer_that_does_not_read_saying_its_shape() {
        use crate::core::kind::contract::TaskKind;
        let kinds: [&dyn TaskKind; 5] = [
            &super::super::a100::Lat,
            &super::super::a100::Aat,
            &super::super::vton::Vton,
            &super::super::vsd::Vsd,
            &super::super::fashionpedia::Fashionpedia,
        ];
        for kind in kinds {
            let refused = kind.validate_answer(None, &serde_json::json!([1, 2])).expect_err("not an answer").0;
            let shape = kind.about().answer_format;
            assert!(refused.starts_with(&format!("answer must be {shape}: ")), "{}: {refused}", kind.name());
        }
        let vton: &dyn TaskKind = &super::super::vton::Vton;
        let out_of_range = vton.validate_answer(None, &serde_json::json!({"rating": 4})).expect_err("4").0;
        assert!(out_of_range.contains("4 is not a rating"), "{out_of_range}");
    }

    #[test]
    fn a_stored_configuration_that_no_longer_parses_is_an_error_naming_the_campaign() {
        use crate::core::kind::contract::TaskKind;
        let vton: &dyn TaskKind = &super::super::vton::Vton;
        let old = serde_json::json!({"a_setting_since_removed": 1});
        assert!(vton.validate_config(&old).is_err(), "refused when written");
        // Read back (an old release's, say): refused too, never the defaults.
        let refused = crate::core::kind::registry::bind(vton, "Spring try-ons", &old).err().expect("refused");
        assert_eq!(refused.code(), crate::error::Code::StoredConfigInvalid);
        assert!(refused.to_string().contains("Spring try-ons"), "{refused}");
        assert!(refused.to_string().contains("a_setting_since_removed"), "{refused}");
        // What does parse is bound once and read through its rules.
        let rules =
            crate::core::kind::registry::bind(vton, "Spring try-ons", &serde_json::json!({})).expect("defaults");
        let policy = rules.policy();
        assert!(!policy.batches.shuffle_items);
        assert_eq!(policy.batches.max_batches_per_annotator, Some(1));
        assert_eq!(policy.background.len(), 3);
    }
}
