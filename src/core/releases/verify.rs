//! Verification of an archive against its manifest: every file's digest,
//! then every derived file recomputed from the raw data and compared.

use super::archive::release_files;
use super::format::{
    digest_of, manifest_digest, parameters, verification_reads, DigestWriter, Digests, ReleaseInfo, WriteFile,
    DATASHEET, EARLIER_FORMATS, FORMAT, FORMAT_WITHOUT_DIGEST, MANIFEST, MANIFEST_DIGEST,
};
pub use crate::core::releases::lanes::Lanes;
use crate::core::releases::snapshot::Snapshot;
use serde_json::Value;
use std::collections::BTreeMap;

/// What verification found: every problem names its file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verification {
    /// Files checked against the manifest.
    pub checked: usize,
    /// Problems, one line each.
    pub problems: Vec<String>,
}

/// [`verify_digests`] of an archive held unpacked in memory.
pub fn verify(files: &BTreeMap<String, Vec<u8>>, kinds: &crate::core::Registry) -> Verification {
    let digests = files.iter().map(|(name, bytes)| (name.clone(), digest_of(bytes))).collect();
    let kept = files.iter().filter(|(name, _)| verification_reads(name)).map(|(n, b)| (n.clone(), b.clone())).collect();
    verify_digests(&digests, kept, Snapshot::from_raw_files(files), kinds)
}

/// Checks every file (`digests`: each file's size and SHA-256) against the
/// manifest, then recomputes every derived file from the raw data
/// (`snapshot`, or what was wrong with it) and the manifest (in `kept`, with
/// its digest) and compares their digests: no derived file is held whole,
/// so an archive can be verified as it is read (see `packing::digests`).
/// `kinds` resolves the kind the manifest names.
pub fn verify_digests(
    digests: &Digests,
    kept: BTreeMap<String, Vec<u8>>,
    snapshot: std::result::Result<Snapshot, String>,
    kinds: &crate::core::Registry,
) -> Verification {
    let mut v = Verification::default();
    let manifest: Value = match kept.get(MANIFEST).map(|b| serde_json::from_slice(b)) {
        Some(Ok(m)) => m,
        Some(Err(e)) => return problem(format!("{MANIFEST}: {e}")),
        None => return problem(format!("{MANIFEST} is missing")),
    };
    // The manifest's own digest first: a manifest changed without it is named as such.
    let format = manifest["format"].as_str().unwrap_or_default();
    match (kept.get(MANIFEST_DIGEST), kept.get(MANIFEST)) {
        (Some(digest), Some(bytes)) if *digest != manifest_digest(bytes).as_bytes() => {
            v.problems.push(format!("{MANIFEST}: differs from its digest in {MANIFEST_DIGEST}"));
        }
        (None, _) if format != FORMAT_WITHOUT_DIGEST => {
            v.problems.push(format!("{MANIFEST_DIGEST} is missing (the manifest cannot be checked)"));
        }
        _ => {}
    }
    if format != FORMAT && !EARLIER_FORMATS.contains(&format) {
        v.problems.push(format!("{MANIFEST}: `format` is `{format}`, not a release format this Atelier reads"));
    }
    let listed = manifest["files"].as_array().cloned().unwrap_or_default();
    for f in &listed {
        let name = f["name"].as_str().unwrap_or_default();
        match digests.get(name) {
            None => v.problems.push(format!("{name}: listed in the manifest but missing")),
            Some((size, sha256)) => {
                v.checked += 1;
                if f["size"].as_u64() != Some(*size) {
                    v.problems.push(format!("{name}: size {size} differs from the manifest's {}", f["size"]));
                }
                if f["sha256"].as_str() != Some(sha256.as_str()) {
                    v.problems.push(format!("{name}: SHA-256 differs from the manifest"));
                }
            }
        }
    }
    for name in digests.keys().filter(|n| *n != MANIFEST && *n != MANIFEST_DIGEST) {
        if !listed.iter().any(|f| f["name"] == name.as_str()) {
            v.problems.push(format!("{name}: not listed in the manifest"));
        }
    }
    let kind_name = manifest["campaign"]["kind"].as_str().unwrap_or_default();
    let Some(kind) = kinds.find(kind_name) else {
        v.problems.push(format!("{MANIFEST}: unknown kind `{kind_name}`"));
        return v;
    };
    let snapshot = match snapshot {
        Ok(s) => s,
        Err(e) => {
            v.problems.push(e);
            return v;
        }
    };
    let rules = match crate::core::releases::archive::rules_of(kind, &snapshot) {
        Ok(rules) => rules,
        Err(e) => {
            v.problems.push(format!("{MANIFEST}: {e}"));
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
    if manifest["parameters"] != parameters(&*rules, &snapshot) {
        v.problems.push(format!("{MANIFEST}: parameters differ from those the raw data and this Atelier give"));
    }
    // Everything else the manifest says, against what the raw data gives.
    let expected = crate::core::releases::archive::manifest(&*rules, &snapshot, &info, &[]);
    for key in ["campaign", "campaign_state", "counts"] {
        if manifest[key] != expected[key] {
            v.problems
                .push(format!("{MANIFEST}: `{key}` says {} but the raw data gives {}", manifest[key], expected[key]));
        }
    }
    // Files whose bytes match the manifest's listing: a recomputed file that
    // still differs then differs through what the manifest itself says.
    let intact: Vec<&str> = listed
        .iter()
        .filter(|f| {
            let name = f["name"].as_str().unwrap_or_default();
            digests.get(name).is_some_and(|(_, sha256)| f["sha256"].as_str() == Some(sha256.as_str()))
        })
        .filter_map(|f| f["name"].as_str())
        .collect();
    let raw_intact = digests.keys().filter(|n| n.starts_with("raw/")).all(|n| intact.contains(&n.as_str()));
    let digest = |_: &str, write: WriteFile<'_>| {
        let mut out = DigestWriter::default();
        write(&mut out)?;
        Ok(out.digest())
    };
    let recomputed = match release_files(kind, &*rules, &snapshot, &info, format, false, Lanes::One, &digest) {
        Ok(files) => files,
        Err(e) => {
            v.problems.push(format!("recomputing the derived files failed: {e}"));
            return v;
        }
    };
    // Files that record the manifest's `release` (note, time, author,
    // version): one of them that is as the manifest lists it, recomputed
    // differently from intact raw data, differs through the manifest's
    // `release` alone, which is named once, not the files.
    let mut release_records = Vec::new();
    for (name, recomputed) in recomputed {
        match digests.get(&name) {
            None => v.problems.push(format!("{name}: missing (recomputed from the raw data)")),
            Some(archived)
                if *archived != recomputed
                    && records_release(&name)
                    && raw_intact
                    && intact.contains(&name.as_str()) =>
            {
                release_records.push(name)
            }
            Some(archived) if *archived != recomputed => {
                v.problems.push(format!("{name}: differs from the file recomputed from the raw data"))
            }
            Some(_) => {}
        }
    }
    if !release_records.is_empty() {
        v.problems.push(format!(
            "{MANIFEST}: `release` (note, created_at, created_by or version) differs from what {} record{}",
            release_records.join(", "),
            if release_records.len() == 1 { "s" } else { "" }
        ));
    }
    v
}

/// Whether a release file records the manifest's `release` information:
/// the datasheet, and the dataset card and Croissant file of `hf/` that
/// carry it.
fn records_release(name: &str) -> bool {
    name == DATASHEET || name == "hf/README.md" || name == "hf/croissant.json"
}

fn problem(message: String) -> Verification {
    Verification { checked: 0, problems: vec![message] }
}
