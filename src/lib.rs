//! Atelier: an expert-annotation service for fashion-AI benchmarks.
//!
//! Layers, from the bottom: [`stats`] (pure arithmetic), [`text`] and
//! [`input`] (people's files read with located errors), [`db`] (connection
//! and the embedded PostgreSQL), [`core`] (the generic annotation core) and
//! [`auth`], [`http`] (the thin web layer naming no kind, with the
//! `KindRoutes` seam), the task [`kinds`] (each with its own routes, pages
//! and `atelier <kind>` commands, built on the core and the web layer), and
//! [`cli`] (the command line, which reaches the kinds only through
//! [`kinds::KindCommand`], from [`kinds::MODULES`]).

pub mod auth;
pub mod cli;
pub mod core;
pub mod db;
pub mod demo;
pub mod error;
pub mod http;
pub mod input;
pub mod kinds;
pub mod logging;
pub mod random;
pub mod server;
pub mod stats;
pub mod storage;
pub mod text;
