//! Fashionpedia attributes: experts see one segmentation mask and one
//! attribute super-category at a time, tick attributes from the ontology
//! (or answer "not sure" / "not on the list"), and a second expert reviews
//! each annotation; the reviewed answer wins. Exported as COCO JSON in the
//! Fashionpedia layout.

pub mod cli;
pub mod coco;
mod config;
mod demo;
pub mod df2;
pub mod export;
pub mod http;
mod hub;
mod item;
mod kind;
pub mod masks;
pub mod ontology;
pub mod result;
pub mod store;

pub use config::{Answer, FpConfig, NAME};
pub use kind::Fashionpedia;

/// The Fashionpedia folder as the application plugs it in (see [`crate::kinds::MODULES`]).
pub const MODULE: crate::kinds::KindModule = crate::kinds::KindModule {
    kinds: &[crate::kinds::Kind::of(&Fashionpedia)],
    routes: http::routes,
    cli: crate::kinds::KindCli { command: cli::command, run: cli::run_matches },
};
