//! Campaigns: a kind, a configuration, the core's settings and a state;
//! what changes them (configuration changes, imported history) and what a
//! crowd worker reads before the first task (intro, background questions).

pub mod campaigns;
pub mod config_changes;
pub mod config_text;
pub mod history;
pub mod intro;
pub mod profiles;
pub mod setting_help;
pub mod settings;
pub mod states;
