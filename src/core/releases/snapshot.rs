//! A campaign's raw data at one moment: what a release stores under `raw/`
//! and every derived file is computed from. The live exports that a release
//! repeats are computed from a snapshot too, so both come from one code path.

use crate::core::campaign::states::{AssignmentState, CampaignState};
use crate::core::item::payload::Payload;
use crate::core::kind::contract::{ItemRecord, ResponseRecord, StoredInput};
use crate::error::{Error, Result};
use chrono::{DateTime, Utc};
use serde_json::Value;
use std::collections::{BTreeMap, HashSet};
use std::sync::Arc;
use uuid::Uuid;

/// The campaign as it was.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapCampaign {
    /// Campaign id.
    pub id: Uuid,
    /// Name.
    pub name: String,
    /// Kind.
    pub kind: String,
    /// State when the snapshot was taken (`open`: answers may still come in).
    pub state: CampaignState,
    /// The kind's configuration (releases made before the core's settings
    /// had their own place hold `lease_minutes` and `review` here too).
    pub config: Value,
    /// The core's settings (absent in releases made before they existed;
    /// the link and reconciliation rules only when they differ from their
    /// defaults, so a campaign that never set them is released as before).
    #[serde(default, skip_serializing_if = "Option::is_none", serialize_with = "settings_as_released")]
    pub settings: Option<crate::core::campaign::settings::CoreSettings>,
}

/// The core's settings as a release writes them: the keys added after
/// releases existed are left out at their defaults (the others in the
/// order they always had).
fn settings_as_released<S: serde::Serializer>(
    settings: &Option<crate::core::campaign::settings::CoreSettings>,
    out: S,
) -> std::result::Result<S::Ok, S::Error> {
    use crate::core::campaign::settings::{
        AnnotatorsPerBatch, GroundTruthFrom, Participants, DEFAULT_FIRST_ANSWER_WITHIN, DEFAULT_JOINS_PER_ADDRESS,
    };
    #[derive(serde::Serialize)]
    struct Released {
        participants: Participants,
        lease_minutes: i32,
        annotators_per_batch: AnnotatorsPerBatch,
        review: bool,
        #[serde(skip_serializing_if = "is_default_joins")]
        joins_per_address: i32,
        #[serde(skip_serializing_if = "is_default_first_answer")]
        first_answer_within: i32,
        #[serde(skip_serializing_if = "is_all")]
        ground_truth_from: GroundTruthFrom,
        #[serde(skip_serializing_if = "is_fixed")]
        overlap: crate::core::campaign::settings::Overlap,
    }
    fn is_fixed(o: &crate::core::campaign::settings::Overlap) -> bool {
        *o == crate::core::campaign::settings::Overlap::Fixed
    }
    fn is_default_joins(n: &i32) -> bool {
        *n == DEFAULT_JOINS_PER_ADDRESS
    }
    fn is_default_first_answer(n: &i32) -> bool {
        *n == DEFAULT_FIRST_ANSWER_WITHIN
    }
    fn is_all(g: &GroundTruthFrom) -> bool {
        *g == GroundTruthFrom::All
    }
    let released = settings.map(|s| Released {
        participants: s.participants,
        lease_minutes: s.lease_minutes,
        annotators_per_batch: s.annotators_per_batch,
        review: s.review,
        joins_per_address: s.joins_per_address,
        first_answer_within: s.first_answer_within,
        ground_truth_from: s.ground_truth_from,
        overlap: s.overlap,
    });
    serde::Serialize::serialize(&released, out)
}

/// Writes one raw file of a snapshot.
pub type RawWrite<'a> = Box<dyn Fn(&mut dyn std::io::Write) -> Result<()> + Send + Sync + 'a>;

/// An item with its hidden answer.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapItem {
    /// Item id.
    pub id: Uuid,
    /// The importer's id.
    pub external_id: String,
    /// Payload.
    pub payload: Payload,
    /// Gold answer, if any.
    pub gold: Option<Value>,
}

/// A batch (questionnaire) with its items in order.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapBatch {
    /// Batch id.
    pub id: Uuid,
    /// Its id in an imported source, if any.
    pub external_id: Option<String>,
    /// Position in the campaign.
    pub position: i32,
    /// Item ids in order.
    pub items: Vec<Uuid>,
    /// For a review batch: the assignment it reviews.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review_of: Option<Uuid>,
}

/// One annotator's take of a batch.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapAssignment {
    /// Assignment id.
    pub id: Uuid,
    /// Its id in an imported source, if any.
    pub external_id: Option<String>,
    /// The batch.
    pub batch_id: Uuid,
    /// The annotator (pseudonymous in a release).
    pub annotator: Uuid,
    /// Active, completed or expired.
    pub state: AssignmentState,
    /// When it was submitted (RFC 3339, microseconds).
    pub submitted_at: Option<String>,
}

/// One response.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapResponse {
    /// The assignment it belongs to.
    pub assignment_id: Uuid,
    /// The batch.
    pub batch_id: Uuid,
    /// The item.
    pub item_id: Uuid,
    /// The annotator (pseudonymous in a release).
    pub annotator: Uuid,
    /// The answer (one shared copy per distinct answer when loaded).
    pub answer: std::sync::Arc<Value>,
    /// 1-based position of the item in its batch.
    pub position: Option<i32>,
    /// When it was given (written as [`time`] writes it).
    #[serde(with = "micros")]
    pub answered_at: DateTime<Utc>,
    /// When it was last changed (written as [`time`] writes it).
    #[serde(with = "micros")]
    pub changed_at: DateTime<Utc>,
    /// Time the annotator spent, as the page measured it.
    pub time_on_task_ms: Option<i32>,
    /// Why it does not count, if it does not (one shared copy per distinct
    /// reason when loaded: a curation run excludes tens of thousands).
    pub excluded_reason: Option<Arc<str>>,
}

/// Background answers of one annotator.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapProfile {
    /// The annotator (pseudonymous in a release).
    pub annotator: Uuid,
    /// Their answers.
    pub answers: Value,
}

/// One model's scores as uploaded (`[[query, candidate, score], ...]` for
/// retrieval models; the kind's own shape otherwise).
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct SnapModelScores {
    /// The model's name.
    pub model: String,
    /// Its scores.
    pub scores: Value,
}

/// Everything a release holds as raw data.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub struct Snapshot {
    /// The campaign.
    pub campaign: SnapCampaign,
    /// Items in import order.
    pub items: Vec<SnapItem>,
    /// Batches by position.
    pub batches: Vec<SnapBatch>,
    /// Assignments by batch position, then submission.
    pub assignments: Vec<SnapAssignment>,
    /// Responses in the order they were given.
    pub responses: Vec<SnapResponse>,
    /// Background answers by annotator.
    pub profiles: Vec<SnapProfile>,
    /// Models' scores uploaded to the campaign, by model (absent in releases
    /// made before they were recorded).
    #[serde(default)]
    pub model_scores: Vec<SnapModelScores>,
    /// The crowd platform's worker id (or account name) per annotator: only
    /// in live snapshots for admins, never in a release.
    #[serde(skip)]
    pub worker_ids: BTreeMap<Uuid, String>,
}

/// A moment kept as itself and written as [`time`] writes it: every
/// response's two times as text would be a large part of a snapshot.
mod micros {
    use chrono::{DateTime, Utc};
    use serde::{Deserialize, Deserializer, Serializer};

    pub fn serialize<S: Serializer>(t: &DateTime<Utc>, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(&crate::core::support::export_time::time(*t))
    }

    pub fn deserialize<'de, D: Deserializer<'de>>(d: D) -> Result<DateTime<Utc>, D::Error> {
        let text = <std::borrow::Cow<'de, str>>::deserialize(d)?;
        DateTime::parse_from_rfc3339(&text).map(|t| t.with_timezone(&Utc)).map_err(serde::de::Error::custom)
    }
}

/// Which of a campaign's bulky tables a snapshot reads (the rest is small).
#[derive(Debug, Clone, Copy)]
pub struct Parts {
    /// Items with their payloads and gold answers.
    pub items: bool,
    /// Responses.
    pub responses: bool,
}

impl Parts {
    /// Everything: what a release and the ground truth need.
    pub const ALL: Self = Self { items: true, responses: true };
}

/// One shared copy of each distinct exclusion reason.
#[derive(Default)]
pub(super) struct Reasons(HashSet<Arc<str>>);

impl Reasons {
    /// The shared copy of `reason`.
    pub(super) fn share(&mut self, reason: &str) -> Arc<str> {
        if let Some(shared) = self.0.get(reason) {
            return shared.clone();
        }
        let shared: Arc<str> = Arc::from(reason);
        self.0.insert(shared.clone());
        shared
    }
}

impl Snapshot {
    /// The kind's configuration (without the core's own settings).
    pub fn kind_config(&self) -> Value {
        let mut c = self.campaign.config.clone();
        if let Some(obj) = c.as_object_mut() {
            obj.remove("review");
            obj.remove("lease_minutes");
        }
        c
    }

    /// What the kind aggregates, exactly as [`crate::core::truth::ground_truth::input`]
    /// selects it: responses not excluded, except by an earlier curation run.
    pub fn aggregation_input(&self) -> StoredInput {
        let submitted: std::collections::HashSet<Uuid> =
            self.assignments.iter().filter(|a| a.state == AssignmentState::Completed).map(|a| a.id).collect();
        let reviews: BTreeMap<Uuid, Uuid> = self.batches.iter().filter_map(|b| Some((b.id, b.review_of?))).collect();
        let counted = |r: &&SnapResponse| r.excluded_reason.as_deref().is_none_or(|e| e.starts_with("curation:"));
        // Sized first: collected through a filter, the list grew by doubling,
        // and the allocator kept the outgrown copies at hand, as much again
        // as the list (a release cut's peak, at VTON-QBench size).
        let mut responses = Vec::with_capacity(self.responses.iter().filter(counted).count());
        responses.extend(self.responses.iter().filter(counted).map(|r| ResponseRecord {
            assignment_id: r.assignment_id,
            reviews: reviews.get(&r.batch_id).copied(),
            batch_id: r.batch_id,
            item_id: r.item_id,
            annotator_id: r.annotator,
            answer: r.answer.clone(),
            submitted: submitted.contains(&r.assignment_id),
            position: r.position,
        }));
        StoredInput {
            items: self
                .items
                .iter()
                .map(|i| ItemRecord {
                    id: i.id,
                    external_id: i.external_id.clone(),
                    payload: i.payload.clone(),
                    gold: i.gold.clone(),
                })
                .collect(),
            responses,
            worker_ids: self.worker_ids.clone(),
            batch_names: self.batches.iter().filter_map(|b| Some((b.id, b.external_id.clone()?))).collect(),
            participants: Default::default(),
            review: self.campaign.settings.map_or_else(
                || self.campaign.config.get("review").and_then(Value::as_bool).unwrap_or(false),
                |s| s.review,
            ),
        }
    }

    /// Distinct annotators who gave any response.
    pub fn annotators(&self) -> usize {
        self.responses.iter().map(|r| r.annotator).collect::<std::collections::BTreeSet<_>>().len()
    }

    /// The raw files of a release, the snapshot split by table: each
    /// file's name and what writes it (each on its own, so that lanes can
    /// share them out).
    pub fn raw_files(&self) -> Vec<(&'static str, RawWrite<'_>)> {
        let mut files: Vec<(&'static str, RawWrite<'_>)> = vec![
            ("raw/campaign.json", Box::new(|out| write_pretty_json(out, &self.campaign))),
            ("raw/items.jsonl", Box::new(|out| write_json_lines(out, &self.items))),
            ("raw/batches.jsonl", Box::new(|out| write_json_lines(out, &self.batches))),
            ("raw/assignments.jsonl", Box::new(|out| write_json_lines(out, &self.assignments))),
            ("raw/responses.jsonl", Box::new(|out| write_json_lines(out, &self.responses))),
            ("raw/background.jsonl", Box::new(|out| write_json_lines(out, &self.profiles))),
        ];
        if !self.model_scores.is_empty() {
            files.push(("raw/model_scores.jsonl", Box::new(|out| write_json_lines(out, &self.model_scores))));
        }
        files
    }

    /// Reads the raw files back (as [`raw_files`](Self::raw_files) wrote them).
    pub fn from_raw_files(files: &BTreeMap<String, Vec<u8>>) -> std::result::Result<Self, String> {
        let mut raw = RawFiles::default();
        for (name, bytes) in files.iter().filter(|(name, _)| RawFiles::reads(name)) {
            raw.read(name, &mut bytes.as_slice())?;
        }
        raw.snapshot()
    }
}

/// A snapshot read back from a release's raw files as they stream past:
/// each table parsed a line at a time, its text never held whole.
#[derive(Default)]
pub struct RawFiles {
    campaign: Option<SnapCampaign>,
    items: Option<Vec<SnapItem>>,
    batches: Option<Vec<SnapBatch>>,
    assignments: Option<Vec<SnapAssignment>>,
    responses: Option<Vec<SnapResponse>>,
    profiles: Option<Vec<SnapProfile>>,
    model_scores: Option<Vec<SnapModelScores>>,
}

impl RawFiles {
    /// Whether `name` is a raw file this reads.
    pub fn reads(name: &str) -> bool {
        name.starts_with("raw/")
    }

    /// Reads one raw file by its name in the archive (other names are
    /// passed over): `raw/campaign.json`, `raw/<table>.jsonl`, or
    /// `raw/<table>.json` (one JSON array, in releases of format 1).
    pub fn read(&mut self, name: &str, content: &mut dyn std::io::BufRead) -> std::result::Result<(), String> {
        if name == "raw/campaign.json" {
            self.campaign = Some(serde_json::from_reader(content).map_err(|e| format!("{name}: {e}"))?);
            return Ok(());
        }
        let Some(table) = name.strip_prefix("raw/").and_then(|t| t.strip_suffix(".jsonl").or(t.strip_suffix(".json")))
        else {
            return Ok(());
        };
        match table {
            "items" => self.items = Some(rows(name, content, Some)?),
            "batches" => self.batches = Some(rows(name, content, Some)?),
            "assignments" => self.assignments = Some(rows(name, content, Some)?),
            "responses" => {
                // One shared copy of each distinct answer, shared as it is read.
                let mut shared = crate::core::truth::shared_answers::SharedAnswers::default();
                let mut reasons = Reasons::default();
                self.responses = Some(rows(name, content, |mut r: SnapResponse| {
                    r.answer = shared.share(r.answer);
                    r.excluded_reason = r.excluded_reason.map(|e| reasons.share(&e));
                    Some(r)
                })?)
            }
            "background" => self.profiles = Some(rows(name, content, Some)?),
            "model_scores" => self.model_scores = Some(rows(name, content, Some)?),
            _ => {}
        }
        Ok(())
    }

    /// The snapshot the files read make; a file it needs that was not read is named.
    pub fn snapshot(self) -> std::result::Result<Snapshot, String> {
        fn needed<T>(table: Option<T>, name: &str) -> std::result::Result<T, String> {
            table.ok_or_else(|| format!("raw/{name}.jsonl is missing"))
        }
        Ok(Snapshot {
            campaign: self.campaign.ok_or("raw/campaign.json is missing")?,
            items: needed(self.items, "items")?,
            batches: needed(self.batches, "batches")?,
            assignments: needed(self.assignments, "assignments")?,
            responses: needed(self.responses, "responses")?,
            profiles: needed(self.profiles, "background")?,
            // Only releases with uploaded model scores hold the file.
            model_scores: self.model_scores.unwrap_or_default(),
            worker_ids: BTreeMap::new(),
        })
    }
}

/// The longest line of a raw JSON Lines table a release is read with (a
/// record is one response, item or batch: kilobytes at most).
const RECORD_LIMIT: u64 = 16 * 1024 * 1024;

/// The records of a raw table (`name` says its form: JSON Lines, or one
/// JSON array), each passed through `keep` as it is read. `T` may read only
/// some of each record's fields.
fn rows<T: serde::de::DeserializeOwned>(
    name: &str,
    content: &mut dyn std::io::BufRead,
    mut keep: impl FnMut(T) -> Option<T>,
) -> std::result::Result<Vec<T>, String> {
    if !name.ends_with(".jsonl") {
        let rows: Vec<T> = serde_json::from_reader(content).map_err(|e| format!("{name}: {e}"))?;
        return Ok(rows.into_iter().filter_map(keep).collect());
    }
    let (mut rows, mut line) = (Vec::new(), Vec::new());
    for number in 1.. {
        line.clear();
        // A record longer than any the service writes is refused before it is held whole.
        let mut record = std::io::Read::take(&mut *content, RECORD_LIMIT + 1);
        let read = std::io::BufRead::read_until(&mut record, b'\n', &mut line).map_err(|e| format!("{name}: {e}"))?;
        if read == 0 {
            break;
        }
        if read as u64 > RECORD_LIMIT {
            return Err(format!("{name} line {number}: longer than {RECORD_LIMIT} bytes"));
        }
        let text = line.strip_suffix(b"\n").unwrap_or(&line);
        if text.is_empty() {
            continue;
        }
        let row = serde_json::from_slice(text).map_err(|e| format!("{name} line {number}: {e}"))?;
        rows.extend(keep(row));
    }
    Ok(rows)
}

/// A raw table of a release's files: JSON Lines (`raw/<table>.jsonl`), or
/// one JSON array (`raw/<table>.json`) in releases of format 1. `T` may
/// read only some of each record's fields.
pub fn raw_table<T: serde::de::DeserializeOwned>(
    files: &BTreeMap<String, Vec<u8>>,
    table: &str,
) -> std::result::Result<Vec<T>, String> {
    let name = format!("raw/{table}.jsonl");
    match files.get(&name) {
        Some(bytes) => rows(&name, &mut bytes.as_slice(), Some),
        None => {
            let name = format!("raw/{table}.json");
            let bytes = files.get(&name).ok_or_else(|| format!("{name} is missing"))?;
            rows(&name, &mut bytes.as_slice(), Some)
        }
    }
}

/// Writes a table as JSON Lines: one compact record a line, a fraction of
/// the size of pretty JSON.
pub fn write_json_lines<T: serde::Serialize>(out: &mut dyn std::io::Write, rows: &[T]) -> Result<()> {
    for row in rows {
        serde_json::to_writer(&mut *out, row).map_err(|e| Error::internal("writing the release's raw data", e))?;
        out.write_all(b"\n").map_err(|e| Error::internal("writing the release's raw data", e))?;
    }
    Ok(())
}

/// Writes [`pretty_json`] into `out` as it is made.
pub fn write_pretty_json<T: serde::Serialize>(out: &mut dyn std::io::Write, value: &T) -> Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(|e| Error::internal("writing the release's raw data", e))?;
    out.write_all(b"\n").map_err(|e| Error::internal("writing the release's raw data", e))
}

/// Pretty JSON with a final newline: how every JSON file of a release is written.
pub fn pretty_json<T: serde::Serialize>(value: &T) -> Result<Vec<u8>> {
    let mut bytes = Vec::new();
    write_pretty_json(&mut bytes, value)?;
    Ok(bytes)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_responses_times_are_written_as_before_and_read_back_exactly() {
        // As releases have always written them: RFC 3339, microseconds, `Z`.
        let raw = serde_json::json!({
            "assignment_id": Uuid::from_u128(1), "batch_id": Uuid::from_u128(2), "item_id": Uuid::from_u128(3),
            "annotator": Uuid::from_u128(4), "answer": {"rating": 2}, "position": 7,
            "answered_at": "2026-11-27T01:02:03.000456Z", "changed_at": "2026-11-27T01:02:04.100000Z",
            "time_on_task_ms": null, "excluded_reason": null
        });
        let response: SnapResponse = serde_json::from_value(raw.clone()).expect("read");
        assert_eq!(crate::core::support::export_time::time(response.answered_at), "2026-11-27T01:02:03.000456Z");
        assert_eq!(serde_json::to_value(&response).expect("written"), raw);
        let not_a_time = raw.as_object().cloned().map(|mut o| {
            o.insert("changed_at".into(), "yesterday".into());
            Value::Object(o)
        });
        assert!(serde_json::from_value::<SnapResponse>(not_a_time.expect("object")).is_err(), "not a time");
    }

    fn small() -> Snapshot {
        let (item, batch, assignment, annotator) =
            (Uuid::from_u128(1), Uuid::from_u128(2), Uuid::from_u128(3), Uuid::from_u128(4));
        let answered_at = DateTime::parse_from_rfc3339("2026-11-27T01:02:03.000456Z").expect("time").to_utc();
        let response = |rating: i32| SnapResponse {
            assignment_id: assignment,
            batch_id: batch,
            item_id: item,
            annotator,
            answer: std::sync::Arc::new(serde_json::json!({"rating": rating})),
            position: Some(1),
            answered_at,
            changed_at: answered_at,
            time_on_task_ms: Some(1200),
            excluded_reason: None,
        };
        Snapshot {
            campaign: SnapCampaign {
                id: Uuid::from_u128(9),
                name: "c".into(),
                kind: "vton".into(),
                state: CampaignState::Open,
                config: serde_json::json!({}),
                settings: None,
            },
            items: vec![SnapItem {
                id: item,
                external_id: "i1".into(),
                payload: Payload::of(&serde_json::json!({"tryon": "/t.jpg"})),
                gold: None,
            }],
            batches: vec![SnapBatch { id: batch, external_id: None, position: 0, items: vec![item], review_of: None }],
            assignments: vec![SnapAssignment {
                id: assignment,
                external_id: None,
                batch_id: batch,
                annotator,
                state: AssignmentState::Completed,
                submitted_at: None,
            }],
            responses: vec![response(2), response(3), response(2)],
            profiles: Vec::new(),
            model_scores: Vec::new(),
            worker_ids: BTreeMap::new(),
        }
    }

    fn raw_files(snapshot: &Snapshot) -> BTreeMap<String, Vec<u8>> {
        let write = |(name, write): (&str, RawWrite<'_>)| {
            let mut bytes = Vec::new();
            write(&mut bytes).expect("written");
            (name.to_owned(), bytes)
        };
        snapshot.raw_files().into_iter().map(write).collect()
    }

    #[test]
    fn raw_files_read_a_line_at_a_time_give_back_the_snapshot_with_answers_shared() {
        let mut snapshot = small();
        for r in [0, 2] {
            snapshot.responses[r].excluded_reason = Some(Arc::from("curation: run rule"));
        }
        let back = Snapshot::from_raw_files(&raw_files(&snapshot)).expect("read back");
        assert_eq!(back, snapshot);
        assert!(Arc::ptr_eq(&back.responses[0].answer, &back.responses[2].answer), "equal answers shared");
        let reasons = [0, 2].map(|r| back.responses[r].excluded_reason.clone().expect("excluded"));
        assert!(Arc::ptr_eq(&reasons[0], &reasons[1]), "equal reasons shared");
        // A file read in small pieces, as an archive streams it, reads the same.
        let files = raw_files(&snapshot);
        let mut raw = RawFiles::default();
        for (name, bytes) in &files {
            raw.read(name, &mut std::io::BufReader::with_capacity(7, bytes.as_slice())).expect("read");
        }
        assert_eq!(raw.snapshot().expect("snapshot"), snapshot);
    }

    #[test]
    fn a_payload_kept_as_text_is_written_as_its_value_was_whatever_spacing_it_was_read_with() {
        let value =
            serde_json::json!({"tryon": "/t.jpg", "garment": "/g é.jpg", "n": 1.5, "list": [1, {"b": 2, "a": 1}]});
        let item =
            SnapItem { id: Uuid::from_u128(1), external_id: "i".into(), payload: Payload::of(&value), gold: None };
        let written = serde_json::to_string(&item).expect("written");
        let as_value = format!(r#"{{"id":"{}","external_id":"i","payload":{value},"gold":null}}"#, item.id);
        assert_eq!(written, as_value, "the raw line, byte for byte");
        let as_value: Value = serde_json::from_str(&written).expect("JSON");
        let pretty = serde_json::to_string_pretty(&as_value).expect("pretty");
        let back: SnapItem = serde_json::from_str(&pretty).expect("read back");
        assert_eq!(back, item, "the spacing read is not kept");
    }

    #[test]
    fn a_broken_raw_line_or_a_missing_table_is_named() {
        let mut files = raw_files(&small());
        let responses = files.get_mut("raw/responses.jsonl").expect("responses");
        let second = responses.iter().position(|b| *b == b'\n').expect("a line") + 1;
        responses.insert(second, b'x');
        let e = Snapshot::from_raw_files(&files).expect_err("broken");
        assert!(e.starts_with("raw/responses.jsonl line 2: "), "{e}");
        files.remove("raw/responses.jsonl");
        assert_eq!(Snapshot::from_raw_files(&files).expect_err("missing"), "raw/responses.jsonl is missing");
    }
}
