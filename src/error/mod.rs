//! The domain's error and its codes, in a leaf module that the core, the
//! accounts (`auth`) and the storage boundary all use without using each
//! other.

pub mod code;
pub mod constraints;
mod domain;

pub use code::Code;
pub use domain::{Error, Result};
