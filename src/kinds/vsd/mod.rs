//! VSD suspect pairs (EDS): several retrieval models propose their top-k
//! candidates per query image; the union of the ordered (query, candidate)
//! pairs is the pool of suspects (a pair proposed both ways is labelled once); every expert labels every pair similar / not similar /
//! unsure (or flags it broken); the label is the majority, ties negative.
//! Models are then scored with HR@k, MRR@k and ROC/PR-AUC, with a
//! leave-one-model-out robustness check.

pub mod cli;
mod config;
mod demo;
pub mod eds;
pub mod files;
pub mod http;
mod hub;
pub mod import;
mod kind;
pub mod pair;
pub mod pool;
pub mod result;
pub mod robustness;
pub mod scoring;

pub use config::{Answer, Label, VsdAnswer, VsdConfig, NAME};
pub use kind::Vsd;

/// The VSD folder as the application plugs it in (see [`crate::kinds::MODULES`]).
pub const MODULE: crate::kinds::KindModule = crate::kinds::KindModule {
    kinds: &[crate::kinds::Kind::of(&Vsd)],
    routes: http::routes,
    cli: crate::kinds::KindCli { command: cli::command, run: cli::run_matches },
};
