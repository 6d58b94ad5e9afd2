//! Campaigns: a kind, a configuration, the core's settings and a state;
//! what changes them (configuration changes), whose work counts (the
//! platform's exclusion marks) and what a crowd worker reads before the
//! first task (intro, background questions).

pub mod campaigns;
pub mod config_changes;
pub mod config_text;
pub mod intro;
pub mod marks;
pub mod profiles;
pub mod setting_help;
pub mod settings;
pub mod states;
