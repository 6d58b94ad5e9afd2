//! What changed between two releases of a campaign: items added or removed,
//! parameters changed, and labels that changed with the reasons (new votes,
//! new exclusions, changed parameters).

use crate::core::kind::contract::TaskKind;
use crate::core::releases::archive::{ReleaseInfo, GROUND_TRUTH_JSON, MANIFEST};
use crate::core::releases::snapshot::raw_table;
use serde::Deserialize;
use serde_json::Value;
use std::collections::{BTreeMap, BTreeSet};
use uuid::Uuid;

/// The files of a release a diff reads (the others are not unpacked).
pub fn reads(name: &str) -> bool {
    [MANIFEST, GROUND_TRUTH_JSON, "raw/items.jsonl", "raw/responses.jsonl", "raw/items.json", "raw/responses.json"]
        .contains(&name)
}

/// An item as a diff reads it (its payload is skipped, not parsed).
#[derive(Deserialize)]
struct Item {
    id: Uuid,
    external_id: String,
}

/// A response as a diff reads it.
#[derive(Deserialize)]
struct Response {
    assignment_id: Uuid,
    item_id: Uuid,
    annotator: Uuid,
    excluded_reason: Option<String>,
}

/// What a diff reads of one release's raw data.
struct Raw {
    items: Vec<Item>,
    responses: Vec<Response>,
}

impl Raw {
    fn read(files: &BTreeMap<String, Vec<u8>>) -> Result<Self, String> {
        Ok(Self { items: raw_table(files, "items")?, responses: raw_table(files, "responses")? })
    }
}

/// Counted and excluded responses per item (by external id).
fn per_item(snapshot: &Raw) -> BTreeMap<String, (usize, usize)> {
    let ids: BTreeMap<uuid::Uuid, &str> = snapshot.items.iter().map(|i| (i.id, i.external_id.as_str())).collect();
    let mut out: BTreeMap<String, (usize, usize)> = BTreeMap::new();
    for r in &snapshot.responses {
        let Some(item) = ids.get(&r.item_id) else { continue };
        let e = out.entry((*item).to_owned()).or_default();
        if r.excluded_reason.is_none() {
            e.0 += 1;
        } else {
            e.1 += 1;
        }
    }
    out
}

/// Paths (`a.b.c`) where two JSON values differ.
fn changed_paths(a: &Value, b: &Value, prefix: &str, out: &mut Vec<String>) {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let keys: BTreeSet<&String> = x.keys().chain(y.keys()).collect();
            for k in keys {
                let path = if prefix.is_empty() { k.clone() } else { format!("{prefix}.{k}") };
                changed_paths(x.get(k).unwrap_or(&Value::Null), y.get(k).unwrap_or(&Value::Null), &path, out);
            }
        }
        _ if a != b => out.push(prefix.to_owned()),
        _ => {}
    }
}

/// The campaign's state when the older and the newer release were cut.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct StatesAtCuts {
    /// When the older release was cut.
    pub from: String,
    /// When the newer release was cut.
    pub to: String,
}

/// The two manifests' counts, whole.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct CountsChange {
    /// The older release's counts.
    #[schema(value_type = Object)]
    pub from: Value,
    /// The newer release's counts.
    #[schema(value_type = Object)]
    pub to: Value,
}

/// A parameter that differs, by its path in the manifest's `parameters`.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ParameterChange {
    /// Its path, e.g. `config.curation.min_alpha`.
    pub path: String,
    /// Its value before (null when absent).
    #[schema(value_type = Object)]
    pub from: Value,
    /// Its value after (null when absent).
    #[schema(value_type = Object)]
    pub to: Value,
}

/// An item whose label differs, with the reasons the data gives.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct LabelChange {
    /// The item's id.
    pub item: String,
    /// Its label before (absent when it had none).
    pub from: Option<String>,
    /// Its label after.
    pub to: Option<String>,
    /// What changed around it: new item, new votes, new exclusions, parameters.
    pub reasons: Vec<String>,
}

/// A response that became excluded, or counts again, between the releases.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ExclusionChange {
    /// The item's id.
    pub item: String,
    /// The annotator's pseudonym in the newer release (the older one's when removed).
    pub annotator: Uuid,
    /// Why it is (or was) excluded.
    pub reason: String,
}

/// How many exclusions for one reason were added and removed.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ReasonChange {
    /// The exclusion's reason.
    pub reason: String,
    /// Responses excluded for it in the newer release, not in the older.
    pub added: usize,
    /// Responses excluded for it in the older release, not in the newer.
    pub removed: usize,
}

/// What changed between two releases of one campaign.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize, utoipa::ToSchema)]
pub struct ReleaseDiff {
    /// The older release's number.
    pub from: i32,
    /// The newer release's number.
    pub to: i32,
    /// The campaign's state when each was cut (open, closed, ...).
    pub campaign_state: StatesAtCuts,
    /// Items only in the newer release.
    pub items_added: Vec<String>,
    /// Items only in the older release.
    pub items_removed: Vec<String>,
    /// Paths of the parameters that differ (the same as `parameters`' paths).
    pub parameters_changed: Vec<String>,
    /// The parameters that differ, with both values.
    pub parameters: Vec<ParameterChange>,
    /// Items whose label differs.
    pub labels_changed: Vec<LabelChange>,
    /// The manifests' counts, whole.
    pub counts: CountsChange,
    /// The counts that differ, by path (e.g. `responses_counted`,
    /// `responses_excluded.sanity`), both values (0 when absent).
    pub counts_changed: Vec<ParameterChange>,
    /// Exclusions added and removed, per reason.
    pub exclusions_by_reason: Vec<ReasonChange>,
    /// Responses excluded in the newer release and not in the older (new
    /// responses that came in excluded included).
    pub exclusions_added: Vec<ExclusionChange>,
    /// Responses excluded in the older release that count (or are gone) in the newer.
    pub exclusions_removed: Vec<ExclusionChange>,
}

impl ReleaseDiff {
    /// Whether nothing at all differs but the release numbers.
    pub fn is_empty(&self) -> bool {
        self.campaign_state.from == self.campaign_state.to
            && self.items_added.is_empty()
            && self.items_removed.is_empty()
            && self.parameters.is_empty()
            && self.labels_changed.is_empty()
            && self.counts_changed.is_empty()
    }
}

/// Paths where two JSON values differ, with both values.
fn changes(a: &Value, b: &Value) -> Vec<ParameterChange> {
    let mut paths = Vec::new();
    changed_paths(a, b, "", &mut paths);
    let at = |v: &Value, path: &str| path.split('.').try_fold(v, |v, k| v.get(k)).cloned().unwrap_or(Value::Null);
    paths.into_iter().map(|path| ParameterChange { from: at(a, &path), to: at(b, &path), path }).collect()
}

/// Responses' exclusions by (assignment, item): the identity of a response,
/// the same in every release of a campaign.
fn exclusions(snapshot: &Raw) -> BTreeMap<(Uuid, Uuid), (Option<&str>, Uuid)> {
    snapshot
        .responses
        .iter()
        .map(|r| ((r.assignment_id, r.item_id), (r.excluded_reason.as_deref(), r.annotator)))
        .collect()
}

/// Compares release `a` (older) with `b` (newer), both as unpacked files.
pub fn diff(
    kind: &dyn TaskKind,
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
) -> Result<ReleaseDiff, String> {
    let read = |files: &BTreeMap<String, Vec<u8>>, name: &str| -> Result<Value, String> {
        serde_json::from_slice(files.get(name).ok_or_else(|| format!("{name} is missing"))?).map_err(|e| e.to_string())
    };
    let (ma, mb) = (read(a, MANIFEST)?, read(b, MANIFEST)?);
    let (sa, sb) = (Raw::read(a)?, Raw::read(b)?);
    let ground_truth = |files: &BTreeMap<String, Vec<u8>>| -> Result<BTreeMap<String, String>, String> {
        Ok(kind.release_labels(files.get(GROUND_TRUTH_JSON).ok_or_else(|| format!("{GROUND_TRUTH_JSON} is missing"))?))
    };
    let (la, lb) = (ground_truth(a)?, ground_truth(b)?);
    let items = |s: &Raw| -> BTreeSet<String> { s.items.iter().map(|i| i.external_id.clone()).collect() };
    let (ia, ib) = (items(&sa), items(&sb));
    let parameters = changes(&ma["parameters"], &mb["parameters"]);
    let parameters_changed: Vec<String> = parameters.iter().map(|p| p.path.clone()).collect();
    let (ca, cb) = (per_item(&sa), per_item(&sb));
    let mut labels = Vec::new();
    let keys: BTreeSet<&String> = la.keys().chain(lb.keys()).collect();
    for item in keys {
        let (from, to) = (la.get(item), lb.get(item));
        if from == to {
            continue;
        }
        let (before, after) = (ca.get(item).copied().unwrap_or_default(), cb.get(item).copied().unwrap_or_default());
        let mut reasons = Vec::new();
        if !ia.contains(item) {
            reasons.push("new item".to_owned());
        }
        if before.0 != after.0 {
            reasons.push(format!("new votes: {} counted responses, then {}", before.0, after.0));
        }
        if before.1 != after.1 {
            reasons.push(format!("new exclusions: {} excluded responses, then {}", before.1, after.1));
        }
        if !parameters.is_empty() {
            reasons.push(format!("changed parameters: {}", parameters_changed.join(", ")));
        }
        labels.push(LabelChange { item: item.clone(), from: from.cloned(), to: to.cloned(), reasons });
    }
    let external: BTreeMap<Uuid, &str> =
        sa.items.iter().chain(&sb.items).map(|i| (i.id, i.external_id.as_str())).collect();
    let name = |item: &Uuid| external.get(item).map_or_else(|| item.to_string(), |e| (*e).to_owned());
    let (ea, eb) = (exclusions(&sa), exclusions(&sb));
    let (mut added, mut removed) = (Vec::new(), Vec::new());
    for (key @ (_, item), (reason, annotator)) in &eb {
        let before = ea.get(key).and_then(|(r, _)| *r);
        if let Some(reason) = reason.filter(|r| before != Some(*r)) {
            added.push(ExclusionChange { item: name(item), annotator: *annotator, reason: reason.to_owned() });
        }
    }
    for (key @ (_, item), (reason, annotator)) in &ea {
        let after = eb.get(key).and_then(|(r, _)| *r);
        if let Some(reason) = reason.filter(|r| after != Some(*r)) {
            removed.push(ExclusionChange { item: name(item), annotator: *annotator, reason: reason.to_owned() });
        }
    }
    added.sort();
    removed.sort();
    let mut by_reason: BTreeMap<&str, (usize, usize)> = BTreeMap::new();
    for e in &added {
        by_reason.entry(&e.reason).or_default().0 += 1;
    }
    for e in &removed {
        by_reason.entry(&e.reason).or_default().1 += 1;
    }
    let exclusions_by_reason = by_reason
        .into_iter()
        .map(|(reason, (added, removed))| ReasonChange { reason: reason.to_owned(), added, removed })
        .collect();
    let counts_changed = changes(&ma["counts"], &mb["counts"])
        .into_iter()
        .map(|c| ParameterChange {
            from: if c.from.is_null() { Value::from(0) } else { c.from },
            to: if c.to.is_null() { Value::from(0) } else { c.to },
            path: c.path,
        })
        .collect();
    let state = |m: &Value| m["campaign_state"].as_str().unwrap_or_default().to_owned();
    let number = |m: &Value| {
        ReleaseInfo::deserialize(&m["release"]).map(|i| i.release).map_err(|e| format!("{MANIFEST}: release: {e}"))
    };
    Ok(ReleaseDiff {
        from: number(&ma)?,
        to: number(&mb)?,
        campaign_state: StatesAtCuts { from: state(&ma), to: state(&mb) },
        items_added: ib.difference(&ia).cloned().collect(),
        items_removed: ia.difference(&ib).cloned().collect(),
        parameters_changed,
        parameters,
        labels_changed: labels,
        counts: CountsChange { from: ma["counts"].clone(), to: mb["counts"].clone() },
        counts_changed,
        exclusions_by_reason,
        exclusions_added: added,
        exclusions_removed: removed,
    })
}
