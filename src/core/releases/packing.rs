//! The `.tar.gz` that holds a release's files, and the files held deflated
//! until it is packed.

use super::archive::WriteFile;
use crate::core::{Error, Result};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// A release file held deflated until the archive is packed: at crowd
/// scale a release's files are hundreds of MB, and only the manifest, which
/// goes first, needs them all (for their hashes).
pub struct Packed {
    /// Its name inside the archive.
    pub name: String,
    /// Its length.
    pub size: u64,
    /// Its SHA-256, hex.
    pub sha256: String,
    /// The bytes, deflated (fast level: they are inflated again at once).
    deflated: Vec<u8>,
}

impl Packed {
    /// Hashes and deflates one file.
    pub fn new(name: String, bytes: &[u8]) -> Result<Self> {
        Self::written(name, &mut |out| out.write_all(bytes).map_err(packing))
    }

    /// The file `write` writes, hashed and deflated as it is written.
    pub fn written(name: String, write: WriteFile<'_>) -> Result<Self> {
        let mut file = FileWriter {
            size: 0,
            sha256: Sha256::new(),
            deflate: flate2::write::DeflateEncoder::new(Vec::new(), flate2::Compression::fast()),
        };
        {
            let mut buffered = std::io::BufWriter::with_capacity(1 << 16, &mut file);
            write(&mut buffered)?;
            buffered.flush().map_err(packing)?;
        }
        let deflated = file.deflate.finish().map_err(packing)?;
        Ok(Self { name, size: file.size, sha256: hex::encode(file.sha256.finalize()), deflated })
    }
}

/// Where [`Packed::written`] writes: counts, hashes and deflates.
struct FileWriter {
    size: u64,
    sha256: Sha256,
    deflate: flate2::write::DeflateEncoder<Vec<u8>>,
}

impl std::io::Write for FileWriter {
    fn write(&mut self, bytes: &[u8]) -> std::io::Result<usize> {
        self.deflate.write_all(bytes)?;
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

/// Packs files into a `.tar.gz` under the directory `root`.
pub fn pack(root: &str, files: &[(String, Vec<u8>)], mtime: u64) -> Result<Vec<u8>> {
    pack_entries(root, files.iter().map(|(name, bytes)| (name.as_str(), bytes.len() as u64, bytes.as_slice())), mtime)
}

/// Packs files held deflated ([`Packed`]) into a `.tar.gz` under the
/// directory `root`: the same files, in the same order, as [`pack`] packs.
pub fn pack_deflated(root: &str, files: &[Packed], mtime: u64) -> Result<Vec<u8>> {
    let entries =
        files.iter().map(|f| (f.name.as_str(), f.size, flate2::read::DeflateDecoder::new(f.deflated.as_slice())));
    pack_entries(root, entries, mtime)
}

fn pack_entries<'a, R: Read>(
    root: &str,
    entries: impl Iterator<Item = (&'a str, u64, R)>,
    mtime: u64,
) -> Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    for (name, size, data) in entries {
        let mut header = tar::Header::new_gnu();
        header.set_size(size);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_cksum();
        tar.append_data(&mut header, format!("{root}/{name}"), data).map_err(packing)?;
    }
    tar.into_inner().map_err(packing)?.finish().map_err(packing)
}

/// Calls `each` with every file of a `.tar.gz` as it streams in: its name
/// (without the top directory) and its content to read.
fn each_file(
    archive: impl Read,
    mut each: impl FnMut(String, &mut dyn Read) -> std::result::Result<(), String>,
) -> std::result::Result<(), String> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
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

/// Reads a `.tar.gz` as it streams in, for verification: every file's
/// size and SHA-256 (by name), and the bytes of those verification reads
/// (see [`super::archive::verification_reads`]); the others are never held
/// whole.
pub fn digests(
    archive: impl Read,
) -> std::result::Result<(super::archive::Digests, BTreeMap<String, Vec<u8>>), String> {
    let (mut digests, mut kept) = (BTreeMap::new(), BTreeMap::new());
    each_file(archive, |name, content| {
        let mut out = super::archive::DigestWriter::default();
        if super::archive::verification_reads(&name) {
            let mut bytes = Vec::new();
            content.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
            std::io::Write::write_all(&mut out, &bytes).map_err(|e| format!("{name}: {e}"))?;
            kept.insert(name.clone(), bytes);
        } else {
            std::io::copy(content, &mut out).map_err(|e| format!("{name}: {e}"))?;
        }
        digests.insert(name, out.digest());
        Ok(())
    })?;
    Ok((digests, kept))
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
    use crate::core::releases::archive::File;
    use crate::core::releases::snapshot::write_pretty_json;

    fn files() -> Vec<File> {
        let big: Vec<u8> = (0..300_000u32).flat_map(|i| format!("row {i},{}\n", i % 7).into_bytes()).collect();
        vec![("manifest.json".into(), b"{}\n".to_vec()), ("raw/a.json".into(), big), ("empty.csv".into(), Vec::new())]
    }

    #[test]
    fn files_held_deflated_pack_into_the_same_archive() {
        let plain = files();
        let packed: Vec<Packed> = plain.iter().map(|(n, b)| Packed::new(n.clone(), b).expect("packed")).collect();
        for (p, (name, bytes)) in packed.iter().zip(&plain) {
            assert_eq!((&p.name, p.size), (name, bytes.len() as u64));
            assert_eq!(p.sha256, hex::encode(Sha256::digest(bytes)));
        }
        assert!(
            packed[1].deflated.len() < plain[1].1.len() / 2,
            "held deflated: {} of {} bytes",
            packed[1].deflated.len(),
            plain[1].1.len()
        );
        let archive = pack_deflated("release-v1", &packed, 1_700_000_000).expect("archive");
        // The same files in the same order (the compressed bytes may differ
        // with how the compressor is fed: zlib-rs reads them in other chunks).
        let plain_archive = pack("release-v1", &plain, 1_700_000_000).expect("archive");
        assert_eq!(unpack(&archive).expect("unpacked"), unpack(&plain_archive).expect("unpacked"));
        assert_eq!(plain_archive, pack("release-v1", &plain, 1_700_000_000).expect("archive"), "deterministic");
        let back = unpack(&archive).expect("unpacked");
        assert_eq!(back.get("raw/a.json"), Some(&plain[1].1));
        assert_eq!(back.get("empty.csv"), Some(&Vec::new()));
    }

    #[test]
    fn a_file_written_in_pieces_is_the_file_written_whole() {
        let whole = Packed::new("x.json".into(), b"{\n  \"a\": 1\n}\n").expect("packed");
        let pieces = Packed::written("x.json".into(), &mut |out| write_pretty_json(out, &serde_json::json!({"a": 1})))
            .expect("written");
        assert_eq!((pieces.size, &pieces.sha256), (whole.size, &whole.sha256));
    }
}
