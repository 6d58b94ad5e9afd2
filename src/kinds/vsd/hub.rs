//! A VSD release's tables for the Hugging Face Hub and Croissant.

use crate::core::releases::hf::{column, Column, ColumnType::*, ReleaseTable};

/// The pairs' columns (those of `ground_truth.csv`).
const PAIRS: [Column; 12] = [
    column("query", Text, "The query image (the image the candidate was ranked for)."),
    column("candidate", Text, "The candidate image."),
    column(
        "label",
        Integer,
        "1 similar, 0 not similar (majority of the experts' votes, ties negative); null when no expert voted similar \
         or not similar (only unsure).",
    ),
    column("similar", Integer, "Experts who voted similar."),
    column("not_similar", Integer, "Experts who voted not similar."),
    column("unsure", Integer, "Experts who were unsure."),
    column("broken", Integer, "Experts who flagged an image as broken."),
    column("unanimous", Boolean, "Whether every vote agreed."),
    column("sample", Boolean, "Whether the pair was drawn for the p-hat sample only (not a model's suspect)."),
    column("proposed_by", TextList(" "), "The models that proposed the pair, each as `model:rank`."),
    column("votes", TextList(" "), "Each expert's vote as `pseudonym:vote`."),
    column("complete", Boolean, "Whether every expert who started has labelled the pair."),
];

/// The labelled pairs with their provenance.
pub fn tables(aggregate: &[u8]) -> crate::error::Result<Vec<ReleaseTable>> {
    Ok(vec![ReleaseTable::from_export(
        "ground_truth",
        "One row per labelled pair: the experts' votes, the label and the models that proposed it (the release's \
         `ground_truth.csv`).",
        &PAIRS,
        &["query", "candidate"],
        super::result::table(aggregate, false),
    )?])
}
