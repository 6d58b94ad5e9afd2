//! The `atelier` binary: parses arguments and hands over to the library.

use clap::Parser;

/// mimalloc gives freed memory back to the system: with the default
/// allocator a service that once built a big aggregate kept its peak RSS
/// for good, and its per-request allocations cost more.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

fn main() -> std::process::ExitCode {
    // The async workers return what they freed when they fall idle (see
    // `tidy_idle_thread`): otherwise it stays resident until they next work.
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .on_thread_park(|| {
            atelier::core::support::heavy::tidy_idle_thread();
        })
        .build();
    match runtime {
        Ok(runtime) => runtime.block_on(run()),
        Err(e) => {
            eprintln!("error: no async runtime: {e}");
            std::process::ExitCode::from(2)
        }
    }
}

async fn run() -> std::process::ExitCode {
    atelier::logging::init();
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
