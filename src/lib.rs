//! Atelier: an expert-annotation service for fashion-AI benchmarks.

pub mod cli;
pub mod stats;
