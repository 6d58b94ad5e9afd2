//! Requests run to completion even when their client leaves.
//!
//! When a client disconnects, hyper drops the request's future. Dropped at
//! the wrong moment, a write is half done: a transaction begun but never
//! ended, a session row not saved, a vote stored but its assignment not
//! renewed. Running every request on its own task makes the work independent
//! of the connection: the client that left simply gets no answer. The tasks
//! are tracked so that shutdown waits for them before closing the database.

use axum::extract::{Request, State};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};
use tokio_util::task::TaskTracker;

/// Middleware: runs the rest of the stack on a tracked task and waits for it.
pub async fn run_to_completion(State(tasks): State<TaskTracker>, req: Request, next: Next) -> Response {
    match tasks.spawn(next.run(req)).await {
        Ok(response) => response,
        Err(e) => {
            // A panic in a handler: the task is gone, the server is not.
            tracing::error!(error = %e, "request task failed");
            super::error::AppError::Core(crate::error::Error::internal("request task failed", e)).into_response()
        }
    }
}
