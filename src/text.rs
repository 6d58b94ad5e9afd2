//! Text as people's files bring it. Windows editors and spreadsheet programs
//! often start UTF-8 files with a byte order mark, which JSON parsers refuse
//! and which would make a CSV header's first column "\u{feff}id". Every
//! place where a file or a request body becomes text goes through here.

use std::path::Path;

/// The UTF-8 byte order mark.
const BOM: &str = "\u{feff}";

/// `text` without a leading byte order mark.
pub fn without_bom(text: &str) -> &str {
    text.strip_prefix(BOM).unwrap_or(text)
}

/// `bytes` without a leading UTF-8 byte order mark.
pub fn bytes_without_bom(bytes: &[u8]) -> &[u8] {
    bytes.strip_prefix(BOM.as_bytes()).unwrap_or(bytes)
}

/// A file's text, without a leading byte order mark.
pub fn read_file(path: &Path) -> std::io::Result<String> {
    let mut text = std::fs::read_to_string(path)?;
    if text.starts_with(BOM) {
        text.drain(..BOM.len());
    }
    Ok(text)
}

/// A file opened for streaming reads, past a leading byte order mark.
pub fn open_file(path: &Path) -> std::io::Result<std::io::BufReader<std::fs::File>> {
    use std::io::BufRead;
    let mut reader = std::io::BufReader::new(std::fs::File::open(path)?);
    if reader.fill_buf()?.starts_with(BOM.as_bytes()) {
        reader.consume(BOM.len());
    }
    Ok(reader)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_a_leading_mark_goes() {
        assert_eq!(without_bom("\u{feff}id,x"), "id,x");
        assert_eq!(without_bom("id,\u{feff}x"), "id,\u{feff}x");
        assert_eq!(bytes_without_bom(b"\xef\xbb\xbf{}"), b"{}");
        assert_eq!(bytes_without_bom(b"{}"), b"{}");
        let dir = tempfile::tempdir().expect("tempdir");
        let path = dir.path().join("bom.json");
        std::fs::write(&path, "\u{feff}[1]").expect("write");
        assert_eq!(read_file(&path).expect("read"), "[1]");
        let mut streamed = String::new();
        std::io::Read::read_to_string(&mut open_file(&path).expect("open"), &mut streamed).expect("read");
        assert_eq!(streamed, "[1]");
    }
}
