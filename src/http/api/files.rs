//! What the API reads and sends as whole files: a body as text, a download
//! as an attachment (whole, in chunks or streamed), CSV.

use crate::error::Code;

/// A file download: content type, a `Content-Disposition` naming the file, the body.
pub fn attachment(content_type: &str, name: &str, body: impl Into<axum::body::Body>) -> axum::response::Response {
    use axum::response::IntoResponse;
    let disposition = format!("attachment; filename=\"{name}\"");
    (
        [
            (axum::http::header::CONTENT_TYPE, content_type.to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, disposition),
        ],
        body.into(),
    )
        .into_response()
}

/// A request body as text: UTF-8, without a leading byte order mark (import
/// bodies are often files saved by spreadsheets or Windows editors).
pub fn body_text(body: &axum::body::Bytes) -> crate::http::error::AppResult<&str> {
    std::str::from_utf8(crate::text::bytes_without_bom(body))
        .map_err(|_| crate::error::Error::invalid(Code::InvalidBody, "the body is not UTF-8").into())
}

/// A downloaded file's name that says what it holds: the campaign's name
/// (as a slug), its kind, what, and the day (UTC), e.g.
/// `spring-study-vton-answers-2026-11-27.csv`: two campaigns' files never collide.
pub fn export_file_name(campaign: &crate::core::campaign::campaigns::Campaign, what: &str, extension: &str) -> String {
    let mut slug = String::new();
    for c in campaign.name.to_lowercase().chars() {
        if c.is_ascii_alphanumeric() {
            slug.push(c);
        } else if !slug.ends_with('-') && !slug.is_empty() {
            slug.push('-');
        }
    }
    let slug: String = slug.trim_end_matches('-').chars().take(40).collect();
    let slug = if slug.is_empty() { "campaign".to_owned() } else { slug };
    let day = chrono::Utc::now().format("%Y-%m-%d");
    format!("{slug}-{}-{what}-{day}.{extension}", campaign.kind)
}

/// A file download made of chunks already written (e.g. a CSV export's,
/// see `core::support::csv_chunks`), sent one after another.
pub fn chunks_attachment(content_type: &str, name: &str, chunks: Vec<axum::body::Bytes>) -> axum::response::Response {
    let body = axum::body::Body::from_stream(futures_util::stream::iter(
        chunks.into_iter().map(Ok::<_, std::convert::Infallible>),
    ));
    attachment(content_type, name, body)
}

/// A download written out as its producer sends chunks (an error ends the
/// body early, so a broken file never looks complete).
pub fn streamed_attachment<C, E>(
    content_type: &str,
    name: &str,
    chunks: tokio::sync::mpsc::Receiver<Result<C, E>>,
) -> axum::response::Response
where
    C: Into<axum::body::Bytes> + Send + 'static,
    E: Into<axum::BoxError> + Send + 'static,
{
    use axum::response::IntoResponse;
    let stream = futures_util::stream::unfold(chunks, |mut rx| async move { rx.recv().await.map(|c| (c, rx)) });
    (
        [
            (axum::http::header::CONTENT_TYPE, content_type.to_owned()),
            (axum::http::header::CONTENT_DISPOSITION, format!("attachment; filename=\"{name}\"")),
        ],
        axum::body::Body::from_stream(stream),
    )
        .into_response()
}

/// A table downloaded as CSV (spreadsheet formulas neutralised).
pub fn csv_response(
    table: &crate::core::kind::contract::Table,
    name: &str,
) -> crate::http::error::AppResult<axum::response::Response> {
    Ok(attachment("text/csv; charset=utf-8", name, table.to_csv()?))
}
