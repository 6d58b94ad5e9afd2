//! A release's files: the derived ones computed from a snapshot, the
//! manifest, and verification of an archive against its manifest by
//! recomputing every derived file. The `.tar.gz` that holds them is
//! [`crate::core::releases::packing`]'s.

pub use super::format::{
    counts, manifest_digest, parameters, verification_reads, DigestWriter, Digests, EachFile, FileDigest, ReleaseInfo,
    WriteFile, DATASHEET, EARLIER_FORMATS, FORMAT, GROUND_TRUTH_CSV, GROUND_TRUTH_JSON, MANIFEST, MANIFEST_DIGEST,
    RESPONSES_CSV,
};
pub use super::verify::{verify, verify_digests, Verification};
use crate::core::kind::contract::{CampaignRules, TaskKind};
use crate::core::releases::datasheet;
use crate::core::releases::hf::SnapshotTables;
pub use crate::core::releases::lanes::Lanes;
use crate::core::releases::lanes::{Job, Slot};
use crate::core::releases::packing::{packing, Packed};
use crate::core::releases::snapshot::{pretty_json, Snapshot};
use crate::core::support::csv_chunks::CsvRows;
use crate::error::Result;
use serde_json::{json, Value};
use std::io::Write;
use std::sync::Arc;

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
/// first), then those that need the ground truth (which wait for it): with
/// a fixed split (the aggregation beside the snapshot's files, then the
/// ground truth's beside the rest) one lane waited for the other.
#[allow(clippy::too_many_arguments)]
pub fn release_files<T: Send>(
    kind: &dyn TaskKind,
    rules: &dyn CampaignRules,
    snapshot: &Snapshot,
    info: &ReleaseInfo,
    format: &str,
    raw: bool,
    lanes: Lanes,
    make: Make<'_, T>,
) -> Result<Vec<(String, T)>> {
    // Each file's working memory goes back to the system once it is made,
    // before the next one's (a lower peak for a moment's work).
    let one = |name: &str, write: WriteFile<'_>| -> Result<(String, T)> {
        let made = make(name, write)?;
        crate::core::support::heavy::return_freed_memory();
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
            let text = crate::core::kind::contract::aggregate_json_with_reviews(rules, snapshot.aggregation_input());
            // What the aggregation freed is not left for the next job.
            crate::core::support::heavy::return_freed_memory();
            Ok(Arc::new(text))
        })
    })];
    // The snapshot's own files, the biggest first: the lanes end together.
    jobs.extend(big_raw.iter().map(|&at| raw_job(at)));
    jobs.push(Box::new(|| {
        responses.fill(|| {
            one(RESPONSES_CSV, &mut |out| {
                let mut csv = CsvRows::new(out);
                crate::core::releases::responses_rows::each_response_row(snapshot, &mut |row| csv.row(&row));
                csv.finish().map(drop)
            })
        })
    }));
    if with_hf {
        jobs.push(Box::new(|| responses_table.fill(|| crate::core::releases::hf::responses_table(snapshot))));
        jobs.push(Box::new(|| items_table.fill(|| crate::core::releases::hf::items_table(snapshot, None))));
    }
    jobs.extend(small_raw.iter().map(|&at| raw_job(at)));
    // Then what needs the ground truth, the longest first.
    jobs.push(Box::new(|| {
        rest.fill(|| {
            let aggregate = aggregate.get()?;
            let aggregate = aggregate.as_bytes();
            let datasheet = datasheet::render(kind, rules, snapshot, aggregate, info, &counts(snapshot));
            let mut rest = Vec::new();
            for (name, bytes) in rules.release_files(snapshot, aggregate)? {
                rest.push(one(&name, &mut |out| out.write_all(&bytes).map_err(packing))?);
            }
            rest.push(one(DATASHEET, &mut |out| out.write_all(datasheet.as_bytes()).map_err(packing))?);
            if with_hf {
                let tables = SnapshotTables::of(responses_table.take()?, items_table.take()?);
                let mut each = |name: &str, write: WriteFile<'_>| {
                    rest.push(one(name, write)?);
                    Ok(())
                };
                crate::core::releases::hf::each_file_with(
                    kind, rules, snapshot, aggregate, info, &datasheet, None, tables, &mut each,
                )?;
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
                kind.export(aggregate.as_bytes(), false, &mut |row| csv.row(row));
                csv.finish().map(drop)
            })
        })
    }));
    lanes.share(jobs);
    crate::core::support::heavy::return_freed_memory();
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
    let internal = |e: String| crate::error::Error::internal("writing the ground truth", e);
    let mut reader = serde_json::Deserializer::from_slice(text);
    let mut writer = serde_json::Serializer::pretty(&mut *out);
    serde_transcode::transcode(&mut reader, &mut writer).map_err(|e| internal(e.to_string()))?;
    out.write_all(b"\n").map_err(|e| internal(e.to_string()))
}

/// `kind` bound to the snapshot's configuration: a configuration this build
/// no longer reads is refused, naming the campaign.
pub fn rules_of(kind: &dyn TaskKind, snapshot: &Snapshot) -> Result<Arc<dyn CampaignRules>> {
    crate::core::kind::registry::bind(kind, &snapshot.campaign.name, &snapshot.kind_config())
}

/// The manifest: identity, parameters, counts, and every file's hash and size.
pub fn manifest(rules: &dyn CampaignRules, snapshot: &Snapshot, info: &ReleaseInfo, files: &[Packed]) -> Value {
    let listed: Vec<Value> =
        files.iter().map(|f| json!({"name": f.name, "sha256": f.sha256, "size": f.size})).collect();
    json!({
        "format": FORMAT,
        "campaign": {"id": snapshot.campaign.id, "name": snapshot.campaign.name, "kind": snapshot.campaign.kind},
        "campaign_state": snapshot.campaign.state,
        "release": info,
        "parameters": parameters(rules, snapshot),
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
    let rules = rules_of(kind, snapshot)?;
    let files = release_files(kind, &*rules, snapshot, info, FORMAT, true, Lanes::Two, &make)?;
    let mut files: Vec<Packed> = files.into_iter().map(|(_, packed)| packed).collect();
    let manifest = manifest(&*rules, snapshot, info, &files);
    let manifest_bytes = pretty_json(&manifest)?;
    let digest = manifest_digest(&manifest_bytes);
    files.insert(0, Packed::new(root, MANIFEST_DIGEST.to_owned(), mtime, digest.as_bytes())?);
    files.insert(0, Packed::new(root, MANIFEST.to_owned(), mtime, &manifest_bytes)?);
    Ok((manifest, files))
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
