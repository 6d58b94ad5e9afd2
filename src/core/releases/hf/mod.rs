//! A release as the community loads it: a folder `hf/` in the archive that
//! `huggingface-cli upload` pushes as it is. Every table is a typed Parquet
//! file under `data/`, `README.md` is the dataset card (the Hub's YAML
//! header, then the datasheet) and `croissant.json` is the MLCommons
//! Croissant 1.0 description with its Responsible-AI fields.
//!
//! The files are derived like every other release file: computed from the
//! raw data alone, listed in the manifest and recomputed by `release verify`.

pub mod card;
pub mod croissant;
pub mod table;

pub use table::{column, Column, ColumnType, ParquetTable, ReleaseTable, Written};

use crate::core::kind::contract::{CampaignRules, TaskKind};
use crate::core::releases::archive::{EachFile, ReleaseInfo};
use crate::core::releases::packing::packing;
use crate::core::releases::snapshot::Snapshot;
use crate::error::Result;
use sha2::{Digest, Sha256};

/// The folder inside a release archive.
pub const DIR: &str = "hf";

/// The responses table's columns (a release's `responses.csv`).
const RESPONSE_COLUMNS: [Column; 9] = [
    column("questionnaire", ColumnType::Text, "The questionnaire (batch) the response was given in."),
    column("questionnaire_position", ColumnType::Integer, "The questionnaire's position in the campaign."),
    column("item", ColumnType::Text, "The item answered (its id in `items`)."),
    column("annotator", ColumnType::Text, "The annotator's pseudonym, stable within this release only."),
    column("answer", ColumnType::Json, "The answer as given, a JSON document in the kind's answer format."),
    column("time_on_task_ms", ColumnType::Integer, "Time the annotator spent on the task, as the page measured it."),
    column("answered_at", ColumnType::Timestamp, "When the answer was first given."),
    column("changed_at", ColumnType::Timestamp, "When the answer was last changed."),
    column("excluded_reason", ColumnType::Text, "Why the response does not count (null when it counts)."),
];

/// The items table's columns.
const ITEM_COLUMNS: [Column; 3] = [
    column("item", ColumnType::Text, "The item's id as imported."),
    column("payload", ColumnType::Json, "The item as imported (images, choices), a JSON document."),
    column("gold", ColumnType::Json, "The item's known answer, if it has one (gold or sanity task)."),
];

/// Rewrites a text cell (an image's path, when images are copied beside
/// the tables), or leaves it as it is (`None`).
pub type Rewrite<'a> = &'a dyn Fn(&str) -> Option<String>;

/// Writes the folder's files (`hf/data/*.parquet`, `hf/README.md`,
/// `hf/croissant.json`) through `each`, the ground truth's table first; with
/// the text cells of the kind's tables and of `items` passed through
/// `rewrite` (responses hold answers, never paths), if given.
#[allow(clippy::too_many_arguments)]
pub fn each_file_rewritten(
    kind: &dyn TaskKind,
    rules: &dyn CampaignRules,
    snapshot: &Snapshot,
    aggregate: &[u8],
    info: &ReleaseInfo,
    datasheet: &str,
    rewrite: Option<Rewrite<'_>>,
    each: EachFile<'_>,
) -> Result<()> {
    let tables = snapshot_tables(snapshot, rewrite)?;
    each_file_with(kind, rules, snapshot, aggregate, info, datasheet, rewrite, tables, each)
}

/// The tables made from the snapshot alone (responses, then items), as
/// Parquet: they can be made before the ground truth is known.
#[derive(Default)]
pub struct SnapshotTables(Vec<SnapshotTable>);

impl SnapshotTables {
    /// The two tables, each made on its own ([`responses_table`],
    /// [`items_table`]).
    pub fn of(responses: SnapshotTable, items: SnapshotTable) -> Self {
        Self(vec![responses, items])
    }
}

/// One of the [`SnapshotTables`]: the table, its Parquet bytes and rows.
pub struct SnapshotTable(ReleaseTable, Vec<u8>, usize);

/// Makes the [`SnapshotTables`], `items`' text cells passed through `rewrite`.
pub fn snapshot_tables(snapshot: &Snapshot, rewrite: Option<Rewrite<'_>>) -> Result<SnapshotTables> {
    Ok(SnapshotTables::of(responses_table(snapshot)?, items_table(snapshot, rewrite)?))
}

/// A row's text cells passed through `rewrite`, if there is one.
fn rewrite_row(columns: &[Column], row: &mut [String], rewrite: Option<Rewrite<'_>>) {
    let Some(rewrite) = rewrite else { return };
    for (c, cell) in columns.iter().zip(row) {
        if matches!(c.ty, ColumnType::Text | ColumnType::Json | ColumnType::TextList(_)) {
            if let Some(new) = rewrite(cell) {
                *cell = new;
            }
        }
    }
}

/// [`each_file_rewritten`] with the [`SnapshotTables`] already made.
#[allow(clippy::too_many_arguments)]
pub fn each_file_with(
    kind: &dyn TaskKind,
    rules: &dyn CampaignRules,
    snapshot: &Snapshot,
    aggregate: &[u8],
    info: &ReleaseInfo,
    datasheet: &str,
    rewrite: Option<Rewrite<'_>>,
    tables: SnapshotTables,
    each: EachFile<'_>,
) -> Result<()> {
    let mut written = Vec::new();
    // A table without rows is left out: the Hub's loader refuses a config
    // with no data, and the card names what is left out.
    let mut empty = Vec::new();
    let mut emit = |table: ReleaseTable, bytes: Vec<u8>, rows: usize| -> Result<()> {
        if rows == 0 {
            empty.push(table.name);
            return Ok(());
        }
        let sha256 = hex::encode(Sha256::digest(&bytes));
        let done = Written { table, rows, sha256 };
        each(&format!("{DIR}/{}", done.path()), &mut |out| out.write_all(&bytes).map_err(packing))?;
        written.push(done);
        Ok(())
    };
    for mut table in kind.release_tables(aggregate)? {
        let (bytes, rows) = table.take_parquet(aggregate, &mut |columns, row| rewrite_row(columns, row, rewrite))?;
        emit(table, bytes, rows)?;
    }
    for SnapshotTable(table, bytes, rows) in tables.0 {
        emit(table, bytes, rows)?;
    }
    let card = card::render(kind, snapshot, info, &written, &empty, datasheet);
    each(&format!("{DIR}/README.md"), &mut |out| out.write_all(card.as_bytes()).map_err(packing))?;
    let croissant = croissant::render(kind, rules, snapshot, aggregate, info, &written);
    each(&format!("{DIR}/croissant.json"), &mut |out| {
        crate::core::releases::snapshot::write_pretty_json(out, &croissant)
    })
}

/// The responses table, written row by row as `responses.csv` is.
pub fn responses_table(snapshot: &Snapshot) -> Result<SnapshotTable> {
    let mut table = ReleaseTable::new(
        "responses",
        "One row per response, excluded ones with the reason (the release's `responses.csv`).",
        RESPONSE_COLUMNS.to_vec(),
        &["questionnaire", "annotator", "item"],
        Vec::new(),
    );
    table.references.push(("item", "items", "item"));
    let mut parquet = ParquetTable::new(table.name, &table.columns)?;
    let mut failed = None;
    let mut header = true;
    crate::core::releases::responses_rows::each_response_row(snapshot, &mut |row| {
        // The first row is the CSV's header; a release's rows have no worker ids.
        if std::mem::take(&mut header) || failed.is_some() {
            return;
        }
        failed = parquet.row(row).err();
    });
    if let Some(e) = failed {
        return Err(e);
    }
    let rows = parquet.rows();
    let bytes = parquet.finish()?;
    Ok(SnapshotTable(table, bytes, rows))
}

/// The items table: every item with its payload and hidden answer, written
/// row by row (a crowd campaign's payloads are never held as text at once).
pub fn items_table(snapshot: &Snapshot, rewrite: Option<Rewrite<'_>>) -> Result<SnapshotTable> {
    let table = ReleaseTable::new(
        "items",
        "One row per item as imported, with its known answer if any.",
        ITEM_COLUMNS.to_vec(),
        &["item"],
        Vec::new(),
    );
    let mut parquet = ParquetTable::new(table.name, &table.columns)?;
    for i in &snapshot.items {
        let mut row = vec![
            i.external_id.clone(),
            i.payload.text().to_owned(),
            i.gold.as_ref().map(ToString::to_string).unwrap_or_default(),
        ];
        rewrite_row(&table.columns, &mut row, rewrite);
        parquet.row(row)?;
    }
    let bytes = parquet.finish()?;
    Ok(SnapshotTable(table, bytes, snapshot.items.len()))
}

/// The folder's files (paths inside it) from a release's unpacked files:
/// those the archive holds, or, for a release of an earlier format or with
/// `rewrite`, made again from its raw data exactly as a release makes them.
pub fn folder(
    files: &std::collections::BTreeMap<String, Vec<u8>>,
    kinds: &crate::core::Registry,
    rewrite: Option<Rewrite<'_>>,
) -> std::result::Result<Vec<(String, Vec<u8>)>, String> {
    let prefix = format!("{DIR}/");
    let held: Vec<(String, Vec<u8>)> = files
        .iter()
        .filter_map(|(name, bytes)| Some((name.strip_prefix(&prefix)?.to_owned(), bytes.clone())))
        .collect();
    if rewrite.is_none() && !held.is_empty() {
        return Ok(held);
    }
    let manifest: serde_json::Value =
        serde_json::from_slice(files.get(crate::core::releases::archive::MANIFEST).ok_or("manifest.json is missing")?)
            .map_err(|e| format!("manifest.json: {e}"))?;
    let kind_name = manifest["campaign"]["kind"].as_str().unwrap_or_default();
    let kind = kinds.find(kind_name).ok_or_else(|| format!("manifest.json: unknown kind `{kind_name}`"))?;
    let info: ReleaseInfo =
        serde_json::from_value(manifest["release"].clone()).map_err(|e| format!("manifest.json: release: {e}"))?;
    let snapshot = Snapshot::from_raw_files(files)?;
    let rules = crate::core::releases::archive::rules_of(kind, &snapshot).map_err(|e| format!("manifest.json: {e}"))?;
    let aggregate = crate::core::kind::contract::aggregate_json_with_reviews(&*rules, snapshot.aggregation_input());
    let datasheet = crate::core::releases::datasheet::render(
        kind,
        &*rules,
        &snapshot,
        aggregate.as_bytes(),
        &info,
        &crate::core::releases::archive::counts(&snapshot),
    );
    let mut out = Vec::new();
    each_file_rewritten(
        kind,
        &*rules,
        &snapshot,
        aggregate.as_bytes(),
        &info,
        &datasheet,
        rewrite,
        &mut |name, write| {
            let mut bytes = Vec::new();
            write(&mut bytes)?;
            out.push((name.strip_prefix(&prefix).unwrap_or(name).to_owned(), bytes));
            Ok(())
        },
    )
    .map_err(|e| e.to_string())?;
    Ok(out)
}
