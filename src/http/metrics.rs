//! Prometheus metrics: request counts and latencies per route, plus the
//! counters the core records (responses stored, assignments created).

use axum::extract::{MatchedPath, Request};
use axum::middleware::Next;
use axum::response::Response;
use metrics_exporter_prometheus::{PrometheusBuilder, PrometheusHandle};
use std::sync::OnceLock;
use std::time::{Duration, Instant};

/// How often the recorder's pending histogram samples are folded into
/// their summaries (the exporter's own default).
const UPKEEP_EVERY: Duration = Duration::from_secs(5);

/// The process-wide recorder (metrics are global; tests start many apps),
/// kept up by a thread of its own from the first call.
pub fn handle() -> PrometheusHandle {
    static HANDLE: OnceLock<PrometheusHandle> = OnceLock::new();
    HANDLE
        .get_or_init(|| {
            let handle = match PrometheusBuilder::new().install_recorder() {
                Ok(h) => h,
                // Another recorder is installed: render from a detached one.
                Err(_) => PrometheusBuilder::new().build_recorder().handle(),
            };
            let kept = handle.clone();
            keep_up(UPKEEP_EVERY, move || kept.run_upkeep());
            handle
        })
        .clone()
}

/// Runs `upkeep` (the recorder's) every `every`, for the life of the
/// process. A recorder installed without the exporter's own listener keeps
/// every histogram sample until something drains it: unscraped, each
/// request's latency stayed in memory for good (~8 bytes a request, growing
/// without bound under a crowd's load).
fn keep_up(every: Duration, mut upkeep: impl FnMut() + Send + 'static) {
    let spawned = std::thread::Builder::new().name("metrics-upkeep".to_owned()).spawn(move || loop {
        std::thread::sleep(every);
        upkeep();
    });
    if let Err(e) = spawned {
        tracing::warn!(error = %e, "no thread for the metrics' upkeep: samples are drained only when scraped");
    }
}

/// The route template a request matched (`/join/{token}`, never the token),
/// left on the response for the request log.
#[derive(Debug, Clone)]
pub struct Route(pub String);

/// A method as a label: the known ones, else `OTHER` (label values are
/// bounded; arbitrary methods would grow /metrics without end).
fn method_label(method: &axum::http::Method) -> String {
    match method.as_str() {
        m @ ("GET" | "HEAD" | "POST" | "PUT" | "PATCH" | "DELETE" | "OPTIONS") => m.to_owned(),
        _ => "OTHER".to_owned(),
    }
}

/// Middleware: counts requests and times them by matched route.
pub async fn track(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let route = req.extensions().get::<MatchedPath>().map_or("unmatched", |p| p.as_str()).to_owned();
    let method = method_label(req.method());
    let mut response = next.run(req).await;
    response.extensions_mut().insert(Route(route.clone()));
    let labels = [("method", method), ("route", route), ("status", response.status().as_u16().to_string())];
    metrics::counter!("atelier_http_requests_total", &labels).increment(1);
    metrics::histogram!("atelier_http_request_duration_seconds", &labels).record(start.elapsed().as_secs_f64());
    response
}

/// Middleware: one log line per request at info level: method, matched
/// route (templates only: tokens in paths never reach the log), status,
/// latency and request id.
pub async fn log_request(req: Request, next: Next) -> Response {
    let start = Instant::now();
    let method = method_label(req.method());
    let request_id = req.headers().get("x-request-id").and_then(|v| v.to_str().ok()).unwrap_or("-").to_owned();
    let response = next.run(req).await;
    let route = response.extensions().get::<Route>().map_or("unmatched", |r| r.0.as_str());
    // A server error is logged once, here, with its cause (the response carries it).
    if let Some(cause) = response.extensions().get::<super::error::ServerErrorCause>() {
        tracing::error!(
            method = %method,
            route = %route,
            status = response.status().as_u16(),
            request_id = %request_id,
            cause = %cause.0,
            "request failed"
        );
    }
    tracing::info!(
        method = %method,
        route = %route,
        status = response.status().as_u16(),
        latency_ms = start.elapsed().as_secs_f64() * 1000.0,
        request_id = %request_id,
        "request"
    );
    response
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_upkeep_runs_again_and_again_without_being_scraped() {
        use std::sync::atomic::{AtomicU64, Ordering};
        use std::sync::Arc;
        let runs = Arc::new(AtomicU64::new(0));
        let counted = runs.clone();
        keep_up(Duration::from_millis(5), move || {
            counted.fetch_add(1, Ordering::Relaxed);
        });
        let deadline = Instant::now() + Duration::from_secs(10);
        while runs.load(Ordering::Relaxed) < 2 && Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(5));
        }
        assert!(runs.load(Ordering::Relaxed) >= 2, "the upkeep ran again and again");
    }
}
