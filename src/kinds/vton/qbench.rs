//! The VTON-QBench release layout, out and in: `answers.csv` (one row per
//! submitted questionnaire, label ids 0/1/2 for ratings 1/2/3 in columns
//! `1`..`N`) and `images.csv` (one row per questionnaire position).
//!
//! Mapping: `form_id` = questionnaire (batch; its source id when imported),
//! `response_id` = one worker's submission (assignment; its source id when
//! imported), `answer_timestamp` = submission time (RFC 3339), `gender`,
//! `age`, `experience` = background answers, `answer_count` = 1-based
//! position, `garment_type` = category, `dataset_type` = dataset,
//! `vton_model_id` = model, `person_path` = person, `garment_path` =
//! garment, `ref_person_path` = reference, `vton_path` = try-on (also the
//! item's id on import).

use super::curation::SanityTask;
use crate::core::item::new_item::NewItem;
use crate::core::item::payload::Payload;
use crate::core::releases::snapshot::{Parts, SnapBatch, Snapshot};
use crate::core::support::csv_chunks::{CsvChunks, CsvRows};
use crate::core::work::history::{PastBatch, PastSubmission};
use crate::error::Code;
use crate::error::{Error, Result};
use chrono::{DateTime, NaiveDateTime, Utc};
use serde_json::{json, Map, Value};
use sqlx::PgPool;
use std::collections::{BTreeMap, HashMap};
use uuid::Uuid;

/// The fixed columns of `answers.csv`, before the positions.
pub const ANSWER_COLUMNS: [&str; 6] = ["form_id", "answer_timestamp", "gender", "age", "experience", "response_id"];
/// The columns of `images.csv`.
pub const IMAGE_COLUMNS: [&str; 9] = [
    "form_id",
    "answer_count",
    "garment_type",
    "dataset_type",
    "vton_model_id",
    "person_path",
    "garment_path",
    "ref_person_path",
    "vton_path",
];
/// The background questions the release records.
pub const BACKGROUND: [&str; 3] = ["gender", "age", "experience"];

/// `answers.csv` of a campaign: every submitted questionnaire, as CSV in
/// chunks for a streamed download.
pub async fn export_answers(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<bytes::Bytes>> {
    export(pool, campaign_id, Parts { items: false, responses: true }, write_answers).await
}

/// `images.csv` of a campaign: every position of every questionnaire, as CSV
/// in chunks for a streamed download.
pub async fn export_images(pool: &PgPool, campaign_id: Uuid) -> Result<Vec<bytes::Bytes>> {
    export(pool, campaign_id, Parts { items: true, responses: false }, write_images).await
}

/// A file of a snapshot holding only the `parts` it needs, written off the
/// async workers.
async fn export(
    pool: &PgPool,
    campaign_id: Uuid,
    parts: Parts,
    write: fn(&Snapshot, &mut CsvChunks),
) -> Result<Vec<bytes::Bytes>> {
    let snapshot = Snapshot::load_parts(pool, campaign_id, false, parts).await?;
    crate::core::support::heavy::run(move || {
        let mut csv = CsvChunks::default();
        write(&snapshot, &mut csv);
        csv.chunks()
    })
    .await?
}

fn form_id(b: &SnapBatch) -> String {
    b.external_id.clone().unwrap_or_else(|| b.id.to_string())
}

/// Writes `answers.csv` of a snapshot (the live export and a release's
/// file) row by row, never as a table of its cells.
pub fn write_answers<W: std::io::Write>(s: &Snapshot, csv: &mut CsvRows<W>) {
    let width = s.batches.iter().map(|b| b.items.len()).max().unwrap_or(0);
    let batches: HashMap<Uuid, &SnapBatch> = s.batches.iter().map(|b| (b.id, b)).collect();
    let profiles: HashMap<Uuid, &Value> = s.profiles.iter().map(|p| (p.annotator, &p.answers)).collect();
    // Each assignment's ratings by position, in the order they were given.
    let mut ratings: HashMap<Uuid, Vec<(i32, u64)>> = HashMap::new();
    for r in &s.responses {
        if let (Some(p), Some(v)) = (r.position, r.answer.get("rating").and_then(Value::as_u64)) {
            ratings.entry(r.assignment_id).or_default().push((p, v));
        }
    }
    let mut row: Vec<String> = ANSWER_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    row.extend((1..=width).map(|p| p.to_string()));
    csv.row(&row);
    let mut by_position: Vec<Option<u64>> = vec![None; width];
    for a in s.assignments.iter().filter(|a| a.state == crate::core::campaign::states::AssignmentState::Completed) {
        let Some(batch) = batches.get(&a.batch_id) else { continue };
        let bg = |k: &str| {
            profiles.get(&a.annotator).and_then(|b| b.get(k)).and_then(Value::as_str).unwrap_or("").to_owned()
        };
        row.clear();
        row.extend([
            form_id(batch),
            a.submitted_at.clone().unwrap_or_default(),
            bg("gender"),
            bg("age"),
            bg("experience"),
            a.external_id.clone().unwrap_or_else(|| a.id.to_string()),
        ]);
        by_position.fill(None);
        // A later rating of the same position wins.
        for &(p, v) in ratings.get(&a.id).map(Vec::as_slice).unwrap_or_default() {
            if let Some(slot) =
                usize::try_from(p).ok().and_then(|p| p.checked_sub(1)).and_then(|i| by_position.get_mut(i))
            {
                *slot = Some(v);
            }
        }
        row.extend(by_position.iter().map(|v| v.map(|v| v.saturating_sub(1).to_string()).unwrap_or_default()));
        csv.row(&row);
    }
}

/// Writes `images.csv` of a snapshot (the live export and a release's file)
/// row by row.
pub fn write_images<W: std::io::Write>(s: &Snapshot, csv: &mut CsvRows<W>) {
    // Each row's payload is parsed as it is written: all of them at once as
    // `Value`s would be held in the middle of a cut.
    let items: HashMap<Uuid, &Payload> = s.items.iter().map(|i| (i.id, &i.payload)).collect();
    let field = |p: &Value, k: &str| p.get(k).and_then(Value::as_str).unwrap_or("").to_owned();
    let mut row: Vec<String> = IMAGE_COLUMNS.iter().map(|c| (*c).to_owned()).collect();
    csv.row(&row);
    for b in &s.batches {
        for (i, item) in b.items.iter().enumerate() {
            let p = &items.get(item).map_or(Value::Null, |p| p.value());
            row.clear();
            row.extend([
                form_id(b),
                (i + 1).to_string(),
                field(p, "category"),
                field(p, "dataset"),
                field(p, "model"),
                field(p, "person"),
                field(p, "garment"),
                field(p, "reference"),
                field(p, "tryon"),
            ]);
            csv.row(&row);
        }
    }
}

/// One position of a questionnaire in `images.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct ImageRow {
    /// 1-based position.
    pub position: usize,
    /// The item as it is imported.
    pub payload: Value,
    /// The try-on path (the item's id, unless the image repeats; see [`items`]).
    pub tryon: String,
    /// Its line in `images.csv`.
    pub line: u64,
}

/// One row of `answers.csv`.
#[derive(Debug, Clone, PartialEq)]
pub struct AnswerRow {
    /// Questionnaire id.
    pub form_id: String,
    /// Submission id.
    pub response_id: String,
    /// Submission time.
    pub submitted_at: DateTime<Utc>,
    /// gender, age, experience (empty ones left out).
    pub background: Map<String, Value>,
    /// Rating (1-3) per 1-based position; unanswered positions absent.
    pub ratings: BTreeMap<usize, u8>,
    /// Its line in `answers.csv`.
    pub line: u64,
}

/// Both files, parsed and checked against each other.
#[derive(Debug, Clone, Default)]
pub struct Release {
    /// Questionnaires by `form_id`, positions in order (first appearance order kept).
    pub forms: Vec<(String, Vec<ImageRow>)>,
    /// Submissions.
    pub answers: Vec<AnswerRow>,
}

fn line_error(file: &str, line: u64, message: impl std::fmt::Display) -> Error {
    Error::invalid(Code::InvalidRelease, format!("{file} line {line}: {message}"))
}

/// Column positions by lower-case header name.
type Columns = HashMap<String, usize>;

/// A CSV reader over text, with the header's column positions.
fn reader<'a>(file: &str, text: &'a str, required: &[&str]) -> Result<(csv::Reader<&'a [u8]>, Columns)> {
    let mut r = csv::ReaderBuilder::new().trim(csv::Trim::All).flexible(true).from_reader(text.as_bytes());
    let header: HashMap<String, usize> = r
        .headers()
        .map_err(|e| line_error(file, 1, e))?
        .iter()
        .enumerate()
        .map(|(i, h)| (h.to_ascii_lowercase(), i))
        .collect();
    if let Some(missing) = required.iter().find(|c| !header.contains_key(**c)) {
        return Err(line_error(
            file,
            1,
            format!("the header has no column `{missing}` (expected {})", required.join(",")),
        ));
    }
    Ok((r, header))
}

/// Parses `images.csv` and `answers.csv`; every error names the file, line and field.
pub fn parse(answers_csv: &str, images_csv: &str) -> Result<Release> {
    let (mut r, cols) = reader("images.csv", images_csv, &IMAGE_COLUMNS)?;
    let mut forms: Vec<(String, Vec<ImageRow>)> = Vec::new();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (n, record) in r.records().enumerate() {
        let line = n as u64 + 2;
        let record = record.map_err(|e| line_error("images.csv", line, e))?;
        let get = |c: &str| record.get(cols[c]).unwrap_or("").to_owned();
        let position: usize = get("answer_count").parse().ok().filter(|p| *p > 0).ok_or_else(|| {
            line_error("images.csv", line, format!("answer_count: `{}` is not a position", get("answer_count")))
        })?;
        for c in ["form_id", "person_path", "garment_path", "ref_person_path", "vton_path"] {
            if get(c).is_empty() {
                return Err(line_error("images.csv", line, format!("{c} is empty")));
            }
        }
        let payload = json!({
            "garment": get("garment_path"), "person": get("person_path"), "tryon": get("vton_path"),
            "reference": get("ref_person_path"), "model": get("vton_model_id"), "category": get("garment_type"),
            "dataset": get("dataset_type"),
        });
        let form = get("form_id");
        let at = *index.entry(form.clone()).or_insert_with(|| {
            forms.push((form.clone(), Vec::new()));
            forms.len() - 1
        });
        if forms[at].1.iter().any(|i| i.position == position) {
            return Err(line_error("images.csv", line, format!("form `{form}` has position {position} twice")));
        }
        forms[at].1.push(ImageRow { position, payload, tryon: get("vton_path"), line });
    }
    for (_, rows) in &mut forms {
        rows.sort_by_key(|r| r.position);
    }
    let (mut r, cols) = reader("answers.csv", answers_csv, &ANSWER_COLUMNS)?;
    let mut answers = Vec::new();
    let mut seen: HashMap<String, u64> = HashMap::new();
    for (n, record) in r.records().enumerate() {
        let line = n as u64 + 2;
        let record = record.map_err(|e| line_error("answers.csv", line, e))?;
        let get = |c: &str| record.get(cols[c]).unwrap_or("").to_owned();
        let form_id = get("form_id");
        let Some(&at) = index.get(&form_id) else {
            return Err(line_error("answers.csv", line, format!("form_id: `{form_id}` is not in images.csv")));
        };
        let response_id = get("response_id");
        if response_id.is_empty() {
            return Err(line_error("answers.csv", line, "response_id is empty"));
        }
        if let Some(first) = seen.insert(response_id.clone(), line) {
            return Err(line_error(
                "answers.csv",
                line,
                format!("response_id `{response_id}` already on line {first}"),
            ));
        }
        let submitted_at = timestamp(&get("answer_timestamp")).ok_or_else(|| {
            line_error("answers.csv", line, format!("answer_timestamp: `{}` is not a time", get("answer_timestamp")))
        })?;
        let background: Map<String, Value> =
            BACKGROUND.iter().filter(|k| !get(k).is_empty()).map(|k| ((*k).to_owned(), Value::from(get(k)))).collect();
        let mut ratings = BTreeMap::new();
        for image in &forms[at].1 {
            let column = image.position.to_string();
            let Some(&c) = cols.get(&column) else {
                return Err(line_error(
                    "answers.csv",
                    line,
                    format!("the header has no column `{column}` for form `{form_id}`"),
                ));
            };
            match record.get(c).unwrap_or("") {
                "" => {}
                v @ ("0" | "1" | "2") => {
                    ratings.insert(image.position, v.as_bytes()[0] - b'0' + 1);
                }
                v => {
                    return Err(line_error(
                        "answers.csv",
                        line,
                        format!("{column}: `{v}` is not a label id (0, 1 or 2)"),
                    ))
                }
            }
        }
        answers.push(AnswerRow { form_id, response_id, submitted_at, background, ratings, line });
    }
    Ok(Release { forms, answers })
}

/// RFC 3339, or `YYYY-MM-DD HH:MM:SS[.f]` read as UTC.
fn timestamp(text: &str) -> Option<DateTime<Utc>> {
    if let Ok(t) = DateTime::parse_from_rfc3339(text) {
        return Some(t.with_timezone(&Utc));
    }
    ["%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S", "%Y/%m/%d %H:%M:%S"]
        .iter()
        .find_map(|f| NaiveDateTime::parse_from_str(text, f).ok())
        .map(|t| t.and_utc())
}

/// What a release imports as items, and which item sits at each place.
#[derive(Debug, Clone, Default)]
pub struct ItemPlan {
    /// The items, each once.
    pub items: Vec<NewItem>,
    /// The item's external id at each (form, position).
    pub at: HashMap<(String, usize), String>,
}

/// The items to import: one per try-on path; images at attention positions
/// become sanity tasks with the given expected rating and tolerance. An
/// image that a form repeats (the released v2 dummies sit at 25 and 35), or
/// that is an attention task at one place and not at another, becomes one
/// more item, `<path>@<position>`, with the same payload: the exported files
/// name the path as it was, and each place keeps its own expected rating.
pub fn items(release: &Release, attention: &BTreeMap<usize, SanityTask>) -> Result<ItemPlan> {
    let mut plan = ItemPlan::default();
    let mut index: HashMap<String, usize> = HashMap::new();
    for (form, rows) in &release.forms {
        let mut used: std::collections::HashSet<String> = std::collections::HashSet::new();
        for row in rows {
            let gold = attention.get(&row.position).map(|s| json!({"rating": s.expected, "tolerance": s.tolerance}));
            let candidates = [row.tryon.clone(), format!("{}@{}", row.tryon, row.position)];
            let key = candidates
                .iter()
                .find(|k| !used.contains(*k) && index.get(*k).is_none_or(|&i| plan.items[i].gold == gold))
                .cloned()
                .ok_or_else(|| {
                    line_error(
                        "images.csv",
                        row.line,
                        format!(
                            "vton_path: `{}` at position {} of form `{form}` repeats an image whose attention \
                             setting differs elsewhere",
                            row.tryon, row.position
                        ),
                    )
                })?;
            if !index.contains_key(&key) {
                index.insert(key.clone(), plan.items.len());
                plan.items.push(NewItem { external_id: key.clone(), payload: row.payload.clone(), gold });
            }
            used.insert(key.clone());
            plan.at.insert((form.clone(), row.position), key);
        }
    }
    Ok(plan)
}

/// The past batches, given the plan and the stored item and worker ids.
pub fn batches(
    release: &Release,
    plan: &ItemPlan,
    item_ids: &HashMap<String, Uuid>,
    workers: &HashMap<String, Uuid>,
) -> Vec<PastBatch> {
    let item_at = |form: &str, position: usize| {
        plan.at.get(&(form.to_owned(), position)).and_then(|key| item_ids.get(key)).copied()
    };
    let mut submissions: HashMap<&str, Vec<PastSubmission>> = HashMap::new();
    for (form, rows) in &release.forms {
        let at: HashMap<usize, Uuid> =
            rows.iter().filter_map(|r| Some((r.position, item_at(form, r.position)?))).collect();
        for a in release.answers.iter().filter(|a| &a.form_id == form) {
            let Some(&annotator_id) = workers.get(&a.response_id) else { continue };
            submissions.entry(form).or_default().push(PastSubmission {
                external_id: Some(a.response_id.clone()),
                annotator_id,
                submitted_at: a.submitted_at,
                answers: a.ratings.iter().filter_map(|(p, r)| Some((*at.get(p)?, json!({"rating": r})))).collect(),
                background: (!a.background.is_empty()).then(|| Value::Object(a.background.clone())),
            });
        }
    }
    release
        .forms
        .iter()
        .map(|(form, rows)| PastBatch {
            external_id: Some(form.clone()),
            items: rows.iter().filter_map(|r| item_at(form, r.position)).collect(),
            submissions: submissions.remove(form.as_str()).unwrap_or_default(),
        })
        .collect()
}

/// Imports a release into an empty VTON campaign: items, questionnaires and
/// every submission (workers `vton-qbench:<response_id>`). Returns counts.
pub async fn import(
    pool: &PgPool,
    kinds: &crate::core::Registry,
    campaign_id: Uuid,
    release: &Release,
    attention: &BTreeMap<usize, SanityTask>,
) -> Result<Value> {
    let plan = items(release, attention)?;
    // One transaction: items, workers, questionnaires and answers land
    // together or not at all, so a failed import can simply be retried.
    let mut importer = crate::core::item::items::Importer::begin(pool, kinds, campaign_id).await?;
    let existing =
        sqlx::query_scalar!(r#"SELECT EXISTS (SELECT FROM items WHERE campaign_id = $1) AS "existing!""#, campaign_id)
            .fetch_one(&mut **importer.transaction())
            .await?;
    if existing {
        return Err(Error::conflict(Code::CampaignNotEmpty, "import a release into a campaign without items"));
    }
    importer.add(&plan.items).await?;
    let tx = importer.transaction();
    let item_ids: HashMap<String, Uuid> =
        sqlx::query!("SELECT external_id, id FROM items WHERE campaign_id = $1", campaign_id)
            .fetch_all(&mut **tx)
            .await?
            .into_iter()
            .map(|r| (r.external_id, r.id))
            .collect();
    let mut workers = HashMap::new();
    for a in &release.answers {
        let user = crate::auth::users::worker(&mut **tx, &format!("vton-qbench:{}", a.response_id)).await.map_err(
            |e| match e {
                Error::Rejected { message, .. } => line_error("answers.csv", a.line, format!("response_id: {message}")),
                other => other,
            },
        )?;
        workers.insert(a.response_id.clone(), user.id);
    }
    let past = batches(release, &plan, &item_ids, &workers);
    let submissions = crate::core::work::history::import_completed_in(tx, campaign_id, &past).await?;
    importer.commit().await?;
    crate::core::work::batches::refresh_statistics(pool).await?;
    let (attention_tasks, images) = plan.items.iter().partition::<Vec<&NewItem>, _>(|i| i.gold.is_some());
    Ok(json!({"images": images.len(), "attention_tasks": attention_tasks.len(),
              "questionnaires": past.len(), "responses": submissions}))
}

#[cfg(test)]
mod tests {
    use super::*;

    const IMAGES: &str = "form_id,answer_count,garment_type,dataset_type,vton_model_id,person_path,garment_path,ref_person_path,vton_path
f1,1,upper,vitonhd,m1,p/1.jpg,g/1.jpg,r/1.jpg,v/1.jpg
f1,2,upper,vitonhd,attn,p/a.jpg,g/a.jpg,r/a.jpg,v/a.jpg
f1,3,lower,dresscode,m2,p/2.jpg,g/2.jpg,r/2.jpg,v/2.jpg
f2,1,upper,vitonhd,m2,p/3.jpg,g/3.jpg,r/3.jpg,v/3.jpg
f2,2,upper,vitonhd,attn,p/a.jpg,g/a.jpg,r/a.jpg,v/a.jpg
f2,3,upper,vitonhd,m1,p/1.jpg,g/1.jpg,r/1.jpg,v/1.jpg
";

    const ANSWERS: &str = "form_id,answer_timestamp,gender,age,experience,response_id,1,2,3
f1,2025-06-01 10:00:00,female,25-34,none,r1,2,0,1
f1,2025-06-01T11:00:00Z,male,35-44,some,r2,1,0,
f2,2025-06-02 09:30:00,,,,r3,0,1,2
";

    #[test]
    fn parses_both_files_maps_label_ids_and_dedupes_images() {
        let release = parse(ANSWERS, IMAGES).expect("parses");
        assert_eq!(release.forms.len(), 2);
        assert_eq!(release.answers[0].ratings, BTreeMap::from([(1, 3), (2, 1), (3, 2)]), "label id + 1");
        assert_eq!(release.answers[1].ratings.len(), 2, "an empty cell is unanswered");
        assert_eq!(release.answers[0].background["gender"], "female");
        assert!(release.answers[2].background.is_empty());
        let attention = BTreeMap::from([(2, SanityTask::exact(1))]);
        let plan = items(&release, &attention).expect("items");
        assert_eq!(plan.items.len(), 4, "v/1.jpg appears in both forms, v/a.jpg is the shared attention task");
        assert_eq!(plan.items.iter().filter(|i| i.gold.is_some()).count(), 1);
    }

    #[test]
    fn errors_name_the_file_line_and_field() {
        let bad_label = ANSWERS.replace("r3,0,1,2", "r3,0,5,2");
        let e = parse(&bad_label, IMAGES).expect_err("label 5").to_string();
        assert!(e.contains("answers.csv line 4") && e.contains("`5`"), "{e}");
        let unknown = ANSWERS.replace("f2,2025", "f9,2025");
        assert!(parse(&unknown, IMAGES).expect_err("f9").to_string().contains("f9"));
        let no_path = IMAGES.replace("r/2.jpg,v/2.jpg", "r/2.jpg,");
        let e = parse(ANSWERS, &no_path).expect_err("empty path").to_string();
        assert!(e.contains("images.csv line 4") && e.contains("vton_path"), "{e}");
        let bad_time = ANSWERS.replace("2025-06-02 09:30:00", "yesterday");
        assert!(parse(&bad_time, IMAGES).expect_err("time").to_string().contains("answer_timestamp"));
    }
}
