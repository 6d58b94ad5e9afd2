//! The generic annotation core: campaigns, items, batches, assignments,
//! responses, ground truth and releases. Task kinds plug in through
//! [`kind::typed::TypedKind`]; nothing here depends on which kinds exist.
//!
//! One folder per sub-domain, each depending only on the ones listed
//! before it (see `docs/architecture.md`):
//! [`support`] (helpers), [`kind`] (the plug-in contract), [`campaign`],
//! [`item`], [`work`] (assignments and answers), [`truth`] (ground truth
//! and progress), [`crowd`] (study links, payouts, reconciliation) and
//! [`releases`].

pub mod campaign;
pub mod crowd;
pub mod item;
pub mod kind;
pub mod releases;
pub mod support;
pub mod truth;
pub mod work;

pub use kind::registry::Registry;
pub use kind::typed::TypedKind;
pub use truth::caches::Caches;
