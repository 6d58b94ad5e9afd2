//! The `.tar.gz` that holds a release's files. Each file is compressed once,
//! as it is written, into gzip members of its own; the archive is those
//! members end to end (RFC 1952 §2.2: a gzip file is a series of members,
//! which `tar xzf`, Python's `tarfile` and every gzip reader read as one
//! stream). So the manifest, which goes first but is known last, takes its
//! place without the other files being held uncompressed or compressed twice.

use super::archive::WriteFile;
use crate::core::{Error, Result};
use flate2::write::GzEncoder;
use flate2::Compression;
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// A tar block: headers are one, contents are padded to whole ones.
const BLOCK: u64 = 512;

/// How the archive is compressed (gzip's default level).
fn level() -> Compression {
    Compression::default()
}

/// One file of an archive, compressed: its tar header and its content (with
/// the padding tar wants) as gzip members, ready to be put end to end.
pub struct Packed {
    /// Its name inside the archive.
    pub name: String,
    /// Its length.
    pub size: u64,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// The header's member, then the content's.
    members: [Vec<u8>; 2],
}

impl Packed {
    /// Hashes and compresses one file held whole.
    pub fn new(root: &str, name: String, mtime: u64, bytes: &[u8]) -> Result<Self> {
        Self::written(root, name, mtime, &mut |out| out.write_all(bytes).map_err(packing))
    }

    /// The file `write` writes under the directory `root`, hashed and
    /// compressed as it is written.
    pub fn written(root: &str, name: String, mtime: u64, write: WriteFile<'_>) -> Result<Self> {
        let mut file = FileWriter { size: 0, sha256: Sha256::new(), gz: GzEncoder::new(Vec::new(), level()) };
        {
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut file);
            write(&mut buffered)?;
            buffered.flush().map_err(packing)?;
        }
        let padding = (BLOCK - file.size % BLOCK) % BLOCK;
        file.gz.write_all(&vec![0; padding as usize]).map_err(packing)?;
        let content = file.gz.finish().map_err(packing)?;
        let header = compressed(header(&format!("{root}/{name}"), file.size, mtime)?.as_bytes())?;
        Ok(Self { name, size: file.size, sha256: hex::encode(file.sha256.finalize()), members: [header, content] })
    }

    /// Its compressed length in the archive.
    fn len(&self) -> usize {
        self.members.iter().map(Vec::len).sum()
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

/// Bytes as one gzip member.
fn compressed(bytes: &[u8]) -> Result<Vec<u8>> {
    let mut gz = GzEncoder::new(Vec::new(), level());
    gz.write_all(bytes).map_err(packing)?;
    gz.finish().map_err(packing)
}

/// Where [`Packed::written`] writes: counts, hashes and compresses.
struct FileWriter {
    size: u64,
    sha256: Sha256,
    gz: GzEncoder<Vec<u8>>,
}

impl std::io::Write for FileWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.gz.write_all(bytes)?;
        self.sha256.update(bytes);
        self.size += bytes.len() as u64;
        Ok(bytes.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

/// A failed write while packing, as the core's error.
pub(super) fn packing(e: std::io::Error) -> Error {
    Error::internal("packing the release", e)
}

/// Packs files held whole into a `.tar.gz` under the directory `root`.
pub fn pack(root: &str, files: &[(String, Vec<u8>)], mtime: u64) -> Result<Vec<u8>> {
    let packed: Result<Vec<Packed>> =
        files.iter().map(|(name, bytes)| Packed::new(root, name.clone(), mtime, bytes)).collect();
    join(packed?)
}

/// The `.tar.gz` of files packed in this order: their members end to end,
/// then tar's end of archive (two zero blocks). Each file's members are let
/// go as they are copied.
pub fn join(files: Vec<Packed>) -> Result<Vec<u8>> {
    let end = compressed(&[0; 2 * BLOCK as usize])?;
    let mut archive = Vec::with_capacity(files.iter().map(Packed::len).sum::<usize>() + end.len());
    for file in files {
        for member in file.members {
            archive.extend_from_slice(&member);
        }
    }
    archive.extend_from_slice(&end);
    Ok(archive)
}

/// Calls `each` with every file of a `.tar.gz` as it streams in: its name
/// (without the top directory) and its content to read.
fn each_file(
    archive: impl Read,
    mut each: impl FnMut(String, &mut dyn Read) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let mut tar = tar::Archive::new(flate2::read::MultiGzDecoder::new(archive));
    for entry in tar.entries().map_err(|e| format!("not a release archive: {e}"))? {
        let mut entry = entry.map_err(|e| format!("not a release archive: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let name = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest).to_owned();
        each(name, &mut entry)?;
    }
    Ok(())
}

/// What verification reads of an archive ([`digests`]).
pub struct Streamed {
    /// Every file's size and SHA-256, by name.
    pub digests: super::archive::Digests,
    /// The bytes of the manifest and its digest.
    pub kept: BTreeMap<String, Vec<u8>>,
    /// The raw data, parsed as it streamed past (or what was wrong with it).
    pub snapshot: std::result::Result<super::Snapshot, String>,
}

/// Reads a `.tar.gz` as it streams in, for verification: every file's size
/// and SHA-256, the manifest and its digest, and the raw data parsed line
/// by line; no other file and no raw file's text is ever held whole.
pub fn digests(archive: impl Read) -> std::result::Result<Streamed, String> {
    let (mut digests, mut kept) = (BTreeMap::new(), BTreeMap::new());
    let (mut raw, mut unreadable) = (super::snapshot::RawFiles::default(), None);
    each_file(archive, |name, content| {
        let mut out = super::archive::DigestWriter::default();
        if super::archive::verification_reads(&name) {
            let mut bytes = Vec::new();
            content.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
            std::io::Write::write_all(&mut out, &bytes).map_err(|e| format!("{name}: {e}"))?;
            kept.insert(name.clone(), bytes);
        } else {
            // Hashed as it is read, parsed if it is raw data, the rest read past.
            let mut content = std::io::BufReader::with_capacity(1 << 16, Hashed { content, out: &mut out });
            if super::snapshot::RawFiles::reads(&name) {
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
    out: &'a mut super::archive::DigestWriter,
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
    fn files_packed_one_by_one_make_one_tar_gz() {
        let plain = files();
        let packed: Vec<Packed> = plain
            .iter()
            .map(|(n, b)| Packed::new("release-v1", n.clone(), 1_700_000_000, b).expect("packed"))
            .collect();
        for (p, (name, bytes)) in packed.iter().zip(&plain) {
            assert_eq!((&p.name, p.size), (name, bytes.len() as u64));
            assert_eq!(p.sha256, hex::encode(Sha256::digest(bytes)));
        }
        assert!(
            packed[1].len() < plain[1].1.len() / 2,
            "compressed: {} of {} bytes",
            packed[1].len(),
            plain[1].1.len()
        );
        let archive = join(packed).expect("archive");
        assert_eq!(archive, pack("release-v1", &plain, 1_700_000_000).expect("archive"), "deterministic");
        let back = unpack(&archive).expect("unpacked");
        assert_eq!(back.keys().collect::<Vec<_>>(), ["empty.csv", "manifest.json", "raw/a.json"]);
        assert_eq!(back.get("raw/a.json"), Some(&plain[1].1));
        assert_eq!(back.get("empty.csv"), Some(&Vec::new()));
    }

    #[test]
    fn gnu_tar_reads_the_members_as_one_archive() {
        let plain = files();
        let dir = tempfile::tempdir().expect("dir");
        let path = dir.path().join("release.tar.gz");
        std::fs::write(&path, pack("release-v1", &plain, 1_700_000_000).expect("archive")).expect("written");
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
