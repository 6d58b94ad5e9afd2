//! A release's files: the derived ones computed from a snapshot, the
//! manifest, the `.tar.gz` that holds them, and verification of an archive
//! against its manifest by recomputing every derived file.

use super::datasheet;
use super::snapshot::{pretty_json, write_pretty_json, Snapshot};
use crate::core::csv_chunks::CsvRows;
use crate::core::kind::TaskKind;
use crate::core::{ground_truth, Error, Result};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::{Read, Write};

/// A release file: its name inside the archive and its bytes.
pub type File = (String, Vec<u8>);

/// Writes one release file into the writer it is given.
pub type WriteFile<'a> = &'a mut dyn FnMut(&mut dyn std::io::Write) -> Result<()>;

/// Takes release files one at a time: a file's name and what writes it.
pub type EachFile<'a> = &'a mut dyn FnMut(&str, WriteFile<'_>) -> Result<()>;

/// The manifest's format tag.
pub const FORMAT: &str = "atelier-release/1";
/// The file names that are always derived (kinds add their own).
pub const GROUND_TRUTH_JSON: &str = "ground_truth.json";
/// The ground truth as a table.
pub const GROUND_TRUTH_CSV: &str = "ground_truth.csv";
/// Every response with its exclusion reason, one row each.
pub const RESPONSES_CSV: &str = "responses.csv";
/// The generated datasheet.
pub const DATASHEET: &str = "DATASHEET.md";
/// The manifest.
pub const MANIFEST: &str = "manifest.json";

/// What the manifest says about a release besides its files (everything the
/// datasheet shows is in here, so verification can regenerate it).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct ReleaseInfo {
    /// Release number (1, 2, ...).
    pub release: i32,
    /// The admin's note.
    pub note: String,
    /// When it was cut (RFC 3339, seconds).
    pub created_at: String,
    /// Who cut it (account name).
    pub created_by: String,
    /// Atelier's version and commit.
    pub atelier: Value,
}

/// The counts a manifest records.
pub fn counts(snapshot: &Snapshot) -> Value {
    let mut excluded: BTreeMap<String, usize> = BTreeMap::new();
    for r in &snapshot.responses {
        if let Some(reason) = &r.excluded_reason {
            *excluded.entry(reason.clone()).or_default() += 1;
        }
    }
    json!({
        "items": snapshot.items.len(),
        "batches": snapshot.batches.len(),
        "annotators": snapshot.annotators(),
        "responses": snapshot.responses.len(),
        "responses_counted": snapshot.responses.iter().filter(|r| r.excluded_reason.is_none()).count(),
        "responses_excluded": excluded,
        "submissions": snapshot.assignments.iter().filter(|a| a.state == crate::core::states::AssignmentState::Completed).count(),
    })
}

/// The parameters that shaped the result.
pub fn parameters(kind: &dyn TaskKind, snapshot: &Snapshot) -> Value {
    json!({
        "config": snapshot.campaign.config,
        "kind": kind.release_parameters(&snapshot.kind_config()),
    })
}

/// Every derived file, computed from the snapshot alone (deterministic:
/// stable ordering, serde's float formatting, seeded randomness).
pub fn derived_files(kind: &dyn TaskKind, snapshot: &Snapshot, info: &ReleaseInfo) -> Result<Vec<File>> {
    let mut files = Vec::new();
    each_derived_file(kind, snapshot, info, &mut |name, write| {
        let mut bytes = Vec::new();
        write(&mut bytes)?;
        files.push((name.to_owned(), bytes));
        Ok(())
    })?;
    Ok(files)
}

/// The derived files of [`derived_files`], in archive order: `each` gets
/// each file's name and a function that writes it (the big tables are
/// written row by row, never held whole).
pub fn each_derived_file(
    kind: &dyn TaskKind,
    snapshot: &Snapshot,
    info: &ReleaseInfo,
    each: EachFile<'_>,
) -> Result<()> {
    let aggregate = crate::core::kind::aggregate_with_reviews(kind, snapshot.aggregation_input());
    each(GROUND_TRUTH_JSON, &mut |out| write_pretty_json(out, &aggregate))?;
    each(GROUND_TRUTH_CSV, &mut |out| {
        let mut csv = CsvRows::new(out);
        kind.export_rows(aggregate.to_string().as_bytes(), &mut |row| csv.row(row));
        csv.finish().map(drop)
    })?;
    each(RESPONSES_CSV, &mut |out| {
        let mut csv = CsvRows::new(out);
        ground_truth::each_response_row(snapshot, &mut |row| csv.row(&row));
        csv.finish().map(drop)
    })?;
    for (name, bytes) in kind.release_files(snapshot, &aggregate)? {
        each(&name, &mut |out| out.write_all(&bytes).map_err(packing))?;
    }
    let datasheet = datasheet::render(kind, snapshot, &aggregate, info, &counts(snapshot));
    each(DATASHEET, &mut |out| out.write_all(datasheet.as_bytes()).map_err(packing))
}

/// The manifest: identity, parameters, counts, and every file's hash and size.
pub fn manifest(kind: &dyn TaskKind, snapshot: &Snapshot, info: &ReleaseInfo, files: &[Packed]) -> Value {
    let listed: Vec<Value> =
        files.iter().map(|f| json!({"name": f.name, "sha256": f.sha256, "size": f.size})).collect();
    json!({
        "format": FORMAT,
        "campaign": {"id": snapshot.campaign.id, "name": snapshot.campaign.name, "kind": snapshot.campaign.kind},
        "campaign_state": snapshot.campaign.state,
        "release": info,
        "parameters": parameters(kind, snapshot),
        "counts": counts(snapshot),
        "files": listed,
    })
}

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

fn packing(e: std::io::Error) -> Error {
    Error::Internal(format!("packing the release: {e}"))
}

/// All files of a release (manifest, raw, derived), in archive order, each
/// held deflated from the moment it is made; and the manifest.
pub fn build(kind: &dyn TaskKind, snapshot: &Snapshot, info: &ReleaseInfo) -> Result<(Value, Vec<Packed>)> {
    let mut files = Vec::new();
    let mut keep = |name: &str, write: WriteFile<'_>| {
        files.push(Packed::written(name.to_owned(), write)?);
        Ok(())
    };
    snapshot.each_raw_file(&mut keep)?;
    each_derived_file(kind, snapshot, info, &mut keep)?;
    let manifest = manifest(kind, snapshot, info, &files);
    files.insert(0, Packed::new(MANIFEST.to_owned(), &pretty_json(&manifest)?)?);
    Ok((manifest, files))
}

/// Packs files into a `.tar.gz` under the directory `root`.
pub fn pack(root: &str, files: &[(String, Vec<u8>)], mtime: u64) -> Result<Vec<u8>> {
    pack_entries(root, files.iter().map(|(name, bytes)| (name.as_str(), bytes.len() as u64, bytes.as_slice())), mtime)
}

/// Packs files held deflated ([`Packed`]) into a `.tar.gz` under the
/// directory `root`: the same archive [`pack`] makes of the same files.
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

/// Unpacks a `.tar.gz`: file name (without the top directory) -> bytes.
pub fn unpack(archive: &[u8]) -> std::result::Result<BTreeMap<String, Vec<u8>>, String> {
    let mut tar = tar::Archive::new(flate2::read::GzDecoder::new(archive));
    let mut files = BTreeMap::new();
    for entry in tar.entries().map_err(|e| format!("not a release archive: {e}"))? {
        let mut entry = entry.map_err(|e| format!("not a release archive: {e}"))?;
        if !entry.header().entry_type().is_file() {
            continue;
        }
        let path = entry.path().map_err(|e| e.to_string())?.to_string_lossy().into_owned();
        let name = path.split_once('/').map_or(path.as_str(), |(_, rest)| rest).to_owned();
        let mut bytes = Vec::new();
        entry.read_to_end(&mut bytes).map_err(|e| format!("{name}: {e}"))?;
        files.insert(name, bytes);
    }
    Ok(files)
}

/// What verification found: every problem names its file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verification {
    /// Files checked against the manifest.
    pub checked: usize,
    /// Problems, one line each.
    pub problems: Vec<String>,
}

/// Checks every file against the manifest's hash and size, then recomputes
/// every derived file from the raw files and the manifest and compares them
/// byte for byte. `find` resolves the kind named in the manifest.
pub fn verify(files: &BTreeMap<String, Vec<u8>>, kinds: &crate::core::Registry) -> Verification {
    let mut v = Verification::default();
    let manifest: Value = match files.get(MANIFEST).map(|b| serde_json::from_slice(b)) {
        Some(Ok(m)) => m,
        Some(Err(e)) => return problem(format!("{MANIFEST}: {e}")),
        None => return problem(format!("{MANIFEST} is missing")),
    };
    let listed = manifest["files"].as_array().cloned().unwrap_or_default();
    for f in &listed {
        let name = f["name"].as_str().unwrap_or_default();
        match files.get(name) {
            None => v.problems.push(format!("{name}: listed in the manifest but missing")),
            Some(bytes) => {
                v.checked += 1;
                if f["size"].as_u64() != Some(bytes.len() as u64) {
                    v.problems.push(format!("{name}: size {} differs from the manifest's {}", bytes.len(), f["size"]));
                }
                if f["sha256"].as_str() != Some(hex::encode(Sha256::digest(bytes)).as_str()) {
                    v.problems.push(format!("{name}: SHA-256 differs from the manifest"));
                }
            }
        }
    }
    for name in files.keys().filter(|n| *n != MANIFEST) {
        if !listed.iter().any(|f| f["name"] == name.as_str()) {
            v.problems.push(format!("{name}: not listed in the manifest"));
        }
    }
    let kind_name = manifest["campaign"]["kind"].as_str().unwrap_or_default();
    let Some(kind) = kinds.find(kind_name) else {
        v.problems.push(format!("{MANIFEST}: unknown kind `{kind_name}`"));
        return v;
    };
    let snapshot = match Snapshot::from_raw_files(files) {
        Ok(s) => s,
        Err(e) => {
            v.problems.push(e);
            return v;
        }
    };
    let info: ReleaseInfo = match serde_json::from_value(manifest["release"].clone()) {
        Ok(i) => i,
        Err(e) => {
            v.problems.push(format!("{MANIFEST}: release: {e}"));
            return v;
        }
    };
    if manifest["parameters"] != parameters(kind, &snapshot) {
        v.problems.push(format!("{MANIFEST}: parameters differ from those the raw data and this Atelier give"));
    }
    match derived_files(kind, &snapshot, &info) {
        Err(e) => v.problems.push(format!("recomputing the derived files failed: {e}")),
        Ok(derived) => {
            for (name, bytes) in derived {
                match files.get(&name) {
                    None => v.problems.push(format!("{name}: missing (recomputed from the raw data)")),
                    Some(archived) if *archived != bytes => {
                        v.problems.push(format!("{name}: differs from the file recomputed from the raw data"))
                    }
                    Some(_) => {}
                }
            }
        }
    }
    v
}

fn problem(message: String) -> Verification {
    Verification { checked: 0, problems: vec![message] }
}

#[cfg(test)]
mod tests {
    use super::*;

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
        assert!(packed[1].deflated.len() < plain[1].1.len() / 4, "held deflated");
        let archive = pack_deflated("release-v1", &packed, 1_700_000_000).expect("archive");
        assert_eq!(archive, pack("release-v1", &plain, 1_700_000_000).expect("archive"));
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
