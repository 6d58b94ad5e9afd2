//! A VTON release's tables for the Hugging Face Hub and Croissant.

use crate::core::releases::hf::{column, Column, ColumnType::*, ReleaseTable};

/// The per-image scores' columns (those of `ground_truth.csv`).
const IMAGES: [Column; 15] = [
    column("image", Text, "The try-on image's id as imported."),
    column("vton_model_id", Text, "The try-on model that made the image."),
    column("category", Text, "The garment category."),
    column("dataset", Text, "The dataset the person and garment come from."),
    column("tryon", Text, "The try-on image (URL or path as imported)."),
    column("garment", Text, "The garment image (URL or path as imported)."),
    column("person", Text, "The person image (URL or path as imported)."),
    column("reference", Text, "The reference image, if any."),
    column("mean", Float, "Mean rating of the curated responses on the 1-3 scale (the released code's `reward`)."),
    column("reward", Float, "The mean moved to the paper's scale (mean - 2, from -1 to 1)."),
    column("n_annotation", Integer, "Curated ratings of the image."),
    column("votes_1", Integer, "Curated ratings of 1 (bad)."),
    column("votes_2", Integer, "Curated ratings of 2 (medium)."),
    column("votes_3", Integer, "Curated ratings of 3 (good)."),
    column("annotators", TextList(" "), "Pseudonyms of the annotators whose ratings count."),
];

/// The per-questionnaire curation's columns.
const QUESTIONNAIRES: [Column; 7] = [
    column("questionnaire", Text, "The questionnaire (form)."),
    column("alpha_before", Float, "Krippendorff's alpha (ordinal) of all its submitted responses."),
    column("alpha_after", Float, "Krippendorff's alpha after curation."),
    column("annotators_kept", Integer, "Annotators kept by curation."),
    column("kept", Boolean, "Whether the questionnaire's ratings count."),
    column("workers_kept", TextList(" "), "Pseudonyms of the annotators kept."),
    column("workers_removed", TextList(" "), "Pseudonyms of the annotators removed, each as `pseudonym:rule`."),
];

/// The per-image scores and the per-questionnaire agreement.
pub fn tables(aggregate: &[u8]) -> crate::error::Result<Vec<ReleaseTable>> {
    Ok(vec![
        ReleaseTable::from_aggregate(
            "ground_truth",
            "One row per try-on image: curated ratings and scores (the release's `ground_truth.csv`).",
            IMAGES.to_vec(),
            &["image"],
            super::ground_truth::image_rows,
        ),
        ReleaseTable::from_export(
            "questionnaires",
            "One row per questionnaire: agreement before and after curation, and who was kept.",
            &QUESTIONNAIRES,
            &["questionnaire"],
            super::ground_truth::questionnaire_table(aggregate),
        )?,
    ])
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_images_table_declares_the_csv_columns_in_their_order() {
        // Its rows are the CSV's rows, read straight into the table.
        assert_eq!(super::IMAGES.map(|c| c.name), super::super::ground_truth::HEADER.map(std::borrow::Cow::Borrowed));
    }
}
