//! Atelier: an expert-annotation service for fashion-AI benchmarks.
//!
//! Layers, from the bottom: [`stats`] (pure arithmetic), [`db`] (connection
//! and the embedded PostgreSQL), [`core`] (the generic annotation core) and
//! [`auth`], the task [`kinds`] that plug into the core, and [`http`] (pages
//! and the JSON API). [`cli`] is the command line.

pub mod auth;
pub mod cli;
pub mod core;
pub mod db;
pub mod demo;
pub mod http;
pub mod kinds;
pub mod logging;
pub mod random;
pub mod server;
pub mod stats;
pub mod text;
