//! The VSD files researchers bring: model rankings and expert labels (model
//! scores and the benchmark's ground truth are the retrieval format,
//! [`crate::input::retrieval`]). Every error names the file, the line and
//! the field.

use super::eds::{Pair, Ranked, Vote};
use crate::input::{CsvFile, InputError};
use std::collections::BTreeMap;
use std::path::Path;

/// Reads `model,query,candidate,rank[,score]` (rank zero-based; score ignored).
pub fn read_rankings(path: &Path) -> Result<Vec<Ranked>, InputError> {
    let mut file = CsvFile::open(path)?;
    let mut rows = Vec::new();
    // Model names repeat on every line: share one allocation per model.
    let mut models: Vec<String> = Vec::new();
    file.for_each_with_optional(&["model", "query", "candidate", "rank"], &["score"], |line, f| {
        let err = |message: String| InputError::Line { path: path.to_owned(), line, message };
        for (name, value) in [("model", f[0]), ("query", f[1]), ("candidate", f[2])] {
            if value.is_empty() {
                return Err(err(format!("{name}: empty")));
            }
        }
        let rank = f[3].parse::<u32>().map_err(|_| err(format!("rank: `{}` is not a whole number from 0", f[3])))?;
        if !f[4].is_empty() && !f[4].parse::<f64>().is_ok_and(f64::is_finite) {
            return Err(err(format!("score: `{}` is not a number", f[4])));
        }
        let model = match models.iter().find(|m| m.as_str() == f[0]) {
            Some(m) => m.clone(),
            None => {
                models.push(f[0].to_owned());
                f[0].to_owned()
            }
        };
        rows.push(Ranked { model, query: f[1].to_owned(), candidate: f[2].to_owned(), rank });
        Ok(())
    })?;
    Ok(rows)
}

/// Reads `query,candidate,expert,label` (label `1`, `0` or `unsure`) into
/// the votes per unordered pair; an expert labelling a pair twice is an error.
pub fn read_votes(path: &Path) -> Result<BTreeMap<Pair, Vec<Vote>>, InputError> {
    let mut file = CsvFile::open(path)?;
    let mut votes: BTreeMap<Pair, Vec<(String, Vote)>> = BTreeMap::new();
    file.for_each_with_header(&["query", "candidate", "expert", "label"], |line, f| {
        let err = |message: String| InputError::Line { path: path.to_owned(), line, message };
        let pair = Pair::new(f[0], f[1]).ok_or_else(|| err("candidate: the same image as the query".into()))?;
        if f[2].is_empty() {
            return Err(err("expert: empty".into()));
        }
        let vote = Vote::parse(f[3]).ok_or_else(|| err(format!("label: `{}` is not 1, 0 or unsure", f[3])))?;
        let list = votes.entry(pair).or_default();
        if list.iter().any(|(e, _)| e == f[2]) {
            return Err(err(format!("expert: `{}` labelled this pair twice", f[2])));
        }
        list.push((f[2].to_owned(), vote));
        Ok(())
    })?;
    Ok(votes.into_iter().map(|(p, v)| (p, v.into_iter().map(|(_, v)| v).collect())).collect())
}

pub use crate::input::retrieval::{read_ground_truth, read_scores};
