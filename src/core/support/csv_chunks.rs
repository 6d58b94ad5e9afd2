//! CSV written row by row into any writer, spreadsheet formulas neutralised
//! (as a ground-truth table's `to_csv` does): into a list of chunks for a
//! streamed response (a big export never needs one contiguous buffer, nor
//! the copies a growing buffer makes), or into a release file as it is
//! packed.

use bytes::Bytes;

/// Bytes per chunk (a chunk is closed once it holds this much).
const CHUNK: usize = 1 << 20;

/// The chunks written so far and the one being filled.
#[derive(Default)]
pub struct Chunks {
    done: Vec<Bytes>,
    current: Vec<u8>,
}

impl std::io::Write for Chunks {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        if self.current.capacity() == 0 {
            self.current.reserve_exact(CHUNK + bytes.len());
        }
        self.current.extend_from_slice(bytes);
        if self.current.len() >= CHUNK {
            self.done.push(Bytes::from(std::mem::take(&mut self.current)));
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A CSV document being written row by row.
pub struct CsvRows<W: std::io::Write> {
    writer: csv::Writer<W>,
    /// The first failure; later rows are skipped.
    failed: Option<csv::Error>,
}

/// CSV written into chunks (see [`Chunks`]).
pub type CsvChunks = CsvRows<Chunks>;

impl Default for CsvChunks {
    fn default() -> Self {
        Self::new(Chunks::default())
    }
}

impl CsvChunks {
    /// The document's chunks, in order.
    pub fn chunks(self) -> crate::error::Result<Vec<Bytes>> {
        let mut chunks = self.finish()?;
        if !chunks.current.is_empty() {
            chunks.done.push(Bytes::from(chunks.current));
        }
        Ok(chunks.done)
    }
}

impl<W: std::io::Write> CsvRows<W> {
    /// A document written into `out`.
    pub fn new(out: W) -> Self {
        Self { writer: csv::Writer::from_writer(out), failed: None }
    }

    /// Appends one row.
    pub fn row(&mut self, cells: &[String]) {
        if self.failed.is_some() {
            return;
        }
        let written = cells
            .iter()
            .try_for_each(|cell| self.writer.write_field(neutralise_formula(cell).as_bytes()))
            .and_then(|()| self.writer.write_record(None::<&[u8]>));
        if let Err(e) = written {
            self.failed = Some(e);
        }
    }

    /// The writer, everything written into it.
    pub fn finish(self) -> crate::error::Result<W> {
        let internal = |e: String| crate::error::Error::internal("writing CSV", e);
        if let Some(e) = self.failed {
            return Err(internal(e.to_string()));
        }
        self.writer.into_inner().map_err(|e| internal(e.to_string()))
    }
}

/// A cell a spreadsheet would run as a formula (`=`, `+`, `-`, `@`, tab or
/// carriage return first) gets a leading `'`; numbers stay as they are.
pub fn neutralise_formula(cell: &str) -> std::borrow::Cow<'_, str> {
    let risky = cell.starts_with(['=', '+', '-', '@', '\t', '\r']);
    if risky && cell.parse::<f64>().is_err() {
        std::borrow::Cow::Owned(format!("'{cell}"))
    } else {
        std::borrow::Cow::Borrowed(cell)
    }
}

#[cfg(test)]
mod tests {
    use super::CsvChunks;
    use crate::core::kind::contract::Table;

    #[test]
    fn the_chunks_are_the_same_text_as_the_whole_document() {
        let table = Table {
            header: vec!["image".into(), "note".into()],
            rows: (0..40_000).map(|i| vec![format!("img-{i}"), format!("=cmd{i}, \"quoted\"\nline")]).collect(),
        };
        let mut csv = CsvChunks::default();
        csv.row(&table.header);
        table.rows.iter().for_each(|r| csv.row(r));
        let chunks = csv.chunks().expect("written");
        assert!(chunks.len() > 1, "a document over a MB comes in several chunks");
        let joined: Vec<u8> = chunks.iter().flat_map(|c| c.iter().copied()).collect();
        let whole = table.to_csv().expect("csv");
        assert_eq!(String::from_utf8(joined).expect("utf-8"), whole);
        assert!(whole.contains("\"'=cmd7, \"\"quoted\"\"\nline\""));
    }
}
