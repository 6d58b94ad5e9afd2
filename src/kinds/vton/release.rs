//! What a VTON release records beyond its ground truth: the VTON-QBench
//! files, the fixed seeds, the labels to compare releases by, and the
//! datasheet's sections.

use super::ground_truth::{SPLIT_HALF_REPETITIONS, SPLIT_HALF_SEED};
use crate::core::releases::Snapshot;
use crate::core::support::csv_chunks::CsvRows;
use crate::error::Result;
use serde_json::{json, Value};
use std::collections::BTreeMap;

/// The release's `answers.csv` and `images.csv`, by the live exports' code.
pub fn files(snapshot: &Snapshot) -> Result<Vec<(String, Vec<u8>)>> {
    let mut answers = CsvRows::new(Vec::new());
    super::qbench::write_answers(snapshot, &mut answers);
    let mut images = CsvRows::new(Vec::new());
    super::qbench::write_images(snapshot, &mut images);
    Ok(vec![("answers.csv".to_owned(), answers.finish()?), ("images.csv".to_owned(), images.finish()?)])
}

/// Seeds and repetitions fixed in code (thresholds and the preset are in the configuration).
pub fn parameters() -> Value {
    json!({
        "split_half": {"repetitions": SPLIT_HALF_REPETITIONS, "seed": SPLIT_HALF_SEED},
        "model_bootstrap": {"resamples": 2000, "seed": 7, "level": 0.95},
        "score": "mean rating of kept annotators of kept questionnaires; reward = mean - 2",
    })
}

/// Image id -> mean rating (six decimals); dropped images have no label.
pub fn labels(aggregate: &[u8]) -> BTreeMap<String, String> {
    /// Of each image only its id and mean (the rest of the text is skipped unread).
    #[derive(serde::Deserialize)]
    struct Mean {
        image: String,
        mean: f64,
    }
    #[derive(serde::Deserialize)]
    struct Means {
        images: Vec<Mean>,
    }
    let Ok(gt) = serde_json::from_slice::<Means>(aggregate) else { return BTreeMap::new() };
    gt.images.into_iter().map(|i| (i.image, format!("{:.6}", i.mean))).collect()
}

/// The task as workers saw it.
pub fn task() -> String {
    "Workers saw, one task at a time, a try-on result with the garment alone, the person before, and a reference \
     photo of the garment worn by a real person, and rated how natural the try-on looks: 1 Unnatural, 2 Slightly \
     unnatural but not noticeable, 3 Completely natural (keys 1/2/3). Questionnaires hid shared sanity tasks with \
     an obvious answer at fixed positions; instructions with the scale came before the first task."
        .to_owned()
}

/// Curation and agreement read from the ground truth.
pub fn quality(aggregate: &[u8]) -> String {
    /// The parts of the ground truth the section shows: the images (most of
    /// its text) are skipped unread.
    #[derive(serde::Deserialize)]
    struct CurationOnly {
        curation: super::curation::Curation,
        thresholds: super::curation::Thresholds,
    }
    let Ok(gt) = serde_json::from_slice::<CurationOnly>(aggregate) else { return String::new() };
    let c = &gt.curation;
    let mut removed: BTreeMap<String, usize> = BTreeMap::new();
    for rule in c.annotators.iter().filter_map(|a| a.excluded_by) {
        *removed.entry(rule.name().to_owned()).or_default() += 1;
    }
    let qs = &c.questionnaires;
    let kept = qs.iter().filter(|q| q.kept).count();
    let show = |v: Option<f64>| v.map_or_else(|| "undefined".to_owned(), |x| format!("{x:.4}"));
    let rules: Vec<String> = removed.iter().map(|(r, n)| format!("`{r}` {n}")).collect();
    format!(
        "Curation preset `{}`. Annotator-questionnaire pairs removed by rule: {}. Questionnaires kept: {kept} of {}. \
         Krippendorff's alpha (ordinal), mean over questionnaires: {} before curation, {} after the annotator rules, \
         {} over the kept questionnaires.",
        gt.thresholds.preset.name(),
        if rules.is_empty() { "none".to_owned() } else { rules.join(", ") },
        qs.len(),
        show(c.alpha_mean_before),
        show(c.alpha_mean_after),
        show(c.alpha_mean_kept),
    )
}
