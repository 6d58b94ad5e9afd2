//! What changed between two releases of a campaign: items added or removed,
//! parameters changed, and labels that changed with the reasons (new votes,
//! new exclusions, changed parameters).

use super::archive::{GROUND_TRUTH_JSON, MANIFEST};
use super::snapshot::Snapshot;
use crate::core::kind::TaskKind;
use serde_json::{json, Value};
use std::collections::{BTreeMap, BTreeSet};

/// Counted and excluded responses per item (by external id).
fn per_item(snapshot: &Snapshot) -> BTreeMap<String, (usize, usize)> {
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

/// Compares release `a` (older) with `b` (newer), both as unpacked files.
pub fn diff(
    kind: &dyn TaskKind,
    a: &BTreeMap<String, Vec<u8>>,
    b: &BTreeMap<String, Vec<u8>>,
) -> Result<Value, String> {
    let read = |files: &BTreeMap<String, Vec<u8>>, name: &str| -> Result<Value, String> {
        serde_json::from_slice(files.get(name).ok_or_else(|| format!("{name} is missing"))?).map_err(|e| e.to_string())
    };
    let (ma, mb) = (read(a, MANIFEST)?, read(b, MANIFEST)?);
    let (sa, sb) = (Snapshot::from_raw_files(a)?, Snapshot::from_raw_files(b)?);
    let (la, lb) =
        (kind.release_labels(&read(a, GROUND_TRUTH_JSON)?), kind.release_labels(&read(b, GROUND_TRUTH_JSON)?));
    let items = |s: &Snapshot| -> BTreeSet<String> { s.items.iter().map(|i| i.external_id.clone()).collect() };
    let (ia, ib) = (items(&sa), items(&sb));
    let mut parameters = Vec::new();
    changed_paths(&ma["parameters"], &mb["parameters"], "", &mut parameters);
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
            reasons.push(format!("changed parameters: {}", parameters.join(", ")));
        }
        labels.push(json!({"item": item, "from": from, "to": to, "reasons": reasons}));
    }
    Ok(json!({
        "from": ma["release"]["release"],
        "to": mb["release"]["release"],
        "items_added": ib.difference(&ia).collect::<Vec<_>>(),
        "items_removed": ia.difference(&ib).collect::<Vec<_>>(),
        "parameters_changed": parameters,
        "labels_changed": labels,
        "counts": {"from": ma["counts"], "to": mb["counts"]},
    }))
}
