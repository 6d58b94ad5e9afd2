//! The integration test binary: one binary so it builds once.

mod cli_stats;
mod stats_properties;
mod stats_reference;
