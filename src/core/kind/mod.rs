//! The plug-in contract a task kind implements ([`typed::TypedKind`]), its
//! erased form the core calls ([`contract::TaskKind`]), the values a kind
//! states once ([`about::About`], [`policy::Policy`]) and the registry of
//! the kinds in this build.

pub mod about;
pub mod contract;
pub mod ground_truth_text;
pub mod policy;
pub mod records;
pub mod registry;
pub mod typed;
