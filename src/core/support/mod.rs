//! Helpers the sub-domains share and that know nothing of them: shared
//! computations, the heavy-work thread, JSON and CSV text.

pub mod coalesce;
pub mod csv_chunks;
pub mod export_time;
pub mod heavy;
pub mod json_text;
