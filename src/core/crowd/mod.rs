//! Crowd studies: the links workers join through, what they are paid and
//! the reconciliation with the platform's own list.

pub mod invitations;
pub mod payouts;
pub mod reconciliation;
