//! What the answers add up to: ground truth (computed by the kind, cached
//! while nothing changes), progress, model scores and the live exports.

pub mod aggregate_cache;
pub mod caches;
pub mod ground_truth;
pub mod model_scores;
pub mod progress;
pub mod responses_export;
pub mod shared_answers;
