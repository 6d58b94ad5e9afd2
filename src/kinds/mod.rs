//! Task kinds that plug into the core. Each kind is one folder: its
//! [`TaskKind`](crate::core::kind::contract::TaskKind) implementation, import parsing,
//! typed results, its own routes, pages and commands, all gathered in the
//! folder's one [`KindModule`]. Adding a kind means adding its folder and
//! one line to [`registry::MODULES`].

pub mod a100;
pub mod fashionpedia;
pub mod module;
pub mod registry;
pub mod vsd;
pub mod vton;

pub use module::{Kind, KindCli, KindModule};
pub use registry::{pages, registry, routes, KindCommand, MODULES};
