//! What a release archive holds and how its files are named, counted and
//! digested: the format both writing and verifying an archive follow.

use crate::core::kind::contract::CampaignRules;
pub use crate::core::releases::lanes::Lanes;
use crate::core::releases::snapshot::Snapshot;
use crate::error::Result;
use serde_json::{json, Value};
use sha2::{Digest, Sha256};
use std::collections::BTreeMap;
use std::io::Write;

/// Writes one release file into the writer it is given.
pub type WriteFile<'a> = &'a mut dyn FnMut(&mut dyn Write) -> Result<()>;

/// Takes release files one at a time: a file's name and what writes it.
pub type EachFile<'a> = &'a mut dyn FnMut(&str, WriteFile<'_>) -> Result<()>;

/// The manifest's format tag: version 2 writes the manifest's digest beside
/// it ([`MANIFEST_DIGEST`]); version 3 adds the Hugging Face folder
/// ([`hf::DIR`](crate::core::releases::hf::DIR)).
pub const FORMAT: &str = "atelier-release/3";
/// Earlier format tags that verification still reads.
pub const EARLIER_FORMATS: [&str; 2] = ["atelier-release/1", "atelier-release/2"];
/// The one format without [`MANIFEST_DIGEST`].
pub(super) const FORMAT_WITHOUT_DIGEST: &str = "atelier-release/1";
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
        "submissions": snapshot.assignments.iter().filter(|a| a.state == crate::core::campaign::states::AssignmentState::Completed).count(),
    })
}

/// The parameters that shaped the result; with the platform's
/// reconciliation (see `core::crowd::reconciliation`), whose work counted and how
/// many workers each of its rules left out (absent for campaigns that never
/// used it, whose manifests stay as they were).
pub fn parameters(rules: &dyn CampaignRules, snapshot: &Snapshot) -> Value {
    use crate::core::campaign::marks::{NOT_ON_PLATFORM, REJECTED_ON_PLATFORM};
    use crate::core::campaign::settings::GroundTruthFrom;
    let mut parameters = json!({
        "config": snapshot.campaign.config,
        "kind": rules.policy().release_parameters,
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
            .filter(|a| a.state == crate::core::campaign::states::AssignmentState::Completed)
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

/// A file's size and SHA-256 (hex), as an archive holds it.
pub type FileDigest = (u64, String);

/// Every file of an archive by name, with its [`FileDigest`].
pub type Digests = BTreeMap<String, FileDigest>;

/// Whether verification needs a file's bytes (the manifest and its
/// digest); of the others it needs their [`FileDigest`], and of the raw data
/// its parse ([`crate::core::releases::snapshot::RawFiles`]).
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

pub(super) fn digest_of(bytes: &[u8]) -> FileDigest {
    (bytes.len() as u64, hex::encode(Sha256::digest(bytes)))
}
