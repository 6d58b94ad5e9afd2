//! Task kinds that plug into the core. Each kind is one folder: its
//! [`TaskKind`](crate::core::kind::TaskKind) implementation, import parsing,
//! typed results, its own routes, pages and commands, all gathered in the
//! folder's one [`KindModule`]. Adding a kind means adding its folder and
//! one line to [`MODULES`].

pub mod a100;
pub mod fashionpedia;
pub mod module;
pub mod vsd;
pub mod vton;

pub use module::{Kind, KindCli, KindCommand, KindModule};

use crate::core::Registry;
use crate::http::kind_routes::KindRoutes;
use crate::http::task_pages::KindPages;

/// Every kind folder of this build, in the order their kinds are listed.
pub const MODULES: &[KindModule] = &[a100::MODULE, vton::MODULE, vsd::MODULE, fashionpedia::MODULE];

/// Every kind this build knows, for the core.
pub fn registry() -> Registry {
    Registry::new(all().map(|k| k.core).collect())
}

/// How every kind is shown, for the HTTP layer.
pub fn pages() -> KindPages {
    KindPages::new(all().map(|k| (k.core.name(), k.pages)).collect())
}

fn all() -> impl Iterator<Item = &'static Kind> {
    MODULES.iter().flat_map(|m| m.kinds.iter())
}

/// Every kind's own HTTP routes, for the application.
pub fn routes() -> Vec<KindRoutes> {
    MODULES.iter().map(|m| (m.routes)()).collect()
}
