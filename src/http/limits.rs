//! How much a request may carry.

/// Largest request body accepted, except on the import routes.
pub const MAX_BODY: usize = 8 * 1024 * 1024;

/// Largest body an annotator (worker or expert) sends: an answer, a
/// questionnaire's background, a form of the annotation pages. Anyone with a
/// campaign's link is a worker, so their requests are not given the 8 MB an
/// admin's may carry (a thousand of those held open would be 8 GB).
pub const MAX_ANNOTATOR_BODY: usize = 64 * 1024;

/// Largest import accepted (item imports, VTON triplets and releases): 256 MB,
/// or `ATELIER_IMPORT_LIMIT_MB`.
pub fn import_limit() -> usize {
    static LIMIT: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *LIMIT.get_or_init(|| {
        std::env::var("ATELIER_IMPORT_LIMIT_MB").ok().and_then(|v| v.parse::<usize>().ok()).unwrap_or(256) * 1024 * 1024
    })
}
