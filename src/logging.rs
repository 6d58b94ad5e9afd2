//! The service's log: one line per event on standard error, `RUST_LOG`
//! choosing what is written (by default Atelier's own events at info, which
//! include one line per request).

/// Installs the log for this process (the binary calls it once at start).
pub fn init() {
    tracing_subscriber::fmt()
        .with_env_filter(
            tracing_subscriber::EnvFilter::try_from_default_env()
                .unwrap_or_else(|_| "atelier=info,tower_http=info".into()),
        )
        .with_writer(std::io::stderr)
        // Colours only on a terminal: log files and collectors get plain text.
        .with_ansi(std::io::IsTerminal::is_terminal(&std::io::stderr()))
        .init();
}
