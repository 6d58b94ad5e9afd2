//! A release's files: the derived ones computed from a snapshot, the
//! manifest, and verification of an archive against its manifest by
//! recomputing every derived file. The `.tar.gz` that holds them is
//! [`super::packing`]'s.

use super::datasheet;
use super::hf::SnapshotTables;
pub use super::lanes::Lanes;
use super::lanes::{Job, Slot};
use super::packing::{packing, Packed};
use super::snapshot::{pretty_json, Snapshot};
use crate::core::csv_chunks::CsvRows;
use crate::core::kind::TaskKind;
use crate::core::{ground_truth, Result};
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;
use std::sync::Arc;

/// Writes one release file into the writer it is given.
pub type WriteFile<'a> = &'a mut dyn FnMut(&mut dyn Write) -> Result<()>;

/// Takes release files one at a time: a file's name and what writes it.
pub type EachFile<'a> = &'a mut dyn FnMut(&str, WriteFile<'_>) -> Result<()>;

/// The manifest's format tag: version 2 writes the manifest's digest beside
/// it ([`MANIFEST_DIGEST`]); version 3 adds the Hugging Face folder
/// ([`hf::DIR`](super::hf::DIR)).
pub const FORMAT: &str = "atelier-release/3";
/// Earlier format tags that verification still reads.
pub const EARLIER_FORMATS: [&str; 2] = ["atelier-release/1", "atelier-release/2"];
/// The one format without [`MANIFEST_DIGEST`].
const FORMAT_WITHOUT_DIGEST: &str = "atelier-release/1";
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
/// The manifest's SHA-256 in `sha256sum` format (`sha256sum -c` checks it),
/// checked before anything the manifest says is believed.
pub const MANIFEST_DIGEST: &str = "manifest.sha256";

/// The text of [`MANIFEST_DIGEST`] for a manifest's bytes.
pub fn manifest_digest(manifest: &[u8]) -> String {
    format!("{}  {MANIFEST}\n", hex::encode(Sha256::digest(manifest)))
}

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
    /// The licence the data is published under (an SPDX or Hub identifier),
    /// if the admin gave one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub license: Option<String>,
}

/// The counts a manifest records.
pub fn counts(snapshot: &Snapshot) -> Value {
    let mut excluded: BTreeMap<String, usize> = BTreeMap::new();
    for r in &snapshot.responses {
        if let Some(reason) = &r.excluded_reason {
            *excluded.entry(reason.to_string()).or_default() += 1;
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

/// The parameters that shaped the result; with the platform's
/// reconciliation (see `core::reconciliation`), whose work counted and how
/// many workers each of its rules left out (absent for campaigns that never
/// used it, whose manifests stay as they were).
pub fn parameters(kind: &dyn TaskKind, snapshot: &Snapshot) -> Value {
    use crate::core::reconciliation::{NOT_ON_PLATFORM, REJECTED_ON_PLATFORM};
    use crate::core::settings::GroundTruthFrom;
    let mut parameters = json!({
        "config": snapshot.campaign.config,
        "kind": kind.release_parameters(&snapshot.kind_config()),
    });
    let rule = snapshot.campaign.settings.map(|s| s.ground_truth_from).unwrap_or_default();
    let left_out = |reason: &str| {
        let workers: std::collections::BTreeSet<uuid::Uuid> = snapshot
            .responses
            .iter()
            .filter(|r| r.excluded_reason.as_deref() == Some(reason))
            .map(|r| r.annotator)
            .collect();
        workers.len()
    };
    let (not_on, rejected) = (left_out(NOT_ON_PLATFORM), left_out(REJECTED_ON_PLATFORM));
    if rule != GroundTruthFrom::All || not_on + rejected > 0 {
        parameters["ground_truth_from"] = json!({
            "rule": rule.as_str(),
            "workers_left_out": {"not_on_platform": not_on, "rejected_on_platform": rejected},
        });
    }
    // An adaptive overlap: its rule, and how many raters the items got.
    if let Some(overlap) = snapshot.campaign.settings.map(|s| s.overlap).filter(|o| o.rule().is_some()) {
        let mut raters: BTreeMap<uuid::Uuid, usize> = BTreeMap::new();
        let submitted: std::collections::HashSet<uuid::Uuid> = snapshot
            .assignments
            .iter()
            .filter(|a| a.state == crate::core::states::AssignmentState::Completed)
            .map(|a| a.id)
            .collect();
        let gold: std::collections::HashSet<uuid::Uuid> =
            snapshot.items.iter().filter(|i| i.gold.is_some()).map(|i| i.id).collect();
        for r in
            snapshot.responses.iter().filter(|r| submitted.contains(&r.assignment_id) && !gold.contains(&r.item_id))
        {
            *raters.entry(r.item_id).or_default() += 1;
        }
        let mut histogram: BTreeMap<usize, usize> = BTreeMap::new();
        for n in raters.values() {
            *histogram.entry(*n).or_default() += 1;
        }
        parameters["overlap"] = json!({
            "rule": overlap.to_json(),
            "raters_per_item": histogram.into_iter().map(|(n, items)| json!({"raters": n, "items": items})).collect::<Vec<_>>(),
            "ratings": raters.values().sum::<usize>(),
        });
    }
    parameters
}

/// Makes one release file from its name and what writes it: packs it for
/// an archive, or digests it for verification. Called from two threads.
pub type Make<'a, T> = &'a (dyn Fn(&str, WriteFile<'_>) -> Result<T> + Sync);

/// A release's files made by `make`, in archive order: the raw files (with
/// `raw`), then every derived file, computed from the snapshot alone
/// (deterministic: stable ordering, serde's float formatting, seeded
/// randomness; the big tables written row by row, never held whole).
/// `format` is the release's: the files of an earlier format are those it
/// had.
///
/// The work is a queue of jobs that the lanes take as they come free: the
/// aggregation first, then the files of the snapshot alone (the biggest
/// first), then those that need the ground truth (which wait for it). At
/// VTON-QBench size the aggregation took 1.9 s of one lane while the other
/// made 3.1 s of snapshot files; with a fixed split (the aggregation beside
/// the snapshot's files, then the ground truth's beside the rest) one lane
/// waited for the other for over a second.
pub fn release_files<T: Send>(
    kind: &dyn TaskKind,
    snapshot: &Snapshot,
    info: &ReleaseInfo,
    format: &str,
    raw: bool,
    lanes: Lanes,
    make: Make<'_, T>,
) -> Result<Vec<(String, T)>> {
    // Each file's working memory goes back to the system once it is made,
    // before the next one's (at VTON-QBench size, with the returns after the
    // aggregation and after each file, a cut's peak went from ~340 to ~315 MB
    // for ~0.1 s).
    let one = |name: &str, write: WriteFile<'_>| -> Result<(String, T)> {
        let made = make(name, write)?;
        crate::core::heavy::return_freed_memory();
        Ok((name.to_owned(), made))
    };
    let with_hf = !EARLIER_FORMATS.contains(&format);
    let raw_files = if raw { snapshot.raw_files() } else { Vec::new() };
    // What the jobs make, each in its slot.
    let aggregate: Slot<Arc<String>> = Slot::default();
    let raw_made: Vec<Slot<(String, T)>> = raw_files.iter().map(|_| Slot::default()).collect();
    let (responses, truth_json, truth_csv) = (Slot::default(), Slot::default(), Slot::default());
    let (responses_table, items_table) = (Slot::default(), Slot::default());
    let rest: Slot<Vec<(String, T)>> = Slot::default();
    let raw_job = |at: usize| -> Job<'_> {
        let (name, write) = &raw_files[at];
        let slot = &raw_made[at];
        Box::new(move || slot.fill(|| one(name, &mut |out| write(out))))
    };
    // The raw responses are the one big raw file.
    let (big_raw, small_raw): (Vec<usize>, Vec<usize>) =
        (0..raw_files.len()).partition(|&at| raw_files[at].0 == "raw/responses.jsonl");
    let mut jobs: Vec<Job<'_>> = vec![Box::new(|| {
        // The ground truth as the live views have it, its compact text (a
        // `Value` of a crowd campaign's ground truth is several hundred MB).
        aggregate.fill(|| {
            let text = crate::core::kind::aggregate_json_with_reviews(kind, snapshot.aggregation_input());
            // What the aggregation freed is not left for the next job.
            crate::core::heavy::return_freed_memory();
            Ok(Arc::new(text))
        })
    })];
    // The snapshot's own files, the biggest first: the lanes end together.
    jobs.extend(big_raw.iter().map(|&at| raw_job(at)));
    jobs.push(Box::new(|| {
        responses.fill(|| {
            one(RESPONSES_CSV, &mut |out| {
                let mut csv = CsvRows::new(out);
                ground_truth::each_response_row(snapshot, &mut |row| csv.row(&row));
                csv.finish().map(drop)
            })
        })
    }));
    if with_hf {
        jobs.push(Box::new(|| responses_table.fill(|| super::hf::responses_table(snapshot))));
        jobs.push(Box::new(|| items_table.fill(|| super::hf::items_table(snapshot, None))));
    }
    jobs.extend(small_raw.iter().map(|&at| raw_job(at)));
    // Then what needs the ground truth, the longest first.
    jobs.push(Box::new(|| {
        rest.fill(|| {
            let aggregate = aggregate.get()?;
            let aggregate = aggregate.as_bytes();
            let datasheet = datasheet::render(kind, snapshot, aggregate, info, &counts(snapshot));
            let mut rest = Vec::new();
            for (name, bytes) in kind.release_files(snapshot, aggregate)? {
                rest.push(one(&name, &mut |out| out.write_all(&bytes).map_err(packing))?);
            }
            rest.push(one(DATASHEET, &mut |out| out.write_all(datasheet.as_bytes()).map_err(packing))?);
            if with_hf {
                let tables = SnapshotTables::of(responses_table.take()?, items_table.take()?);
                let mut each = |name: &str, write: WriteFile<'_>| {
                    rest.push(one(name, write)?);
                    Ok(())
                };
                super::hf::each_file_with(kind, snapshot, aggregate, info, &datasheet, None, tables, &mut each)?;
            }
            Ok(rest)
        })
    }));
    jobs.push(Box::new(|| {
        truth_json.fill(|| {
            let aggregate = aggregate.get()?;
            one(GROUND_TRUTH_JSON, &mut |out| pretty_from_text(out, aggregate.as_bytes()))
        })
    }));
    jobs.push(Box::new(|| {
        truth_csv.fill(|| {
            let aggregate = aggregate.get()?;
            one(GROUND_TRUTH_CSV, &mut |out| {
                let mut csv = CsvRows::new(out);
                kind.export_rows(aggregate.as_bytes(), &mut |row| csv.row(row));
                csv.finish().map(drop)
            })
        })
    }));
    lanes.share(jobs);
    crate::core::heavy::return_freed_memory();
    // Gathered in archive order; the first failure in that order is the one
    // reported (a job that needed it says only that an earlier part failed).
    aggregate.finish()?;
    let mut files = Vec::new();
    for made in raw_made {
        files.extend(made.finish()?);
    }
    for made in [truth_json, truth_csv, responses] {
        files.extend(made.finish()?);
    }
    // Releases of earlier formats have no `hf/` folder: their tables are never made.
    if with_hf {
        for made in [responses_table, items_table] {
            made.finish()?;
        }
    }
    files.extend(rest.finish()?.into_iter().flatten());
    Ok(files)
}

/// Writes compact JSON text as [`pretty_json`] writes the same document
/// (the text's key order kept, numbers and strings written again by the
/// same serializer), without building it in memory.
fn pretty_from_text(out: &mut dyn Write, text: &[u8]) -> Result<()> {
    let internal = |e: String| crate::core::Error::internal("writing the ground truth", e);
    let mut reader = serde_json::Deserializer::from_slice(text);
    let mut writer = serde_json::Serializer::pretty(&mut *out);
    serde_transcode::transcode(&mut reader, &mut writer).map_err(|e| internal(e.to_string()))?;
    out.write_all(b"\n").map_err(|e| internal(e.to_string()))
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

/// All files of a release (manifest, raw, derived) under the directory
/// `root`, in archive order, each compressed from the moment it is made
/// ([`Packed`]); and the manifest.
pub fn build(
    kind: &dyn TaskKind,
    snapshot: &Snapshot,
    info: &ReleaseInfo,
    root: &str,
    mtime: u64,
) -> Result<(Value, Vec<Packed>)> {
    let make = |name: &str, write: WriteFile<'_>| Packed::written(root, name.to_owned(), mtime, write);
    let files = release_files(kind, snapshot, info, FORMAT, true, Lanes::Two, &make)?;
    let mut files: Vec<Packed> = files.into_iter().map(|(_, packed)| packed).collect();
    let manifest = manifest(kind, snapshot, info, &files);
    let manifest_bytes = pretty_json(&manifest)?;
    let digest = manifest_digest(&manifest_bytes);
    files.insert(0, Packed::new(root, MANIFEST_DIGEST.to_owned(), mtime, digest.as_bytes())?);
    files.insert(0, Packed::new(root, MANIFEST.to_owned(), mtime, &manifest_bytes)?);
    Ok((manifest, files))
}

/// What verification found: every problem names its file.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Verification {
    /// Files checked against the manifest.
    pub checked: usize,
    /// Problems, one line each.
    pub problems: Vec<String>,
}

/// A file's size and SHA-256 (hex), as an archive holds it.
pub type FileDigest = (u64, String);

/// Every file of an archive by name, with its [`FileDigest`].
pub type Digests = BTreeMap<String, FileDigest>;

/// Whether verification needs a file's bytes (the manifest and its
/// digest); of the others it needs their [`FileDigest`], and of the raw data
/// its parse ([`super::snapshot::RawFiles`]).
pub fn verification_reads(name: &str) -> bool {
    name == MANIFEST || name == MANIFEST_DIGEST
}

/// A writer that keeps only the size and SHA-256 of what passes through.
#[derive(Default)]
pub struct DigestWriter {
    hasher: Sha256,
    size: u64,
}

impl Write for DigestWriter {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.hasher.update(buf);
        self.size += buf.len() as u64;
        Ok(buf.len())
    }

    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

impl DigestWriter {
    /// The size and SHA-256 of everything written.
    pub fn digest(self) -> FileDigest {
        (self.size, hex::encode(self.hasher.finalize()))
    }
}

/// [`verify_digests`] of an archive held unpacked in memory.
pub fn verify(files: &BTreeMap<String, Vec<u8>>, kinds: &crate::core::Registry) -> Verification {
    let digests = files.iter().map(|(name, bytes)| (name.clone(), digest_of(bytes))).collect();
    let kept = files.iter().filter(|(name, _)| verification_reads(name)).map(|(n, b)| (n.clone(), b.clone())).collect();
    verify_digests(&digests, kept, Snapshot::from_raw_files(files), kinds)
}

fn digest_of(bytes: &[u8]) -> FileDigest {
    (bytes.len() as u64, hex::encode(Sha256::digest(bytes)))
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
    // Everything else the manifest says, against what the raw data gives.
    let expected = self::manifest(kind, &snapshot, &info, &[]);
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
    let recomputed = match release_files(kind, &snapshot, &info, format, false, Lanes::One, &digest) {
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

#[cfg(test)]
mod tests {
    #[test]
    fn the_pretty_ground_truth_from_text_is_the_values_byte_for_byte() {
        // 0.9672889195007827 is read back one unit in the last place off
        // without serde_json's `float_roundtrip` (seen in a release at scale).
        let value = serde_json::json!({"alpha": 0.9672889195007827, "b": [1, -2.5e-12, "x\"y\n", null, {}, []],
                                       "a": {"n": 18446744073709551615u64, "m": -3, "f": 0.1}});
        let mut out = Vec::new();
        super::pretty_from_text(&mut out, value.to_string().as_bytes()).expect("written");
        assert_eq!(
            String::from_utf8(out).expect("utf-8"),
            String::from_utf8(super::pretty_json(&value).expect("pretty")).expect("utf-8")
        );
    }
}
