//! Prometheus metrics: request counts and latencies per route, plus the
//! counters the core records (responses stored, assignments created).

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::Instant;

/// The process-wide recorder (metrics are global; tests start many apps).
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| match PrometheusBuilder::new().install_recorder() {
            Ok(h) => h,
            // Another recorder is installed: render from a detached one.
            Err(_) => PrometheusBuilder::new().build_recorder().handle(),
        })
        .clone()
}

/// Middleware: counts requests and times them by matched route.
pub async fn track(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    // Label values are bounded: arbitrary methods would grow /metrics without end.
    let method = match req.method().as_str() {
        m @ ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS") => m.to_owned(),
        _ => "OTHER".to_owned(),
    };
    let response = next.run(req).await;
    let labels = [("method", method), ("route", route), ("status", response.status().as_u16().to_string())];
    metrics::counter!("atelier_http_requests_total", &labels).increment(1);
    metrics::histogram!("atelier_http_request_duration_seconds", &labels).record(start.elapsed().as_secs_f64());
    response
}
