//! The `atelier` binary: parses arguments and hands over to the library.

use clap::Parser;

/// mimalloc gives freed memory back to the system: with the default
/// allocator a service that once built a big aggregate kept its peak RSS
/// for good, and its per-request allocations cost more.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[tokio::main]
async fn main() -> std::process::ExitCode {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "atelier=info,tower_http=info".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: log files and collectors get plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
    let cli = atelier::cli::Cli::parse();
    let stdout = std::io::stdout();
    let mut out = stdout.lock();
    match atelier::cli::run(cli, &mut out).await {
        Ok(()) => std::process::ExitCode::SUCCESS,
        Err(e) => match e.downcast_ref::<atelier::cli::Failed>() {
            Some(failed) => {
                eprintln!("{}", failed.message);
                std::process::ExitCode::from(failed.code)
            }
            None => {
                eprintln!("error: {e:#}");
                std::process::ExitCode::from(2)
            }
        },
    }
}
