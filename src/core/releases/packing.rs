//! The `.tar.gz` that holds a release's files. Each file is compressed once,
//! as it is written, into raw deflate segments of its own (its tar header,
//! then its content) that end on a sync flush: byte-aligned and not final,
//! so segments put end to end are one deflate stream, as `pigz` makes them.
//! The archive is one gzip member around them, its CRC-32 combined from the
//! segments'. So the manifest, which goes first but is known last, takes its
//! place without the other files being held uncompressed or compressed twice,
//! and every gzip reader (streaming ones too) reads one ordinary `.tar.gz`.

use crate::core::releases::archive::WriteFile;
use crate::error::{Error, Result};
use flate2::write::DeflateEncoder;
use flate2::{Compression, Crc, CrcWriter};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// A tar block: headers are one, contents are padded to whole ones.
const BLOCK: u64 = 512;

/// One file of an archive, compressed: its tar header and its content (with
/// the padding tar wants) as deflate segments, ready to be put end to end.
pub struct Packed {
    /// Its name inside the archive.
    pub name: String,
    /// Its length.
    pub size: u64,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// The header's segment, then the content's.
    segments: [Spooled; 2],
    /// The CRC-32 and length of what the segments hold, uncompressed.
    crc: Crc,
}

impl Packed {
    /// Hashes and compresses one file held whole.
    pub fn new(root: &str, name: String, mtime: u64, bytes: &[u8]) -> Result<Self> {
        Self::written(root, name, mtime, &mut |out| out.write_all(bytes).map_err(packing))
    }

    /// The file `write` writes under the directory `root`, hashed and
    /// compressed as it is written.
    pub fn written(root: &str, name: String, mtime: u64, write: WriteFile<'_>) -> Result<Self> {
        let mut file = FileWriter { size: 0, sha256: Sha256::new(), content: segment() };
        {
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut file);
            write(&mut buffered)?;
            buffered.flush().map_err(packing)?;
        }
        let padding = (BLOCK - file.size % BLOCK) % BLOCK;
        file.content.write_all(&vec![0; padding as usize]).map_err(packing)?;
        let mut header = segment();
        header
            .write_all(crate::core::releases::packing::header(&format!("{root}/{name}"), file.size, mtime)?.as_bytes())
            .map_err(packing)?;
        let mut crc = Crc::new();
        let header = flushed(header, &mut crc).map_err(packing)?;
        let content = flushed(file.content, &mut crc).map_err(packing)?;
        let sha256 = hex::encode(file.sha256.finalize());
        Ok(Self { name, size: file.size, sha256, segments: [header, content], crc })
    }
}

/// The tar header of a regular file (GNU format, as `tar::Builder` writes one).
fn header(path: &str, size: u64, mtime: u64) -> Result<tar::Header> {
    let mut header = tar::Header::new_gnu();
    header.set_path(path).map_err(packing)?;
    header.set_size(size);
    header.set_mode(0o644);
    header.set_mtime(mtime);
    header.set_entry_type(tar::EntryType::Regular);
    header.set_cksum();
    Ok(header)
}

/// How hard the archive is compressed: one below gzip's default, which
/// costs a cut markedly more time for an archive hardly smaller.
const LEVEL: u32 = 5;

/// A raw deflate segment being written (at [`LEVEL`]), with the CRC-32 and
/// length of what went in.
type Segment = CrcWriter<DeflateEncoder<Spool>>;

fn segment() -> Segment {
    CrcWriter::new(DeflateEncoder::new(Spool::default(), Compression::new(LEVEL)))
}

/// A segment's bytes ended on a sync flush (more segments follow), its
/// CRC-32 and length added to `crc`.
fn flushed(mut segment: Segment, crc: &mut Crc) -> std::io::Result<Spooled> {
    crc.combine(segment.crc());
    let deflate = segment.get_mut();
    deflate.flush()?;
    // The encoder, dropped, finishes into the emptied spool: nothing reads it.
    std::mem::take(deflate.get_mut()).finish()
}

/// Compressed bytes up to this size stay in memory; a segment that grows
/// past it goes on in a temporary file.
const SPILL_AT: usize = 1 << 20;

/// Where a segment's compressed bytes go as they are made: memory, then,
/// past [`SPILL_AT`], an unnamed temporary file. A cut at crowd scale makes
/// about 30 MB of them while its snapshot and ground truth are held; on
/// disk they are not part of the service's peak, and are read back only
/// when the archive is joined, after the snapshot is gone.
enum Spool {
    /// Held.
    Memory(Vec<u8>),
    /// In a temporary file (deleted when closed), written through a buffer.
    File(std::io::BufWriter<std::fs::File>),
}

impl Default for Spool {
    fn default() -> Self {
        Self::Memory(Vec::new())
    }
}

impl Write for Spool {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        match self {
            Self::Memory(held) if held.len() + bytes.len() > SPILL_AT => {
                let mut file = std::io::BufWriter::with_capacity(1 << 16, tempfile::tempfile()?);
                file.write_all(held)?;
                file.write_all(bytes)?;
                *self = Self::File(file);
            }
            Self::Memory(held) => held.extend_from_slice(bytes),
            Self::File(file) => file.write_all(bytes)?,
        }
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        match self {
            Self::Memory(_) => Ok(()),
            Self::File(file) => file.flush(),
        }
    }
}

impl Spool {
    /// What was written, to be read back once.
    fn finish(self) -> std::io::Result<Spooled> {
        match self {
            Self::Memory(mut held) => {
                held.shrink_to_fit();
                Ok(Spooled::Memory(held))
            }
            Self::File(file) => {
                let mut file = file.into_inner().map_err(|e| e.into_error())?;
                let len = std::io::Seek::stream_position(&mut file)?;
                Ok(Spooled::File(file, len))
            }
        }
    }
}

/// A finished segment's compressed bytes, held or in a temporary file.
enum Spooled {
    /// Held.
    Memory(Vec<u8>),
    /// In a temporary file, this many bytes.
    File(std::fs::File, u64),
}

impl Spooled {
    /// How many bytes.
    fn len(&self) -> usize {
        match self {
            Self::Memory(held) => held.len(),
            Self::File(_, len) => usize::try_from(*len).unwrap_or(usize::MAX),
        }
    }

    /// Appends the bytes to `out` (the file is closed, and so deleted).
    fn append_to(self, out: &mut Vec<u8>) -> std::io::Result<()> {
        match self {
            Self::Memory(held) => out.extend_from_slice(&held),
            Self::File(mut file, len) => {
                std::io::Seek::rewind(&mut file)?;
                let read = file.take(len).read_to_end(out)?;
                if read as u64 != len {
                    return Err(std::io::Error::new(std::io::ErrorKind::UnexpectedEof, "a packed file was cut short"));
                }
            }
        }
        Ok(())
    }
}

/// Where [`Packed::written`] writes: counts, hashes and compresses.
struct FileWriter {
    size: u64,
    sha256: Sha256,
    content: Segment,
}

impl Write for FileWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.content.write_all(bytes)?;
        self.sha256.update(bytes);
        self.size += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A failed write while packing, as the core's error.
pub(in crate::core) fn packing(e: std::io::Error) -> Error {
    Error::internal("packing the release", e)
}

/// Packs files held whole into a `.tar.gz` under the directory `root`.
pub fn pack(root: &str, files: &[(String, Vec<u8>)], mtime: u64) -> Result<Vec<u8>> {
    let packed: Result<Vec<Packed>> =
        files.iter().map(|(name, bytes)| Packed::new(root, name.clone(), mtime, bytes)).collect();
    join(packed?)
}

/// The `.tar.gz` of files packed in this order: a gzip header (RFC 1952),
/// their segments end to end, tar's end of archive (two zero blocks) as the
/// final segment, and the trailer (the CRC-32 and length of the whole tar
/// stream). Each file's segments are let go as they are copied.
pub fn join(files: Vec<Packed>) -> Result<Vec<u8>> {
    let mut end = segment();
    end.write_all(&[0; 2 * BLOCK as usize]).map_err(packing)?;
    let compressed: usize = files.iter().flat_map(|f| f.segments.iter().map(Spooled::len)).sum();
    let mut archive = Vec::with_capacity(GZIP_HEADER.len() + compressed + 1024);
    archive.extend_from_slice(&GZIP_HEADER);
    let mut crc = Crc::new();
    for file in files {
        crc.combine(&file.crc);
        for segment in file.segments {
            segment.append_to(&mut archive).map_err(packing)?;
        }
    }
    crc.combine(end.crc());
    end.into_inner().finish().and_then(|spool| spool.finish()?.append_to(&mut archive)).map_err(packing)?;
    // The trailer: CRC-32, and the length modulo 2^32 (RFC 1952 §2.3.1: `Crc` wraps).
    archive.extend_from_slice(&crc.sum().to_le_bytes());
    archive.extend_from_slice(&crc.amount().to_le_bytes());
    Ok(archive)
}

/// A gzip member's header: the magic, deflate, no flags, no time, no extra
/// flags, an unknown system (as flate2's `GzEncoder` writes it).
const GZIP_HEADER: [u8; 10] = [0x1f, 0x8b, 8, 0, 0, 0, 0, 0, 0, 255];

/// The most a manifest (or its digest, or a file read before the manifest)
/// may hold: a 30,000-item campaign's manifest is a few kilobytes.
pub const MANIFEST_LIMIT: u64 = 64 * 1024 * 1024;

/// Calls `each` with every file of a `.tar.gz` as it streams in: its name
/// (without the top directory) and its content to read.
///
/// An archive is hostile until checked: every entry's size (from its tar
/// header, before a byte of it is read) must be at most the manifest's
/// size for it, and the manifest itself (always the first file) at most
/// [`MANIFEST_LIMIT`]; a larger entry is refused as damaged, so a gzip bomb
/// is stopped at its header, in bounded memory.
fn each_file(
    archive: impl Read,
    mut each: impl FnMut(String, &mut dyn Read) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut sizes: Option<std::collections::HashMap<String, u64>> = None;
    for entry in tar.entries().map_err(|e| format!("not a release archive: {e}"))? {
        let mut entry = entry.map_err(|e| format!("not a release archive: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let name = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest).to_owned();
        let is_manifest =
            name == crate::core::releases::archive::MANIFEST || name == crate::core::releases::archive::MANIFEST_DIGEST;
        // A file the manifest does not list (verification names it) is held to the manifest's cap.
        let limit = match &sizes {
            Some(sizes) if !is_manifest => sizes.get(&name).copied().unwrap_or(MANIFEST_LIMIT),
            _ => MANIFEST_LIMIT,
        };
        if entry.size() > limit {
            return Err(format!(
                "{name}: {} bytes, more than the {limit} the manifest allows it: the archive is damaged",
                entry.size()
            ));
        }
        if name == crate::core::releases::archive::MANIFEST && sizes.is_none() {
            let mut bytes = Vec::new();
            entry.by_ref().take(limit).read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
            sizes = Some(listed_sizes(&bytes));
            each(name, &mut bytes.as_slice())?;
            continue;
        }
        each(name, &mut entry.by_ref().take(limit))?;
    }
    Ok(())
}

/// The size the manifest gives each file it lists (a manifest that does
/// not parse lists none: every file is then held to [`MANIFEST_LIMIT`]).
fn listed_sizes(manifest: &[u8]) -> std::collections::HashMap<String, u64> {
    #[derive(serde::Deserialize)]
    struct Listed {
        #[serde(default)]
        files: Vec<File>,
    }
    #[derive(serde::Deserialize)]
    struct File {
        name: String,
        size: u64,
    }
    serde_json::from_slice::<Listed>(manifest)
        .map(|l| l.files.into_iter().map(|f| (f.name, f.size)).collect())
        .unwrap_or_default()
}

/// What verification reads of an archive ([`digests`]).
pub struct Streamed {
    /// Every file's size and SHA-256, by name.
    pub digests: crate::core::releases::archive::Digests,
    /// The bytes of the manifest and its digest.
    pub kept: BTreeMap<String, Vec<u8>>,
    /// The raw data, parsed as it streamed past (or what was wrong with it).
    pub snapshot: std::result::Result<crate::core::releases::Snapshot, String>,
}

/// Reads a `.tar.gz` as it streams in, for verification: every file's size
/// and SHA-256, the manifest and its digest, and the raw data parsed line
/// by line; no other file and no raw file's text is ever held whole.
pub fn digests(archive: impl Read) -> std::result::Result<Streamed, String> {
    let (mut digests, mut kept) = (BTreeMap::new(), BTreeMap::new());
    let (mut raw, mut unreadable) = (crate::core::releases::snapshot::RawFiles::default(), None);
    each_file(archive, |name, content| {
        let mut out = crate::core::releases::archive::DigestWriter::default();
        if crate::core::releases::archive::verification_reads(&name) {
            let mut bytes = Vec::new();
            content.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
            std::io::Write::write_all(&mut out, &bytes).map_err(|e| format!("{name}: {e}"))?;
            kept.insert(name.clone(), bytes);
        } else {
            // Hashed as it is read, parsed if it is raw data, the rest read past.
            let mut content = std::io::BufReader::with_capacity(1 << 16, Hashed { content, out: &mut out });
            if crate::core::releases::snapshot::RawFiles::reads(&name) {
                if let Err(e) = raw.read(&name, &mut content) {
                    unreadable.get_or_insert(e);
                }
            }
            std::io::copy(&mut content, &mut std::io::sink()).map_err(|e| format!("{name}: {e}"))?;
        }
        digests.insert(name, out.digest());
        Ok(())
    })?;
    let snapshot = match unreadable {
        Some(e) => Err(e),
        None => raw.snapshot(),
    };
    Ok(Streamed { digests, kept, snapshot })
}

/// A reader that hashes what it reads.
struct Hashed<'a> {
    content: &'a mut dyn Read,
    out: &'a mut crate::core::releases::archive::DigestWriter,
}

impl Read for Hashed<'_> {
    fn read(&mut self, buf: &mut [u8]) -> std::io::Result<usize> {
        let n = self.content.read(buf)?;
        self.out.write_all(&buf[..n])?;
        Ok(n)
    }
}

/// Unpacks a `.tar.gz`: file name (without the top directory) -> bytes.
pub fn unpack(archive: &[u8]) -> std::result::Result<BTreeMap<String, Vec<u8>>, String> {
    unpack_only(archive, |_| true)
}

/// Unpacks the files of a `.tar.gz` that `keep` names; the others stream
/// past without being held.
pub fn unpack_only(
    archive: &[u8],
    keep: impl Fn(&str) -> bool,
) -> std::result::Result<BTreeMap<String, Vec<u8>>, String> {
    let mut files = BTreeMap::new();
    each_file(archive, |name, content| {
        if keep(&name) {
            let mut bytes = Vec::new();
            content.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
            files.insert(name, bytes);
        }
        Ok(())
    })?;
    Ok(files)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::releases::snapshot::write_pretty_json;

    fn files() -> Vec<(String, Vec<u8>)> {
        let big: Vec<u8> = (0..300_000u32).flat_map(|i| format!("row {i},{}\n", i % 7).into_bytes()).collect();
        vec![("manifest.json".into(), b"{}\n".to_vec()), ("raw/a.json".into(), big), ("empty.csv".into(), Vec::new())]
    }

    #[test]
    fn files_packed_one_by_one_make_one_tar_gz_that_a_single_member_reader_reads() {
        let plain = files();
        let packed: Vec<Packed> = plain
            .iter()
            .map(|(n, b)| Packed::new("release-v1", n.clone(), 1_700_000_000, b).expect("packed"))
            .collect();
        for (p, (name, bytes)) in packed.iter().zip(&plain) {
            assert_eq!((&p.name, p.size), (name, bytes.len() as u64));
            assert_eq!(p.sha256, hex::encode(Sha256::digest(bytes)));
        }
        let compressed: usize = packed[1].segments.iter().map(Spooled::len).sum();
        assert!(compressed < plain[1].1.len() / 2, "compressed: {compressed} of {} bytes", plain[1].1.len());
        let archive = join(packed).expect("archive");
        assert_eq!(archive, pack("release-v1", &plain, 1_700_000_000).expect("archive"), "deterministic");
        let back = unpack(&archive).expect("unpacked");
        assert_eq!(back.keys().collect::<Vec<_>>(), ["empty.csv", "manifest.json", "raw/a.json"]);
        assert_eq!(back.get("raw/a.json"), Some(&plain[1].1));
        assert_eq!(back.get("empty.csv"), Some(&Vec::new()));
    }

    #[test]
    fn a_file_whose_compressed_bytes_pass_a_megabyte_is_spooled_to_disk_and_joined_the_same() {
        // Bytes deflate cannot shrink: 3 MB of them, compressed, pass the limit.
        let mut noise = vec![0u8; 3 << 20];
        rand::RngCore::fill_bytes(&mut <rand::rngs::StdRng as rand::SeedableRng>::seed_from_u64(7), &mut noise);
        let plain = [("small.txt".to_owned(), b"kept in memory".to_vec()), ("noise.bin".to_owned(), noise)];
        let packed: Vec<Packed> = plain
            .iter()
            .map(|(n, b)| Packed::new("release-v1", n.clone(), 1_700_000_000, b).expect("packed"))
            .collect();
        assert!(matches!(packed[0].segments[1], Spooled::Memory(_)));
        assert!(matches!(packed[1].segments[1], Spooled::File(..)), "spooled to a temporary file");
        let archive = join(packed).expect("archive");
        let back = unpack(&archive).expect("unpacked");
        assert_eq!(back.get("noise.bin"), Some(&plain[1].1));
        assert_eq!(back.get("small.txt"), Some(&plain[0].1));
    }

    #[test]
    fn gzip_and_gnu_tar_read_the_segments_as_one_archive() {
        let plain = files();
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("release.tar.gz");
        std::fs::write(&path, pack("release-v1", &plain, 1_700_000_000).expect("archive")).expect("written");
        // One gzip member whose CRC-32 and length check out.
        let tested = std::process::Command::new("gzip").arg("-tv").arg(&path).output().expect("gzip runs");
        assert!(tested.status.success(), "gzip: {}", String::from_utf8_lossy(&tested.stderr));
        let listed = std::process::Command::new("tar").arg("-tvzf").arg(&path).output().expect("tar runs");
        assert!(listed.status.success(), "tar: {}", String::from_utf8_lossy(&listed.stderr));
        let listed = String::from_utf8(listed.stdout).expect("utf-8");
        let names: Vec<&str> = listed.lines().filter_map(|l| l.split_whitespace().last()).collect();
        assert_eq!(names, ["release-v1/manifest.json", "release-v1/raw/a.json", "release-v1/empty.csv"]);
        assert!(listed.lines().all(|l| l.starts_with("-rw-r--r--")), "{listed}");
        let content = std::process::Command::new("tar")
            .arg("-xzOf")
            .arg(&path)
            .arg("release-v1/raw/a.json")
            .output()
            .expect("tar runs");
        assert!(content.status.success() && content.stderr.is_empty(), "{}", String::from_utf8_lossy(&content.stderr));
        assert_eq!(content.stdout, plain[1].1);
    }

    /// A `.tar.gz` whose entries have these names and sizes, each filled
    /// with zeros (or the given bytes): a gzip bomb when a size is large.
    fn bomb(entries: &[(&str, u64, Option<&[u8]>)]) -> Vec<u8> {
        let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        let mut tar = tar::Builder::new(gz);
        for (name, size, bytes) in entries {
            let mut header = tar::Header::new_gnu();
            header.set_path(format!("release-v1/{name}")).expect("path");
            header.set_size(*size);
            header.set_mode(0o644);
            header.set_cksum();
            match bytes {
                Some(bytes) => tar.append(&header, *bytes).expect("append"),
                None => tar.append(&header, std::io::repeat(0).take(*size)).expect("append"),
            }
        }
        tar.into_inner().expect("tar").finish().expect("gzip")
    }

    /// A `.tar.gz` of one tar header claiming `size` bytes and nothing
    /// after it: what a reader that trusts headers would try to inflate.
    fn header_only(name: &str, size: u64) -> Vec<u8> {
        let mut header = tar::Header::new_gnu();
        header.set_path(format!("release-v1/{name}")).expect("path");
        header.set_size(size);
        header.set_mode(0o644);
        header.set_cksum();
        let mut gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::fast());
        gz.write_all(header.as_bytes()).expect("header");
        gz.finish().expect("gzip")
    }

    #[test]
    fn a_gzip_bomb_is_refused_at_its_header_without_being_inflated() {
        let big = 32 * 1024 * 1024;
        let manifest = br#"{"files": [{"name": "raw/responses.jsonl", "size": 10}]}"#;
        // Larger than the manifest says: refused before a byte of it is read.
        let archive =
            bomb(&[("manifest.json", manifest.len() as u64, Some(manifest)), ("raw/responses.jsonl", big, None)]);
        assert!(archive.len() < big as usize / 50, "a bomb: {} bytes", archive.len());
        let refused = digests(archive.as_slice()).err().expect("refused");
        assert!(refused.contains("raw/responses.jsonl: 33554432 bytes, more than the 10"), "{refused}");
        assert!(unpack(&archive).is_err());
        // A manifest larger than the cap, or a file before it, is refused the same way.
        let refused = digests(header_only("manifest.json", MANIFEST_LIMIT + 1).as_slice()).err().expect("refused");
        assert!(refused.contains("manifest.json") && refused.contains("damaged"), "{refused}");
        let refused = digests(header_only("raw/items.jsonl", 1 << 40).as_slice()).err().expect("refused");
        assert!(refused.contains("raw/items.jsonl") && refused.contains("damaged"), "{refused}");
        // A manifest that lies about the size: the raw parser stops at its record limit (the file is still
        // hashed, in bounded memory) and verification reports it.
        let lying = br#"{"files": [{"name": "raw/responses.jsonl", "size": 33554432}]}"#;
        let read = digests(
            bomb(&[("manifest.json", lying.len() as u64, Some(lying)), ("raw/responses.jsonl", big, None)]).as_slice(),
        )
        .expect("read");
        let unreadable = read.snapshot.expect_err("unreadable");
        assert!(unreadable.contains("line 1: longer than"), "{unreadable}");
        assert_eq!(read.digests.get("raw/responses.jsonl").map(|d| d.0), Some(big));
    }

    #[test]
    fn a_file_written_in_pieces_is_the_file_written_whole() {
        let whole = Packed::new("r", "x.json".into(), 0, b"{\n  \"a\": 1\n}\n").expect("packed");
        let pieces =
            Packed::written("r", "x.json".into(), 0, &mut |out| write_pretty_json(out, &serde_json::json!({"a": 1})))
                .expect("written");
        assert_eq!((pieces.size, &pieces.sha256), (whole.size, &whole.sha256));
        assert_eq!(join(vec![pieces]).expect("archive"), join(vec![whole]).expect("archive"));
    }
}
