//! What the core hands a kind to aggregate (every item and response of a
//! campaign) and the table a kind hands back for exports.
//!
//! The core gathers the records with gold answers and answers as stored
//! ([`StoredInput`], JSON); the kind receives them read into its own types
//! ([`AggregationInput`](crate::core::kind::typed::AggregationInput)).

use serde_json::Value;
use uuid::Uuid;

/// An item with its hidden answer, for aggregation; `G` is the gold
/// answer's type.
#[derive(Debug, Clone)]
pub struct ItemRecord<G = Value> {
    /// Item id.
    pub id: Uuid,
    /// The importer's id.
    pub external_id: String,
    /// Payload, as text: each kind parses what it reads, when it reads it.
    pub payload: crate::core::item::payload::Payload,
    /// Gold answer, if any.
    pub gold: Option<G>,
}

/// One counted response, for aggregation; `A` is the answer's type.
#[derive(Debug, Clone)]
pub struct ResponseRecord<A = Value> {
    /// The assignment it was given in (one annotator's take of the batch).
    pub assignment_id: Uuid,
    /// For a review: the assignment whose answer to the same item it
    /// reviews (the reviewed response is that assignment's response to
    /// `item_id`); `None` for an ordinary response.
    pub reviews: Option<Uuid>,
    /// The batch it was answered in (the questionnaire).
    pub batch_id: Uuid,
    /// The item.
    pub item_id: Uuid,
    /// The annotator.
    pub annotator_id: Uuid,
    /// The answer. Shared: a crowd campaign's hundreds of thousands of
    /// answers take a handful of distinct values, each parsed once.
    pub answer: std::sync::Arc<A>,
    /// Whether its questionnaire (assignment) was submitted; answers of
    /// questionnaires still in progress are in the input too, and each kind
    /// decides whether they count.
    pub submitted: bool,
    /// The item's 1-based position in its batch (as formed, before any
    /// per-annotator shuffle).
    pub position: Option<i32>,
}

impl<A> ResponseRecord<A> {
    /// The same response with its answer read into another type.
    pub fn with_answer<B>(self, answer: std::sync::Arc<B>) -> ResponseRecord<B> {
        let Self { assignment_id, reviews, batch_id, item_id, annotator_id, answer: _, submitted, position } = self;
        ResponseRecord { assignment_id, reviews, batch_id, item_id, annotator_id, answer, submitted, position }
    }
}

/// What a kind aggregates: the campaign's items and the responses that
/// count (not excluded), gold answers of type `G` and answers of type `A`.
#[derive(Debug, Clone)]
pub struct Records<G = Value, A = Value> {
    /// All items, gold included.
    pub items: Vec<ItemRecord<G>>,
    /// Responses not excluded.
    pub responses: Vec<ResponseRecord<A>>,
    /// The crowd platform's worker id (or account name) per annotator, for
    /// admins' live views; empty in releases, which keep pseudonyms only.
    pub worker_ids: std::collections::BTreeMap<Uuid, String>,
    /// Each batch's id in an imported source, where it has one: its name in
    /// exported files (else the batch id), e.g. to seed per-batch draws
    /// that must be the same when the files are imported again.
    pub batch_names: std::collections::BTreeMap<Uuid, String>,
    /// Everyone who has answered anything, submitted or not (the responses
    /// a kind aggregates are the submitted ones): e.g. the experts who are
    /// to label every pair.
    pub participants: std::collections::BTreeSet<Uuid>,
    /// Whether a second expert reviews every submitted batch (the core's
    /// `review` setting): then only reviewed answers are final.
    pub review: bool,
}

/// The records as the core gathers them, gold answers and answers as
/// stored.
pub type StoredInput = Records<Value, Value>;

impl<G, A> Records<G, A> {
    /// "The reviewed answer wins": each reviewed response takes its
    /// reviewer's answer (the last review, if several), and the reviews
    /// themselves leave the input, so every item keeps one answer per
    /// original annotator.
    pub fn apply_reviews(&mut self) {
        let mut verdicts: std::collections::HashMap<(Uuid, Uuid), std::sync::Arc<A>> = std::collections::HashMap::new();
        for r in self.responses.iter().filter(|r| r.submitted) {
            if let Some(reviewed) = r.reviews {
                verdicts.insert((reviewed, r.item_id), r.answer.clone());
            }
        }
        self.responses.retain(|r| r.reviews.is_none());
        for r in &mut self.responses {
            if let Some(answer) = verdicts.remove(&(r.assignment_id, r.item_id)) {
                r.answer = answer;
            }
        }
    }
}

/// A table for CSV export.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Table {
    /// Column names.
    pub header: Vec<String>,
    /// Rows of cells.
    pub rows: Vec<Vec<String>>,
}

impl Table {
    /// The rows a writer hands over one at a time, header first, as a table.
    pub fn collect(write: impl FnOnce(&mut dyn FnMut(&[String]))) -> Self {
        let mut table = Self::default();
        let mut first = true;
        write(&mut |row: &[String]| {
            if std::mem::take(&mut first) {
                table.header = row.to_vec();
            } else {
                table.rows.push(row.to_vec());
            }
        });
        table
    }

    /// The table as CSV, spreadsheet formulas neutralised.
    pub fn to_csv(&self) -> crate::error::Result<String> {
        let mut csv = crate::core::support::csv_chunks::CsvRows::new(Vec::new());
        std::iter::once(&self.header).chain(&self.rows).for_each(|row| csv.row(row));
        String::from_utf8(csv.finish()?).map_err(|e| crate::error::Error::internal("writing a CSV table", e))
    }

    /// Hands over the header, then each row.
    pub fn each(&self, each: &mut dyn FnMut(&[String])) {
        each(&self.header);
        self.rows.iter().for_each(|row| each(row));
    }
}
