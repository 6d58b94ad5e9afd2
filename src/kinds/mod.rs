//! Task kinds that plug into the core. Each kind is one folder: its
//! [`TaskKind`](crate::core::kind::TaskKind) implementation, import parsing,
//! typed results, its own routes, pages and commands. Adding a kind means
//! adding its folder and listing it in the three functions below.

pub mod a100;
pub mod fashionpedia;
pub mod vsd;
pub mod vton;

use crate::core::Registry;
use crate::http::kind_routes::KindRoutes;

/// Every kind this build knows, for the core.
pub fn registry() -> Registry {
    Registry::new(vec![&a100::Lat, &a100::Aat, &vton::Vton, &vsd::Vsd, &fashionpedia::Fashionpedia])
}

/// Every kind's own HTTP routes, for the application.
pub fn routes() -> Vec<KindRoutes> {
    vec![a100::http::routes(), vton::http::routes(), vsd::http::routes(), fashionpedia::http::routes()]
}

/// Every kind's own commands (`atelier <kind> ...`).
#[derive(Debug, clap::Subcommand)]
pub enum KindCommand {
    /// A100 tools: score a model against a released ground truth, import a question set.
    #[command(subcommand)]
    A100(a100::cli::A100Command),
    /// VTON tools: curation on your own files, importing a VTON-QBench release.
    #[command(subcommand)]
    Vton(vton::cli::VtonCommand),
    /// VSD tools: suspects, estimates and robustness on files; importing rankings.
    #[command(subcommand)]
    Vsd(vsd::cli::VsdCommand),
    /// Fashionpedia tools: importing an ontology and COCO masks (streamed).
    #[command(subcommand)]
    Fashionpedia(fashionpedia::cli::FashionpediaCommand),
}

impl KindCommand {
    /// Runs the command; output goes to `out`.
    pub async fn run(self, out: &mut dyn std::io::Write) -> anyhow::Result<()> {
        match self {
            KindCommand::A100(cmd) => a100::cli::run(cmd, out).await,
            KindCommand::Vton(cmd) => vton::cli::run(cmd, out).await,
            KindCommand::Vsd(cmd) => vsd::cli::run(cmd, out).await,
            KindCommand::Fashionpedia(cmd) => fashionpedia::cli::run(cmd, out).await,
        }
    }
}
