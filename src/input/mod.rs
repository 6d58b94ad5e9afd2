//! Reading the CSV files researchers hand to the command line, with errors
//! that name the file, the line and the field.

pub mod retrieval;
pub mod score_set;

use std::path::{Path, PathBuf};

/// A problem with an input file, located precisely enough to fix it.
#[derive(Debug, thiserror::Error)]
pub enum InputError {
    /// The file could not be opened or read (the reason is the source, which
    /// the command line prints after this).
    #[error("{path}: cannot be read")]
    Io {
        /// The file.
        path: PathBuf,
        /// The underlying error.
        source: std::io::Error,
    },
    /// A line (1-based) is malformed.
    #[error("{path}:{line}: {message}")]
    Line {
        /// The file.
        path: PathBuf,
        /// 1-based line number.
        line: u64,
        /// What is wrong, naming the field.
        message: String,
    },
    /// The file as a whole is unusable (e.g. a missing column).
    #[error("{path}: {message}")]
    File {
        /// The file.
        path: PathBuf,
        /// What is wrong.
        message: String,
    },
}

/// A CSV file being read, remembering its path for error messages.
pub struct CsvFile {
    path: PathBuf,
    reader: csv::Reader<std::fs::File>,
}

impl CsvFile {
    /// Opens a CSV file without header handling: every line is a record and
    /// rows may have different lengths (callers check).
    pub fn open(path: &Path) -> Result<Self, InputError> {
        let file = std::fs::File::open(path).map_err(|source| InputError::Io { path: path.to_owned(), source })?;
        let reader =
            csv::ReaderBuilder::new().buffer_capacity(1 << 16).has_headers(false).flexible(true).from_reader(file);
        Ok(Self { path: path.to_owned(), reader })
    }

    /// An error about a given line.
    pub fn line_error(&self, line: u64, message: impl Into<String>) -> InputError {
        InputError::Line { path: self.path.clone(), line, message: message.into() }
    }

    /// An error about the whole file.
    pub fn file_error(&self, message: impl Into<String>) -> InputError {
        InputError::File { path: self.path.clone(), message: message.into() }
    }

    /// Calls `f` with each non-empty record and its 1-based line number.
    pub fn for_each<F>(&mut self, mut f: F) -> Result<(), InputError>
    where
        F: FnMut(u64, &csv::ByteRecord) -> Result<(), InputError>,
    {
        let mut record = csv::ByteRecord::new();
        loop {
            let more = self.reader.read_byte_record(&mut record).map_err(|e| {
                let line = e.position().map_or(0, |p| p.line());
                InputError::Line { path: self.path.clone(), line, message: e.to_string() }
            })?;
            if !more {
                return Ok(());
            }
            let line = record.position().map_or(0, |p| p.line());
            if record.len() == 1 && record[0].is_empty() {
                continue;
            }
            f(line, &record)?;
        }
    }

    /// Reads a file whose first line is a header that must contain `columns`;
    /// calls `f` with each data line and the fields in the order of `columns`.
    pub fn for_each_with_header<F>(&mut self, columns: &[&str], f: F) -> Result<(), InputError>
    where
        F: FnMut(u64, &[&str]) -> Result<(), InputError>,
    {
        self.for_each_with_optional(columns, &[], f)
    }

    /// Like [`for_each_with_header`](Self::for_each_with_header), with
    /// optional columns after the required ones: an absent optional column
    /// reads as empty fields.
    pub fn for_each_with_optional<F>(&mut self, columns: &[&str], optional: &[&str], mut f: F) -> Result<(), InputError>
    where
        F: FnMut(u64, &[&str]) -> Result<(), InputError>,
    {
        let mut positions: Option<Vec<Option<usize>>> = None;
        let path = self.path.clone();
        let names: Vec<&str> = columns.iter().chain(optional).copied().collect();
        self.for_each(|line, record| {
            let Some(pos) = &positions else {
                let header: Vec<String> =
                    record.iter().map(|h| String::from_utf8_lossy(h).trim().to_ascii_lowercase()).collect();
                let mut found = Vec::with_capacity(names.len());
                for col in columns {
                    match header.iter().position(|h| h == col) {
                        Some(p) => found.push(Some(p)),
                        None => {
                            return Err(InputError::Line {
                                path: path.clone(),
                                line,
                                message: format!("header has no column `{col}` (expected {})", columns.join(",")),
                            })
                        }
                    }
                }
                found.extend(optional.iter().map(|col| header.iter().position(|h| h == col)));
                positions = Some(found);
                return Ok(());
            };
            let mut fields: Vec<&str> = Vec::with_capacity(names.len());
            for (i, p) in pos.iter().enumerate() {
                let Some(p) = *p else {
                    fields.push("");
                    continue;
                };
                let raw = record.get(p).ok_or_else(|| InputError::Line {
                    path: path.clone(),
                    line,
                    message: format!("missing field `{}`", names[i]),
                })?;
                let text = std::str::from_utf8(raw).map_err(|_| InputError::Line {
                    path: path.clone(),
                    line,
                    message: format!("field `{}` is not valid UTF-8", names[i]),
                })?;
                fields.push(text.trim());
            }
            f(line, &fields)
        })?;
        if positions.is_none() {
            return Err(self.file_error(format!("empty file: expected a header `{}`", columns.join(","))));
        }
        Ok(())
    }
}
