//! The generic annotation core: campaigns, items, batches, assignments,
//! responses and progress. Task kinds plug in through [`kind::TaskKind`];
//! nothing here depends on which kinds exist.

pub mod aggregate_cache;
pub mod assignments;
pub mod batches;
pub mod caches;
pub mod campaigns;
pub mod coalesce;
pub mod code;
pub mod config_changes;
pub mod config_text;
pub mod constraints;
pub mod csv_chunks;
pub mod eligibility;
mod error;
pub mod ground_truth;
pub mod handles;
pub mod heavy;
pub mod history;
pub mod images;
pub mod intro;
pub mod item_browser;
pub mod items;
pub mod json_text;
pub mod kind;
pub mod model_scores;
pub mod payouts;
pub mod profiles;
pub mod progress;
pub mod record;
pub mod registry;
pub mod releases;
pub mod responses;
pub mod responses_export;
pub mod setting_help;
pub mod settings;
pub mod shared_answers;
pub mod states;
pub mod thumbnails;
pub mod typed_kind;
pub mod work;

pub use caches::Caches;
pub use code::Code;
pub use error::{Error, Result};
pub use registry::Registry;
pub use typed_kind::TypedKind;
