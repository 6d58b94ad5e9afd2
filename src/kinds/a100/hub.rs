//! An A100 release's tables for the Hugging Face Hub and Croissant.

use crate::core::releases::hf::{column, Column, ColumnType::*, ReleaseTable};

/// The ground truth's columns (those of `ground_truth.csv`; the last four only in AATs).
const GROUND_TRUTH: [Column; 12] = [
    column("question", Text, "The question's id."),
    column("choice", Text, "One of the question's choices (an image)."),
    column("votes", Integer, "Counted votes for the choice."),
    column("share", Float, "The choice's share of the question's counted votes (null without votes)."),
    column(
        "majority",
        Boolean,
        "Whether the choice is the question's majority: the one choice with the most votes (a tied question has \
         none: false for every choice in a tie).",
    ),
    column("tied", Boolean, "Whether the choice shares the question's top vote count with another choice."),
    column("participants", Integer, "People whose answers to the question count."),
    column("consistency", Float, "The share of the question's votes its most chosen choice got."),
    column("correct", Boolean, "AAT: whether the choice is the key's answer."),
    column("answer", Text, "AAT: the key's answer."),
    column("dimension", Text, "AAT: the dimension the question tests."),
    column("sub_dimension", Text, "AAT: the sub-dimension the question tests."),
];

/// The ground truth, one row per question and choice.
pub fn tables(aggregate: &[u8]) -> crate::error::Result<Vec<ReleaseTable>> {
    Ok(vec![ReleaseTable::from_export(
        "ground_truth",
        "One row per question and choice: counted votes, vote share and majority (the release's `ground_truth.csv`).",
        &GROUND_TRUTH,
        &["question", "choice"],
        super::aggregate::table(aggregate),
    )?])
}
