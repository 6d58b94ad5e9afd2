//! The service's log: one line per event on standard error, `RUST_LOG`
//! choosing what is written (by default Atelier's own events at info, which
//! include one line per request).
//!
//! The database functions and heavy computations carry spans (debug level,
//! `#[instrument]`); with `ATELIER_LOG_SPANS=1` each span's end is written
//! with its busy and idle time, so a slow request shows where its time went
//! (e.g. `RUST_LOG=atelier=debug ATELIER_LOG_SPANS=1 atelier serve`).

use tracing_subscriber::fmt::format::FmtSpan;

/// Installs the log for this process (the binary calls it once at start).
pub fn init() {
    let spans = match std::env::var_os("ATELIER_LOG_SPANS") {
        Some(v) if v != "0" => FmtSpan::CLOSE,
        _ => FmtSpan::NONE,
    };
    tracing_subscriber::fmt()
        .with_span_events(spans)
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "atelier=info,tower_http=info".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: log files and collectors get plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
