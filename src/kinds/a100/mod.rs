//! A100 questionnaires: fill-in-the-blank outfit questions with five image
//! choices. LAT takes its ground truth from the crowd's votes; AAT has an
//! expert answer key with a dimension and sub-dimension per question.

pub mod aggregate;
pub mod cli;
mod config;
mod demo;
pub mod gt_file;
pub mod http;
mod hub;
mod kind;
pub mod models;
pub mod outfit;
pub mod pilot;
pub mod pilot_data;
pub mod question;
mod release;
pub mod result;

pub use config::{A100Answer, A100Config, AAT, LAT};
pub use kind::{Aat, Lat};

/// The A100 folder as the application plugs it in (see [`crate::kinds::MODULES`]).
pub const MODULE: crate::kinds::KindModule = crate::kinds::KindModule {
    kinds: &[crate::kinds::Kind::of(&Lat), crate::kinds::Kind::of(&Aat)],
    routes: http::routes,
    cli: crate::kinds::KindCli { command: cli::command, run: cli::run_matches },
};
