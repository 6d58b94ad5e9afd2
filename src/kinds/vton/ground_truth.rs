//! VTON ground truth: curation over the campaign's questionnaires, then one
//! record per image in a layout close to the released benchmark's
//! (`reward`, `votes`, `n_annotation`, `vton_model_id`, image paths), model
//! rankings with bootstrap intervals, and the human ceiling.

use super::config::{VtonAnswer, VtonGold};
use super::curation::{curate_named, kept_answers, Answer, SanityTasks, Thresholds};
use super::result::{ImageScore, ModelRank, VtonGroundTruth};
use crate::core::item::payload::Payload;
use crate::core::kind::contract::{Records, Table};
use crate::stats::aggregate::normalize_score;
use crate::stats::bootstrap::mean_cis;
use crate::stats::split_half::{split_half, Rating};
use serde_json::Value;
use std::collections::{BTreeMap, HashMap};
use std::sync::Arc;
use uuid::Uuid;

/// Repetitions of the split-half human ceiling (as in the benchmark).
pub const SPLIT_HALF_REPETITIONS: usize = 10;
/// Seed of the split-half halvings (the half-annotator labels use the same).
pub const SPLIT_HALF_SEED: u64 = 2026;
/// Bootstrap resamples for model intervals.
const BOOTSTRAP_RESAMPLES: usize = 2000;

/// The garment-person pair an image belongs to (pairwise accuracy compares
/// try-ons of the same pair).
pub(super) fn group(payload: &Value) -> String {
    format!("{}|{}", payload["garment"].as_str().unwrap_or_default(), payload["person"].as_str().unwrap_or_default())
}

/// What a VTON campaign aggregates: the kind's `AggregationInput`.
pub type VtonInput = Records<VtonGold, VtonAnswer>;

/// One shared text per id, however often it occurs.
fn shared_id(ids: &mut HashMap<Uuid, Arc<str>>, id: Uuid) -> Arc<str> {
    ids.entry(id).or_insert_with(|| id.to_string().into()).clone()
}

/// The campaign's ratings as curation reads them, and its sanity tasks.
fn answers_and_sanity(input: &VtonInput) -> (Vec<Answer>, SanityTasks) {
    let tasks: HashMap<Uuid, Arc<str>> =
        input.items.iter().map(|i| (i.id, Arc::from(i.external_id.as_str()))).collect();
    let sanity: SanityTasks =
        input.items.iter().filter_map(|i| Some((i.external_id.clone(), i.gold.as_ref()?.task()?))).collect();
    let (mut questionnaires, mut annotators) = (HashMap::new(), HashMap::new());
    let mut answers: Vec<Answer> = Vec::with_capacity(input.responses.len());
    // Only submitted questionnaires count (as in `answers.csv`).
    answers.extend(input.responses.iter().filter(|r| r.submitted).filter_map(|r| {
        Some(Answer {
            task: tasks.get(&r.item_id)?.clone(),
            rating: r.answer.rating,
            questionnaire: shared_id(&mut questionnaires, r.batch_id),
            annotator: shared_id(&mut annotators, r.annotator_id),
            position: r.position.and_then(|p| u32::try_from(p).ok()),
        })
    }));
    (answers, sanity)
}

/// Each questionnaire's name in the exported files (`form_id`) where it is
/// not its id: the names of batches imported from a release.
fn form_names(input: &VtonInput) -> HashMap<String, String> {
    input.batch_names.iter().map(|(id, name)| (id.to_string(), name.clone())).collect()
}

/// The ratings curation keeps, each with its image's comparison group.
fn ratings_of(kept: &[&Answer], payloads: &HashMap<&str, &Payload>) -> Vec<Rating> {
    let mut groups: HashMap<&str, Arc<str>> = HashMap::new();
    kept.iter()
        .map(|a| Rating {
            image: a.task.clone(),
            group: groups
                .entry(&*a.task)
                .or_insert_with(|| payloads.get(&*a.task).map(|p| group(&p.value())).unwrap_or_default().into())
                .clone(),
            annotator: a.annotator.clone(),
            value: f64::from(a.rating),
        })
        .collect()
}

/// The curated ratings of the campaign (kept annotators of kept
/// questionnaires, sanity tasks left out), e.g. for half-annotator labels.
pub fn curated_ratings(input: &VtonInput, thresholds: &Thresholds) -> Vec<Rating> {
    let (answers, sanity) = answers_and_sanity(input);
    let names = form_names(input);
    let curation =
        curate_named(&answers, &sanity, thresholds, &names.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());
    let payloads: HashMap<&str, &Payload> = input.items.iter().map(|i| (i.external_id.as_str(), &i.payload)).collect();
    ratings_of(&kept_answers(&answers, &sanity, &curation), &payloads)
}

/// Curates the campaign and scores every image and model.
pub fn aggregate(input: &VtonInput, thresholds: &Thresholds) -> VtonGroundTruth {
    rank_models(score_images(input, thresholds))
}

/// Curates the campaign and scores every image; the models are ranked by
/// [`rank_models`], which no longer needs the input (a caller that owns it
/// can free it first: the bootstraps take a while).
pub fn score_images(input: &VtonInput, thresholds: &Thresholds) -> VtonGroundTruth {
    let (answers, sanity) = answers_and_sanity(input);
    score_answers(input, answers, sanity, thresholds)
}

/// [`score_images`] on an input it owns: the responses are freed as soon
/// as curation has its own copy of the ratings, so that what curation and
/// the images take reuses their memory (it lowers the computation's peak).
pub fn score_owned_input(mut input: VtonInput, thresholds: &Thresholds) -> VtonGroundTruth {
    let (answers, sanity) = answers_and_sanity(&input);
    input.responses = Vec::new();
    // Returned now: curation's and the images' memory is not the same shape.
    crate::core::support::heavy::return_freed_memory();
    score_answers(&input, answers, sanity, thresholds)
}

/// Curation and image scores from the ratings as read by [`answers_and_sanity`].
fn score_answers(
    input: &VtonInput,
    answers: Vec<Answer>,
    sanity: SanityTasks,
    thresholds: &Thresholds,
) -> VtonGroundTruth {
    let names = form_names(input);
    let curation =
        curate_named(&answers, &sanity, thresholds, &names.iter().map(|(k, v)| (k.as_str(), v.as_str())).collect());
    let kept = kept_answers(&answers, &sanity, &curation);
    let payloads: HashMap<&str, &Payload> = input.items.iter().map(|i| (i.external_id.as_str(), &i.payload)).collect();
    // What the ceiling and the images need is taken from the kept answers,
    // which go before the ceiling is computed (off a release cut's peak);
    // the ceiling's ratings go before the images are built.
    let ratings = ratings_of(&kept, &payloads);
    let mut annotators_of: HashMap<Arc<str>, Vec<Arc<str>>> = HashMap::new();
    for a in &kept {
        annotators_of.entry(a.task.clone()).or_default().push(a.annotator.clone());
    }
    drop(kept);
    drop(answers);
    crate::core::support::heavy::return_freed_memory();
    let human_ceiling = split_half(&ratings, SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED);
    drop(ratings);
    crate::core::support::heavy::return_freed_memory();
    let field = |p: &Value, key: &str| p.get(key).cloned();
    let mut images: Vec<ImageScore> = curation
        .scores
        .iter()
        .map(|s| {
            // Parsed one image at a time: all at once they would be held together.
            let p = &payloads.get(s.task.as_str()).map_or(Value::Null, |p| p.value());
            ImageScore {
                image: s.task.clone(),
                vton_model_id: field(p, "model"),
                category: field(p, "category"),
                dataset: field(p, "dataset"),
                tryon: field(p, "tryon"),
                garment: field(p, "garment"),
                person: field(p, "person"),
                reference: field(p, "reference"),
                group: group(p),
                mean: s.mean,
                reward: normalize_score(s.mean, 3),
                votes: s.votes,
                n_annotation: s.n,
                annotators: annotators_of.remove(s.task.as_str()).unwrap_or_default(),
                worker_ids: None,
            }
        })
        .collect();
    if !input.worker_ids.is_empty() {
        // Admins' live view: the crowd platform's ids next to Atelier's.
        for img in &mut images {
            let ids = img
                .annotators
                .iter()
                .map(|a| a.parse::<uuid::Uuid>().ok().and_then(|a| input.worker_ids.get(&a).cloned()))
                .collect();
            img.worker_ids = Some(ids);
        }
    }
    let workers = input.worker_ids.iter().map(|(k, v)| (k.to_string(), v.clone())).collect();
    VtonGroundTruth {
        thresholds: thresholds.clone(),
        models: BTreeMap::new(),
        curation,
        workers,
        images,
        human_ceiling,
    }
}

/// The ground truth with its model rankings.
pub fn rank_models(mut scored: VtonGroundTruth) -> VtonGroundTruth {
    scored.models = models(&scored.images);
    scored
}

/// Per try-on model: mean image score with a 95 % bootstrap interval and
/// rank, overall and per garment category and dataset.
fn models(images: &[ImageScore]) -> BTreeMap<String, BTreeMap<String, Vec<ModelRank>>> {
    let text = |v: &Option<Value>| v.as_ref().and_then(Value::as_str).map(str::to_owned);
    let mut by: BTreeMap<(String, String, String), Vec<f64>> = BTreeMap::new();
    for img in images {
        let model = text(&img.vton_model_id).unwrap_or_else(|| "unknown".to_owned());
        for (slice, value) in [
            ("all", "all".to_owned()),
            ("category", text(&img.category).unwrap_or_default()),
            ("dataset", text(&img.dataset).unwrap_or_default()),
        ] {
            by.entry((slice.to_owned(), value, model.clone())).or_default().push(img.mean);
        }
    }
    let samples: Vec<&[f64]> = by.values().map(Vec::as_slice).collect();
    let intervals = mean_cis(&samples, 0.95, BOOTSTRAP_RESAMPLES, 7);
    let mut out: BTreeMap<String, BTreeMap<String, Vec<ModelRank>>> = BTreeMap::new();
    for (((slice, value, model), scores), interval) in by.iter().zip(intervals) {
        let Some((mean, lo, hi)) = interval else { continue };
        let row = ModelRank { model: model.clone(), mean, ci95: [lo, hi], images: scores.len(), rank: 0 };
        out.entry(slice.clone()).or_default().entry(value.clone()).or_default().push(row);
    }
    for table in out.values_mut().flat_map(|m| m.values_mut()) {
        // Stable: models with equal means keep their name order.
        table.sort_by(|a, b| b.mean.total_cmp(&a.mean));
        for (rank, row) in table.iter_mut().enumerate() {
            row.rank = rank + 1;
        }
    }
    out
}

/// A JSON value as a CSV cell: text as is, numbers as JSON writes them, nothing for null.
fn cell(v: &Value) -> String {
    match v {
        Value::Null => String::new(),
        Value::String(s) => s.clone(),
        other => other.to_string(),
    }
}

/// A JSON-able value as a CSV cell.
fn cell_of<T: serde::Serialize>(v: &T) -> String {
    cell(&serde_json::to_value(v).unwrap_or(Value::Null))
}

/// The export's columns.
pub(super) const HEADER: [&str; 15] = [
    "image",
    "vton_model_id",
    "category",
    "dataset",
    "tryon",
    "garment",
    "person",
    "reference",
    "mean",
    "reward",
    "n_annotation",
    "votes_1",
    "votes_2",
    "votes_3",
    "annotators",
];

/// One CSV row per image (empty if the text is not a ground truth).
pub fn table(aggregate: &[u8]) -> Table {
    let mut rows = Vec::new();
    if !read_rows(aggregate, &mut |row| rows.push(row)) {
        return Table::default();
    }
    Table { header: HEADER.iter().map(|h| (*h).to_owned()).collect(), rows }
}

/// The rows of [`table`], header first, one at a time as they are read (a
/// text that is not a ground truth stops where it breaks: the service only
/// ever reads its own).
pub fn rows(aggregate: &[u8], each: &mut dyn FnMut(&[String])) {
    each(&HEADER.map(str::to_owned));
    read_rows(aggregate, &mut |row| each(&row));
}

/// The rows of [`table`] without its header, one at a time as they are read.
pub fn image_rows(aggregate: &[u8], each: &mut dyn FnMut(Vec<String>)) {
    read_rows(aggregate, each);
}

/// Hands over each image's row; whether the whole text was read.
fn read_rows(aggregate: &[u8], each: &mut dyn FnMut(Vec<String>)) -> bool {
    let mut reader = serde_json::Deserializer::from_slice(aggregate);
    serde::Deserializer::deserialize_map(&mut reader, ImageRows(each)).is_ok()
}

/// Reads the ground truth's `images` straight into table rows, one image
/// at a time, skipping everything else: the parsed images would otherwise
/// sit next to the table.
struct ImageRows<'r>(&'r mut dyn FnMut(Vec<String>));

impl<'de> serde::de::Visitor<'de> for ImageRows<'_> {
    type Value = ();

    fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
        f.write_str("a VTON ground truth")
    }

    fn visit_map<A: serde::de::MapAccess<'de>>(self, mut map: A) -> Result<(), A::Error> {
        while let Some(key) = map.next_key::<std::borrow::Cow<'de, str>>()? {
            if key == "images" {
                map.next_value_seed(ImageRows(&mut *self.0))?;
            } else {
                map.next_value::<serde::de::IgnoredAny>()?;
            }
        }
        Ok(())
    }

    fn visit_seq<A: serde::de::SeqAccess<'de>>(self, mut images: A) -> Result<(), A::Error> {
        while let Some(image) = images.next_element::<ImageScore>()? {
            (self.0)(image_row(image));
        }
        Ok(())
    }
}

impl<'de> serde::de::DeserializeSeed<'de> for ImageRows<'_> {
    type Value = ();

    fn deserialize<D: serde::Deserializer<'de>>(self, images: D) -> Result<(), D::Error> {
        images.deserialize_seq(self)
    }
}

/// One image's table row.
fn image_row(img: ImageScore) -> Vec<String> {
    let mut row = vec![
        img.image,
        cell_of(&img.vton_model_id),
        cell_of(&img.category),
        cell_of(&img.dataset),
        cell_of(&img.tryon),
        cell_of(&img.garment),
        cell_of(&img.person),
        cell_of(&img.reference),
        cell_of(&img.mean),
        cell_of(&img.reward),
        cell_of(&img.n_annotation),
    ];
    row.extend(img.votes.iter().map(cell_of));
    row.push(img.annotators.join(" "));
    row
}

/// The questionnaire table: alpha before and after, annotators kept, kept or
/// dropped, and (for admins) who was kept and who was removed by which rule,
/// by the crowd platform's worker id.
pub fn questionnaire_table(aggregate: &[u8]) -> Table {
    /// The parts of the ground truth the table shows: the images and the
    /// images' curated scores (most of its text at scale) are skipped unread.
    #[derive(serde::Deserialize)]
    struct CurationOnly {
        curation: Verdicts,
        #[serde(default)]
        workers: BTreeMap<String, String>,
    }
    #[derive(serde::Deserialize)]
    struct Verdicts {
        annotators: Vec<super::curation::AnnotatorVerdict>,
        questionnaires: Vec<super::curation::QuestionnaireVerdict>,
    }
    impl CurationOnly {
        fn worker(&self, annotator: &str) -> String {
            self.workers.get(annotator).cloned().unwrap_or_else(|| annotator.to_owned())
        }
    }
    let Ok(gt) = serde_json::from_slice::<CurationOnly>(aggregate) else { return Table::default() };
    let mut kept: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    let mut removed: BTreeMap<&str, Vec<String>> = BTreeMap::new();
    for a in &gt.curation.annotators {
        let q = a.questionnaire.as_str();
        match a.excluded_by {
            Some(rule) => removed.entry(q).or_default().push(format!("{}:{}", gt.worker(&a.annotator), rule.name())),
            None => kept.entry(q).or_default().push(gt.worker(&a.annotator)),
        }
    }
    let columns = ["questionnaire", "alpha_before", "alpha_after", "annotators_kept", "kept"];
    let mut header: Vec<String> = columns.iter().map(|h| (*h).to_owned()).collect();
    header.extend(["workers_kept".to_owned(), "workers_removed".to_owned()]);
    let rows = gt
        .curation
        .questionnaires
        .iter()
        .map(|q| {
            let id = q.questionnaire.as_str();
            vec![
                q.questionnaire.clone(),
                cell_of(&q.alpha_before),
                cell_of(&q.alpha_after),
                cell_of(&q.annotators_kept),
                cell_of(&q.kept),
                kept.get(id).map(|w| w.join(" ")).unwrap_or_default(),
                removed.get(id).map(|w| w.join(" ")).unwrap_or_default(),
            ]
        })
        .collect();
    Table { header, rows }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::core::kind::contract::{ItemRecord, ResponseRecord};
    use crate::core::TypedKind;
    use serde_json::json;
    use std::sync::Arc;
    use uuid::Uuid;

    /// Two questionnaires of twelve tasks (two of them sanity tasks), four
    /// annotators each, one of whom fails the sanity tasks; one annotator's
    /// ratings stray now and then (a fixed pseudo-random sequence).
    fn campaign() -> VtonInput {
        let mut state = 7u64;
        let mut next = move || {
            state = state.wrapping_mul(6364136223846793005).wrapping_add(1442695040888963407);
            (state >> 33) % 3 + 1
        };
        let (mut items, mut responses, mut worker_ids) = (Vec::new(), Vec::new(), BTreeMap::new());
        for q in 0..2 {
            let batch_id = Uuid::new_v4();
            let batch: Vec<ItemRecord> = (0..12)
                .map(|t| ItemRecord {
                    id: Uuid::new_v4(),
                    external_id: format!("q{q}-t{t}"),
                    payload:
                        json!({"model": format!("m{}", t % 3), "category": if t % 2 == 0 { "upper" } else { "lower" },
                                    "dataset": "d", "tryon": format!("t{q}{t}.jpg"), "garment": format!("g{t}.jpg"),
                                    "person": "p.jpg", "reference": "r.jpg"})
                        .into(),
                    gold: (t >= 10).then(|| json!({"rating": 3})),
                })
                .collect();
            for a in 0..4 {
                let (annotator_id, assignment_id) = (Uuid::new_v4(), Uuid::new_v4());
                worker_ids.insert(annotator_id, format!("worker-{q}-{a}"));
                for (position, item) in batch.iter().enumerate() {
                    // Mostly agreeing (the item's own level), now and then not.
                    let own = (position % 3) as u64 + 1;
                    let noisy = next();
                    let rating = match (item.gold.is_some(), a) {
                        (true, 3) => 1,
                        (true, _) => 3,
                        (false, 1) if noisy == 1 => noisy,
                        _ => own,
                    };
                    responses.push(ResponseRecord {
                        assignment_id,
                        reviews: None,
                        batch_id,
                        item_id: item.id,
                        annotator_id,
                        answer: Arc::new(json!({ "rating": rating })),
                        submitted: true,
                        position: Some(position as i32 + 1),
                    });
                }
            }
            items.extend(batch);
        }
        crate::core::kind::contract::StoredInput {
            items,
            responses,
            worker_ids,
            batch_names: BTreeMap::new(),
            participants: Default::default(),
            review: false,
        }
        .typed::<super::super::Vton>()
    }

    #[test]
    fn the_typed_text_is_the_value_text_byte_for_byte() {
        // The live views send `aggregate_json`; releases write `aggregate`'s
        // `Value`. They must be one document, keys in the same order.
        for preset in ["paper", "vton-qbench-code"] {
            let config = json!({"tasks_per_questionnaire": 12, "sanity_per_questionnaire": 2,
                                "curation": {"preset": preset, "max_sanity_failures": 0}});
            let parsed = super::super::VtonConfig::parse(&config).expect("a valid configuration");
            let input = campaign();
            let value = serde_json::to_value(super::super::Vton.aggregate(&parsed, &input)).expect("json");
            let text = super::super::Vton.aggregate_json(&parsed, input);
            assert_eq!(text, value.to_string(), "preset {preset}");
            assert!(value["images"].as_array().is_some_and(|i| i.len() >= 10), "{preset}: images scored");
            assert!(value["images"][0]["worker_ids"].is_array(), "{preset}: the admins' live view");
            assert!(value["curation"]["annotators"].as_array().is_some_and(|a| a.len() == 8), "{preset}");
        }
    }

    #[test]
    fn the_rows_handed_over_one_by_one_are_the_table() {
        let config = json!({"tasks_per_questionnaire": 12, "sanity_per_questionnaire": 2});
        let parsed = super::super::VtonConfig::parse(&config).expect("a valid configuration");
        let text = super::super::Vton.aggregate_json(&parsed, campaign());
        let whole = table(text.as_bytes());
        assert_eq!(whole.rows.len(), 20, "every image but the sanity tasks");
        let mut handed = Vec::new();
        rows(text.as_bytes(), &mut |row| handed.push(row.to_vec()));
        assert_eq!(handed[0], whole.header);
        assert_eq!(handed[1..], whole.rows[..]);
        assert!(table(b"not a ground truth").rows.is_empty());
    }
}
