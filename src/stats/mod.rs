//! Pure statistics: agreement, aggregation and benchmark metrics.
//!
//! Plain data in, numbers out: nothing in here touches the database, HTTP or
//! files, so every function can be verified on its own against published
//! values. Undefined results are `None` or a typed error, never a silent NaN.

pub mod adaptive;
pub mod aggregate;
pub mod agreement;
pub mod alpha;
pub mod bootstrap;
pub mod correlation;
pub mod dawid_skene;
pub mod pairwise;
pub mod questionnaire;
pub mod ranking;
pub mod retrieval;
pub mod special;
pub mod split_half;
