//! A Fashionpedia release's tables for the Hugging Face Hub and Croissant.

use super::result::FpResult;
use crate::core::releases::hf::{column, Column, ColumnType::*, ReleaseTable};

/// The tasks' columns (those of `ground_truth.csv`: one row per mask and super-category).
const TASKS: [Column; 11] = [
    column("annotation_id", Integer, "The mask's id in the imported COCO file."),
    column("image", Text, "The mask's image file."),
    column("category", Text, "The mask's category."),
    column("supercategory", Text, "The attribute super-category the task asked about."),
    column("attributes", TextList("; "), "The attributes picked, by name."),
    column("not_sure", Boolean, "The expert was not sure."),
    column("not_on_list", Boolean, "The expert saw an attribute that is not on the list."),
    column("missing", Text, "The attribute the expert named as missing from the list."),
    column("status", Text, "The task's state: open, annotated or reviewed."),
    column("annotator", TextList(" "), "Pseudonyms of the experts who answered."),
    column("reviewer", Text, "Pseudonym of the expert who reviewed."),
];

/// How the masks table's list of super-categories is written in its cell.
const LIST_SEPARATOR: &str = "; ";

/// The masks' columns.
const MASKS: [Column; 7] = [
    column("annotation_id", Integer, "The mask's id in the imported COCO file."),
    column("image_id", Integer, "Its image's id in the imported COCO file."),
    column("image", Text, "Its image's file."),
    column("category_id", Integer, "Its category's id."),
    column("category", Text, "Its category."),
    column(
        "attribute_ids",
        IntegerList(" "),
        "Accepted attribute ids (Fashionpedia ontology) over the super-categories done.",
    ),
    // Super-category names hold spaces ("non-textile material type"): the
    // cell separates them with "; ", which no name holds.
    column("done", TextList(LIST_SEPARATOR), "The super-categories whose task is done."),
];

/// The tasks (as `ground_truth.csv`) and the masks with their attribute ids
/// (as `fashionpedia_attributes.json` holds them).
pub fn tables(aggregate: &[u8]) -> crate::error::Result<Vec<ReleaseTable>> {
    let masks = FpResult::from_json(aggregate)
        .map(|gt| {
            gt.annotations
                .iter()
                .map(|m| {
                    let join = |ids: &[u32]| ids.iter().map(u32::to_string).collect::<Vec<_>>().join(" ");
                    vec![
                        m.annotation_id.to_string(),
                        m.image_id.to_string(),
                        m.file_name.clone(),
                        m.category_id.to_string(),
                        m.category.clone(),
                        join(&m.attribute_ids),
                        m.done.join(LIST_SEPARATOR),
                    ]
                })
                .collect()
        })
        .unwrap_or_default();
    Ok(vec![
        ReleaseTable::from_export(
            "ground_truth",
            "One row per mask and attribute super-category: the attributes picked and the review (the release's \
             `ground_truth.csv`).",
            &TASKS,
            &["annotation_id", "supercategory"],
            super::export::flat_table(aggregate),
        )?,
        ReleaseTable::new(
            "masks",
            "One row per mask with its accepted attribute ids.",
            MASKS.to_vec(),
            &["annotation_id"],
            masks,
        ),
    ])
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kinds::fashionpedia::result::{MaskResult, Stats};
    use parquet::file::reader::{FileReader, SerializedFileReader};

    #[test]
    fn super_category_names_with_spaces_stay_one_list_item_each() {
        let gt = FpResult {
            annotations: vec![MaskResult {
                annotation_id: 7,
                image_id: 3,
                file_name: "a.jpg".into(),
                category_id: 1,
                category: "shirt, blouse".into(),
                attribute_ids: vec![115, 136],
                done: vec!["non-textile material type".into(), "length".into()],
                pending_attribute_ids: Vec::new(),
                tasks: std::collections::BTreeMap::new(),
            }],
            stats: Stats::default(),
            attribute_names: std::collections::BTreeMap::new(),
        };
        let aggregate = serde_json::to_vec(&gt).expect("json");
        let mut tables = tables(&aggregate).expect("tables");
        let masks = tables.iter_mut().find(|t| t.name == "masks").expect("masks");
        let (bytes, _) = masks.take_parquet(b"", &mut |_, _| {}).expect("parquet");
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("a Parquet file");
        let row = reader.get_row_iter(None).expect("rows").next().expect("a row").expect("row").to_string();
        assert!(row.contains("done: [\"non-textile material type\", \"length\"]"), "{row}");
    }
}
