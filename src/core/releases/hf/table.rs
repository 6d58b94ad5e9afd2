//! A release table with typed columns, and its Parquet file.
//!
//! Tables are declared, not guessed: each column names its type, and the
//! cells (the same text the CSV exports hold) are parsed into it, so the
//! Parquet file has the CSV's rows with the declared types. An empty cell is
//! a null (as pandas reads an empty CSV cell), except in a list column,
//! where it is the empty list.

use crate::core::kind::contract::Table;
use crate::error::{Error, Result};
use arrow_array::builder::{Int64Builder, ListBuilder, StringBuilder};
use arrow_array::{
    ArrayRef, BooleanArray, Float64Array, Int64Array, RecordBatch, StringArray, TimestampMicrosecondArray,
};
use arrow_schema::{DataType, Field, Schema, TimeUnit};
use parquet::arrow::ArrowWriter;
use parquet::basic::Compression;
use parquet::file::properties::WriterProperties;
use std::borrow::Cow;
use std::sync::Arc;

/// Rows per Parquet row group (and per batch held in memory while writing).
const ROW_GROUP: usize = 16_384;

/// What a column holds.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum ColumnType {
    /// Text.
    Text,
    /// A whole number.
    Integer,
    /// A floating-point number (`null` and empty are null).
    Float,
    /// `true` or `false`.
    Boolean,
    /// A moment in RFC 3339, kept in microseconds, UTC.
    Timestamp,
    /// A list of texts, written in the cell joined by the separator.
    TextList(&'static str),
    /// A list of whole numbers, written in the cell joined by the separator.
    IntegerList(&'static str),
    /// A JSON document kept as its text.
    Json,
}

impl ColumnType {
    /// The Arrow type the column is written as.
    fn arrow(self) -> DataType {
        match self {
            Self::Text | Self::Json => DataType::Utf8,
            Self::Integer => DataType::Int64,
            Self::Float => DataType::Float64,
            Self::Boolean => DataType::Boolean,
            Self::Timestamp => DataType::Timestamp(TimeUnit::Microsecond, Some("UTC".into())),
            Self::TextList(_) => DataType::List(Arc::new(Field::new("item", DataType::Utf8, true))),
            Self::IntegerList(_) => DataType::List(Arc::new(Field::new("item", DataType::Int64, true))),
        }
    }

    /// The schema.org type Croissant gives the column (of each element, for lists).
    pub fn croissant(self) -> &'static str {
        match self {
            Self::Text | Self::Json | Self::TextList(_) => "sc:Text",
            Self::Integer | Self::IntegerList(_) => "sc:Integer",
            Self::Float => "sc:Float",
            Self::Boolean => "sc:Boolean",
            Self::Timestamp => "sc:DateTime",
        }
    }

    /// The type in words, for the dataset card.
    pub fn describe(self) -> &'static str {
        match self {
            Self::Text => "text",
            Self::Integer => "integer",
            Self::Float => "float",
            Self::Boolean => "boolean",
            Self::Timestamp => "timestamp (UTC)",
            Self::TextList(_) => "list of text",
            Self::IntegerList(_) => "list of integers",
            Self::Json => "JSON text",
        }
    }

    /// Whether a cell holds a list.
    pub fn is_list(self) -> bool {
        matches!(self, Self::TextList(_) | Self::IntegerList(_))
    }
}

/// One declared column.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Column {
    /// Its name (the CSV header's).
    pub name: Cow<'static, str>,
    /// Its type.
    pub ty: ColumnType,
    /// What it holds, for the dataset card and Croissant.
    pub description: &'static str,
}

/// Declares a column.
pub const fn column(name: &'static str, ty: ColumnType, description: &'static str) -> Column {
    Column { name: Cow::Borrowed(name), ty, description }
}

/// A table a release publishes as Parquet (and describes in Croissant).
#[derive(Debug, Clone)]
pub struct ReleaseTable {
    /// Its name: the file `data/<name>.parquet`, the dataset config and the record set.
    pub name: &'static str,
    /// What one row is.
    pub description: &'static str,
    /// The columns, in order.
    pub columns: Vec<Column>,
    /// The columns that identify a row.
    pub key: Vec<&'static str>,
    /// Columns that name a row of another table: (column, table, its column).
    pub references: Vec<(&'static str, &'static str, &'static str)>,
    /// The rows, or where they come from.
    pub rows: Rows,
}

/// A [`ReleaseTable`]'s rows.
#[derive(Debug, Clone)]
pub enum Rows {
    /// Held, as text cells in the columns' order (moved out when written).
    Held(Vec<Vec<String>>),
    /// Read from the ground truth as the file is written, never held all at
    /// once ([`ReleaseTable::from_aggregate`]).
    FromAggregate(RowReader),
}

/// Reads a table's rows out of the ground truth's compact JSON text, one
/// at a time, into the function given (a text that is not a ground truth of
/// the kind gives no rows).
pub type RowReader = fn(&[u8], &mut dyn FnMut(Vec<String>));

impl ReleaseTable {
    /// The table from an export's [`Table`]: the declared columns that its
    /// header has, in the header's order. A header column without a
    /// declaration is an error (a table would lose it silently).
    pub fn from_export(
        name: &'static str,
        description: &'static str,
        declared: &[Column],
        key: &[&'static str],
        table: Table,
    ) -> Result<Self> {
        // An export with no rows may have no header either: all declared columns, no rows.
        if table.header.is_empty() {
            return Ok(Self::new(name, description, declared.to_vec(), key, Vec::new()));
        }
        let columns = table
            .header
            .iter()
            .map(|h| {
                declared.iter().find(|c| c.name == h.as_str()).cloned().ok_or_else(|| {
                    Error::unexpected(format!("release table `{name}`: column `{h}` has no declared type"))
                })
            })
            .collect::<Result<Vec<_>>>()?;
        Ok(Self::new(name, description, columns, key, table.rows))
    }

    /// An export's [`Table`] with every column as text.
    pub fn text(name: &'static str, description: &'static str, table: Table) -> Self {
        let columns = table
            .header
            .iter()
            .map(|h| Column { name: Cow::Owned(h.clone()), ty: ColumnType::Text, description: "" })
            .collect();
        Self::new(name, description, columns, &[], table.rows)
    }

    /// A table from its parts, referencing nothing.
    pub fn new(
        name: &'static str,
        description: &'static str,
        columns: Vec<Column>,
        key: &[&'static str],
        rows: Vec<Vec<String>>,
    ) -> Self {
        let key = key.iter().copied().filter(|k| columns.iter().any(|c| c.name == *k)).collect();
        Self { name, description, columns, key, references: Vec::new(), rows: Rows::Held(rows) }
    }

    /// A table whose rows `reader` reads out of the ground truth while its
    /// file is written, never held all at once.
    pub fn from_aggregate(
        name: &'static str,
        description: &'static str,
        columns: Vec<Column>,
        key: &[&'static str],
        reader: RowReader,
    ) -> Self {
        Self { rows: Rows::FromAggregate(reader), ..Self::new(name, description, columns, key, Vec::new()) }
    }

    /// The Parquet file of the table and its number of rows, each row passed
    /// through `each` (with the columns) on its way: held rows are moved
    /// into the file as it is written, others read from `aggregate` (the
    /// table keeps its columns, not its rows).
    pub fn take_parquet(
        &mut self,
        aggregate: &[u8],
        each: &mut dyn FnMut(&[Column], &mut [String]),
    ) -> Result<(Vec<u8>, usize)> {
        let rows = std::mem::replace(&mut self.rows, Rows::Held(Vec::new()));
        let mut writer = ParquetTable::new(self.name, &self.columns)?;
        let mut failed = None;
        let mut add = |mut row: Vec<String>| {
            if failed.is_none() {
                each(&self.columns, &mut row);
                failed = writer.row(row).err();
            }
        };
        match rows {
            Rows::Held(rows) => rows.into_iter().for_each(&mut add),
            Rows::FromAggregate(reader) => {
                reader(aggregate, &mut add);
                self.rows = Rows::FromAggregate(reader);
            }
        }
        if let Some(e) = failed {
            return Err(e);
        }
        let rows = writer.rows();
        Ok((writer.finish()?, rows))
    }
}

/// Writes a table's rows into Parquet as they come, a row group at a time:
/// memory holds one group, however long the table.
pub struct ParquetTable<'a> {
    name: &'a str,
    columns: &'a [Column],
    schema: Arc<Schema>,
    writer: ArrowWriter<Vec<u8>>,
    pending: Vec<Vec<String>>,
    written: usize,
}

impl<'a> ParquetTable<'a> {
    /// Starts the file.
    pub fn new(name: &'a str, columns: &'a [Column]) -> Result<Self> {
        let fields: Vec<Field> = columns.iter().map(|c| Field::new(c.name.as_ref(), c.ty.arrow(), true)).collect();
        let schema = Arc::new(Schema::new(fields));
        let props = WriterProperties::builder()
            .set_compression(Compression::SNAPPY)
            .set_max_row_group_row_count(Some(ROW_GROUP))
            .build();
        let writer = ArrowWriter::try_new(Vec::new(), schema.clone(), Some(props)).map_err(parquet_error)?;
        Ok(Self { name, columns, schema, writer, pending: Vec::with_capacity(ROW_GROUP), written: 0 })
    }

    /// Adds one row (text cells in the columns' order).
    pub fn row(&mut self, cells: Vec<String>) -> Result<()> {
        if cells.len() != self.columns.len() {
            return Err(Error::unexpected(format!(
                "release table `{}` row {}: {} cells for {} columns",
                self.name,
                self.written + self.pending.len() + 1,
                cells.len(),
                self.columns.len()
            )));
        }
        self.pending.push(cells);
        if self.pending.len() == ROW_GROUP {
            self.flush()?;
        }
        Ok(())
    }

    /// Rows added so far.
    pub fn rows(&self) -> usize {
        self.written + self.pending.len()
    }

    /// Writes the rows held as one row group.
    fn flush(&mut self) -> Result<()> {
        if self.pending.is_empty() {
            return Ok(());
        }
        let arrays =
            self.columns.iter().enumerate().map(|(i, c)| self.array(i, c)).collect::<Result<Vec<ArrayRef>>>()?;
        let batch = RecordBatch::try_new(self.schema.clone(), arrays)
            .map_err(|e| Error::internal(format!("release table `{}`", self.name), e))?;
        self.writer.write(&batch).map_err(parquet_error)?;
        self.writer.flush().map_err(parquet_error)?;
        self.written += self.pending.len();
        self.pending.clear();
        Ok(())
    }

    /// Column `i` of the rows held, parsed into its type.
    fn array(&self, i: usize, column: &Column) -> Result<ArrayRef> {
        let cells = self.pending.iter().map(|row| row[i].as_str()).map(|cell| {
            // Spreadsheet-safe text cells carry a leading `'` only in CSV; rows here are raw.
            (!cell.is_empty()).then_some(cell)
        });
        let bad = |n: usize, cell: &str, what: &str| {
            Error::unexpected(format!(
                "release table `{}` column `{}` row {}: `{cell}` is not {what}",
                self.name,
                column.name,
                self.written + n + 1
            ))
        };
        let parsed = |what: &str, parse: &dyn Fn(&str) -> Option<i64>| -> Result<Vec<Option<i64>>> {
            cells
                .clone()
                .enumerate()
                .map(|(n, c)| c.map(|c| parse(c).ok_or_else(|| bad(n, c, what))).transpose())
                .collect()
        };
        Ok(match column.ty {
            ColumnType::Text | ColumnType::Json => Arc::new(cells.collect::<StringArray>()),
            ColumnType::Integer => Arc::new(Int64Array::from(parsed("a whole number", &|c| c.parse().ok())?)),
            ColumnType::Timestamp => Arc::new(
                TimestampMicrosecondArray::from(parsed("an RFC 3339 time", &|c| {
                    chrono::DateTime::parse_from_rfc3339(c).ok().map(|t| t.timestamp_micros())
                })?)
                .with_timezone("UTC"),
            ),
            ColumnType::Float => Arc::new(
                cells
                    .enumerate()
                    .map(|(n, c)| match c {
                        None | Some("null") => Ok(None),
                        Some(c) => c.parse::<f64>().map(Some).map_err(|_| bad(n, c, "a number")),
                    })
                    .collect::<Result<Float64Array>>()?,
            ),
            ColumnType::Boolean => Arc::new(
                cells
                    .enumerate()
                    .map(|(n, c)| match c {
                        None => Ok(None),
                        Some("true") => Ok(Some(true)),
                        Some("false") => Ok(Some(false)),
                        Some(c) => Err(bad(n, c, "true or false")),
                    })
                    .collect::<Result<BooleanArray>>()?,
            ),
            ColumnType::TextList(separator) => {
                let mut list = ListBuilder::new(StringBuilder::new());
                for c in cells {
                    match c {
                        None => list.append(true),
                        Some(c) => {
                            c.split(separator).for_each(|v| list.values().append_value(v));
                            list.append(true);
                        }
                    }
                }
                Arc::new(list.finish())
            }
            ColumnType::IntegerList(separator) => {
                let mut list = ListBuilder::new(Int64Builder::new());
                for (n, c) in cells.enumerate() {
                    if let Some(c) = c {
                        for v in c.split(separator) {
                            list.values().append_value(v.parse().map_err(|_| bad(n, c, "whole numbers"))?);
                        }
                    }
                    list.append(true);
                }
                Arc::new(list.finish())
            }
        })
    }

    /// Writes the last row group and the footer.
    pub fn finish(mut self) -> Result<Vec<u8>> {
        self.flush()?;
        self.writer.into_inner().map_err(parquet_error)
    }
}

fn parquet_error(e: parquet::errors::ParquetError) -> Error {
    Error::internal("writing Parquet", e)
}

/// A Parquet file written, with what Croissant and the card say about it.
pub struct Written {
    /// The table (its rows dropped once written).
    pub table: ReleaseTable,
    /// Rows written.
    pub rows: usize,
    /// The file's SHA-256, hex.
    pub sha256: String,
}

impl Written {
    /// The file's path inside the folder.
    pub fn path(&self) -> String {
        format!("data/{}.parquet", self.table.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use parquet::file::reader::{FileReader, SerializedFileReader};

    const COLUMNS: [Column; 5] = [
        column("id", ColumnType::Text, "id"),
        column("n", ColumnType::Integer, "count"),
        column("share", ColumnType::Float, "share"),
        column("tags", ColumnType::TextList(" "), "tags"),
        column("at", ColumnType::Timestamp, "time"),
    ];

    fn row(cells: [&str; 5]) -> Vec<String> {
        cells.map(str::to_owned).to_vec()
    }

    #[test]
    fn cells_are_parsed_into_their_declared_types_and_empty_is_null() {
        let mut table = ReleaseTable::new(
            "t",
            "t",
            COLUMNS.to_vec(),
            &["id"],
            vec![row(["a", "3", "0.25", "x y", "2026-11-27T15:00:00.123456Z"]), row(["", "", "null", "", ""])],
        );
        let (bytes, rows) = table.take_parquet(b"", &mut |_, _| {}).expect("written");
        assert_eq!(rows, 2);
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("a Parquet file");
        assert_eq!(reader.metadata().file_metadata().num_rows(), 2);
        let rows: Vec<String> = reader.get_row_iter(None).expect("rows").map(|r| r.expect("row").to_string()).collect();
        assert_eq!(
            rows[0],
            "{id: \"a\", n: 3, share: 0.25, tags: [\"x\", \"y\"], at: 2026-11-27 15:00:00.123456 +00:00}"
        );
        assert_eq!(rows[1], "{id: null, n: null, share: null, tags: [], at: null}");
    }

    #[test]
    fn a_cell_that_is_not_its_type_names_table_column_and_row() {
        let mut table = ReleaseTable::new("t", "t", COLUMNS.to_vec(), &[], vec![row(["a", "3.5", "", "", ""])]);
        let e = table.take_parquet(b"", &mut |_, _| {}).expect_err("refused").to_string();
        assert!(e.contains("`t` column `n` row 1: `3.5` is not a whole number"), "{e}");
    }

    #[test]
    fn an_export_column_without_a_declaration_is_refused() {
        let export = Table { header: vec!["id".into(), "other".into()], rows: vec![] };
        let e = ReleaseTable::from_export("t", "t", &COLUMNS, &["id"], export).expect_err("refused");
        assert!(e.to_string().contains("column `other` has no declared type"), "{e}");
    }

    #[test]
    fn many_rows_are_written_in_row_groups() {
        let rows: Vec<Vec<String>> =
            (0..ROW_GROUP + 5).map(|i| row([&i.to_string(), "1", "1", "a", "2026-01-01T00:00:00Z"])).collect();
        let (bytes, n) = ReleaseTable::new("t", "t", COLUMNS.to_vec(), &[], rows)
            .take_parquet(b"", &mut |_, _| {})
            .expect("written");
        let reader = SerializedFileReader::new(bytes::Bytes::from(bytes)).expect("a Parquet file");
        assert_eq!(reader.metadata().num_row_groups(), 2);
        assert_eq!(reader.metadata().file_metadata().num_rows() as usize, ROW_GROUP + 5);
        assert_eq!(n, ROW_GROUP + 5);
    }

    /// A row per line of the text, its first cell the line.
    fn line_rows(text: &[u8], each: &mut dyn FnMut(Vec<String>)) {
        for line in String::from_utf8_lossy(text).lines() {
            each(row([line, "1", "0.5", "a", "2026-01-01T00:00:00Z"]));
        }
    }

    #[test]
    fn a_table_read_from_the_ground_truth_is_the_same_file_as_one_held_whole() {
        let text = b"first\nsecond\nthird";
        let mut held = Vec::new();
        line_rows(text, &mut |r| held.push(r));
        let mut read = ReleaseTable::from_aggregate("t", "t", COLUMNS.to_vec(), &["id"], line_rows);
        let mut whole = ReleaseTable::new("t", "t", COLUMNS.to_vec(), &["id"], held);
        let upper = |_: &[Column], row: &mut [String]| row[0] = row[0].to_uppercase();
        let (read_bytes, read_rows) = read.take_parquet(text, &mut |c, r| upper(c, r)).expect("written");
        let (whole_bytes, whole_rows) = whole.take_parquet(b"", &mut |c, r| upper(c, r)).expect("written");
        assert_eq!((read_bytes.as_slice(), read_rows), (whole_bytes.as_slice(), 3));
        assert_eq!(whole_rows, 3);
        let reader = SerializedFileReader::new(bytes::Bytes::from(read_bytes)).expect("a Parquet file");
        let first = reader.get_row_iter(None).expect("rows").next().expect("a row").expect("row").to_string();
        assert!(first.starts_with("{id: \"FIRST\""), "each row passed through `each`: {first}");
    }
}
