//! Items: what annotators answer, their payloads and images, and the
//! admin's data browser over them.

pub mod browser;
pub mod images;
pub mod items;
pub mod new_item;
pub mod payload;
pub mod thumbnails;
