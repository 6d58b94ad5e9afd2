//! VTON quality rating: crowd workers rate virtual try-on images on a
//! three-level scale in questionnaires that hide shared sanity tasks.

mod batches;
pub mod cli;
mod config;
pub mod curation;
pub mod curation_code;
mod demo;
pub mod ground_truth;
pub mod http;
mod hub;
mod kind;
pub mod predictor;
pub mod qbench;
mod release;
pub mod result;
pub mod service;

pub use config::{rating, sanity_task, SanityPlacement, VtonAnswer, VtonConfig, LABELS, NAME};
pub use kind::Vton;

/// The VTON folder as the application plugs it in (see [`crate::kinds::MODULES`]).
pub const MODULE: crate::kinds::KindModule = crate::kinds::KindModule {
    kinds: &[crate::kinds::Kind::of(&Vton)],
    routes: http::routes,
    cli: crate::kinds::KindCli { command: cli::command, run: cli::run_matches },
};
