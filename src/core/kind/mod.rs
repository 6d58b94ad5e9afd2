//! The plug-in contract a task kind implements ([`typed::TypedKind`]), its
//! erased form the core calls ([`contract::TaskKind`]) and the registry of
//! the kinds in this build.

pub mod contract;
pub mod records;
pub mod registry;
pub mod typed;
