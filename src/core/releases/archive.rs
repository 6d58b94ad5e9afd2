//! A release's files: the derived ones computed from a snapshot, the
//! manifest, the `.tar.gz` that holds them, and verification of an archive
//! against its manifest by recomputing every derived file.

use super::datasheet;
use super::snapshot::{pretty_json, Snapshot};
use crate::core::kind::TaskKind;
use crate::core::{ground_truth, Error, Result};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Read;

/// A release file: its name inside the archive and its bytes.
pub type File = (String, Vec<u8>);

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
    let aggregate = crate::core::kind::aggregate_with_reviews(kind, snapshot.aggregation_input());
    let mut files = vec![
        (GROUND_TRUTH_JSON.to_owned(), pretty_json(&aggregate)?),
        (
            GROUND_TRUTH_CSV.to_owned(),
            ground_truth::to_csv(&kind.export_table(aggregate.to_string().as_bytes()))?.into_bytes(),
        ),
        (RESPONSES_CSV.to_owned(), ground_truth::to_csv(&ground_truth::responses_table(snapshot))?.into_bytes()),
    ];
    files.extend(kind.release_files(snapshot, &aggregate)?);
    files.push((
        DATASHEET.to_owned(),
        datasheet::render(kind, snapshot, &aggregate, info, &counts(snapshot)).into_bytes(),
    ));
    Ok(files)
}

/// The manifest: identity, parameters, counts, and every file's hash and size.
pub fn manifest(kind: &dyn TaskKind, snapshot: &Snapshot, info: &ReleaseInfo, files: &[(String, Vec<u8>)]) -> Value {
    let listed: Vec<Value> = files
        .iter()
        .map(|(name, bytes)| json!({"name": name, "sha256": hex::encode(Sha256::digest(bytes)), "size": bytes.len()}))
        .collect();
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

/// All files of a release (raw, derived, manifest), in archive order.
pub fn build(kind: &dyn TaskKind, snapshot: &Snapshot, info: &ReleaseInfo) -> Result<(Value, Vec<File>)> {
    let mut files = snapshot.raw_files()?;
    files.extend(derived_files(kind, snapshot, info)?);
    let manifest = manifest(kind, snapshot, info, &files);
    files.insert(0, (MANIFEST.to_owned(), pretty_json(&manifest)?));
    Ok((manifest, files))
}

/// Packs files into a `.tar.gz` under the directory `root`.
pub fn pack(root: &str, files: &[(String, Vec<u8>)], mtime: u64) -> Result<Vec<u8>> {
    let gz = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::default());
    let mut tar = tar::Builder::new(gz);
    let io = |e: std::io::Error| Error::Internal(format!("packing the release: {e}"));
    for (name, bytes) in files {
        let mut header = tar::Header::new_gnu();
        header.set_size(bytes.len() as u64);
        header.set_mode(0o644);
        header.set_mtime(mtime);
        header.set_cksum();
        tar.append_data(&mut header, format!("{root}/{name}"), bytes.as_slice()).map_err(io)?;
    }
    tar.into_inner().map_err(io)?.finish().map_err(io)
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
