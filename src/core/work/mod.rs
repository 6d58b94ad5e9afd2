//! The annotator's work: batches (questionnaires), who may take them,
//! assignments under a lease, answers recorded and changed, work done
//! elsewhere brought in as completed batches (history), and what an
//! annotator's own pages show.

pub mod annotator;
pub mod assignment_progress;
pub mod assignments;
pub mod batches;
pub mod eligibility;
pub mod handles;
pub mod history;
pub mod kept;
pub mod overlap;
pub mod own_task;
pub mod own_view;
pub mod record;
pub mod responses;
