//! The HTTP surface: browser pages, the JSON API under `/api/v1`, health
//! and metrics. Handlers are thin: they check the caller, call the core and
//! shape the answer.

pub mod api;
mod app;
pub mod csrf;
pub mod detach;
pub mod error;
pub mod error_shape;
pub mod expiring;
pub mod extract;
pub mod flash;
pub mod headers;
pub mod images;
pub mod kind_routes;
pub mod limits;
pub mod listen;
pub mod metrics;
pub mod pages;
pub mod request_time;
pub mod session_cache;
pub mod session_store;
mod state;
pub mod task_pages;
pub mod user_cache;

pub use app::{app, redacted_path};
pub use headers::{client_ip, cookie};
pub use limits::{import_limit, MAX_ANNOTATOR_BODY, MAX_BODY};
pub use state::{AppState, HttpConfig, Shared};
