//! The `atelier` command line: argument definitions and dispatch.

pub mod input;
pub mod stats;

use clap::{Parser, Subcommand};
use std::io::Write;

/// Atelier: expert annotation for fashion-AI benchmarks.
#[derive(Debug, Parser)]
#[command(name = "atelier", version, about)]
pub struct Cli {
    /// What to do.
    #[command(subcommand)]
    pub command: Command,
}

/// Top-level subcommands.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Statistics on your own files: agreement, aggregation, retrieval metrics.
    #[command(subcommand)]
    Stats(stats::StatsCommand),
}

/// Runs a parsed command line; output goes to `out`.
pub async fn run(cli: Cli, out: &mut dyn Write) -> anyhow::Result<()> {
    match cli.command {
        Command::Stats(cmd) => stats::run(&cmd, out),
    }
}
