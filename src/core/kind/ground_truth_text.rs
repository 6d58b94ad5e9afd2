//! A kind's ground truth as the core keeps it: the compact JSON text its
//! aggregation wrote (cached, exported, released), typed by the kind whose
//! ground truth it is, so a kind's export and release hooks receive their
//! own `GroundTruth` and not bytes.

use serde::de::DeserializeOwned;
use std::marker::PhantomData;

/// The ground truth of kind `G`'s aggregation, as its compact JSON text.
/// Read whole with [`Self::read`], or a smaller part of it with
/// [`Self::read_as`] where a whole crowd campaign's would cost memory;
/// [`Self::text`] is there for readers that stream it row by row.
pub struct GroundTruthText<'a, G> {
    text: &'a [u8],
    ground_truth: PhantomData<fn() -> G>,
}

impl<G> Clone for GroundTruthText<'_, G> {
    fn clone(&self) -> Self {
        *self
    }
}

impl<G> Copy for GroundTruthText<'_, G> {}

impl<G> std::fmt::Debug for GroundTruthText<'_, G> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GroundTruthText").field("bytes", &self.text.len()).finish()
    }
}

impl<'a, G: DeserializeOwned> GroundTruthText<'a, G> {
    /// The text an aggregation of kind `G` wrote (the core hands it on as
    /// it was stored, so only the kind's own aggregation made it).
    pub(crate) fn new(text: &'a [u8]) -> Self {
        Self { text, ground_truth: PhantomData }
    }

    /// The whole ground truth.
    pub fn read(&self) -> serde_json::Result<G> {
        serde_json::from_slice(self.text)
    }

    /// A part of it (a struct with fewer fields, the rest skipped unread).
    pub fn read_as<T: DeserializeOwned>(&self) -> serde_json::Result<T> {
        serde_json::from_slice(self.text)
    }

    /// The text itself, for a reader that turns it into rows as it goes.
    pub fn text(&self) -> &'a [u8] {
        self.text
    }
}
