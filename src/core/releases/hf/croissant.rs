//! `croissant.json`: the release in MLCommons Croissant 1.0 (JSON-LD), the
//! metadata the NeurIPS Datasets and Benchmarks track asks for, with the
//! Responsible-AI (RAI) fields filled from what Atelier knows.

use crate::core::kind::contract::{CampaignRules, TaskKind};
use crate::core::releases::format::{self, ReleaseInfo};
use crate::core::releases::hf::table::Written;
use crate::core::releases::snapshot::Snapshot;
use serde_json::{json, Map, Value};

/// The Croissant 1.0 JSON-LD context, as the specification gives it.
fn context() -> Value {
    json!({
        "@language": "en",
        "@vocab": "https://schema.org/",
        "citeAs": "cr:citeAs",
        "column": "cr:column",
        "conformsTo": "dct:conformsTo",
        "cr": "http://mlcommons.org/croissant/",
        "rai": "http://mlcommons.org/croissant/RAI/",
        "data": {"@id": "cr:data", "@type": "@json"},
        "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
        "dct": "http://purl.org/dc/terms/",
        "equivalentProperty": "cr:equivalentProperty",
        "examples": {"@id": "cr:examples", "@type": "@json"},
        "extract": "cr:extract",
        "field": "cr:field",
        "fileProperty": "cr:fileProperty",
        "fileObject": "cr:fileObject",
        "fileSet": "cr:fileSet",
        "format": "cr:format",
        "includes": "cr:includes",
        "isLiveDataset": "cr:isLiveDataset",
        "jsonPath": "cr:jsonPath",
        "key": "cr:key",
        "md5": "cr:md5",
        "parentField": "cr:parentField",
        "path": "cr:path",
        "recordSet": "cr:recordSet",
        "references": "cr:references",
        "regex": "cr:regex",
        "repeated": "cr:repeated",
        "replace": "cr:replace",
        "samplingRate": "cr:samplingRate",
        "sc": "https://schema.org/",
        "separator": "cr:separator",
        "source": "cr:source",
        "subField": "cr:subField",
        "transform": "cr:transform"
    })
}

/// A Croissant id for a file: its name (unique in a release).
fn file_id(t: &Written) -> String {
    format!("{}.parquet", t.table.name)
}

/// One record set: a table's fields, read from its Parquet file's columns.
fn record_set(t: &Written) -> Value {
    let name = t.table.name;
    let fields: Vec<Value> = t
        .table
        .columns
        .iter()
        .map(|c| {
            let mut field = json!({
                "@type": "cr:Field",
                "@id": format!("{name}/{}", c.name),
                "name": c.name,
                "description": c.description,
                "dataType": c.ty.croissant(),
                "source": {"fileObject": {"@id": file_id(t)}, "extract": {"column": c.name}},
            });
            if c.ty.is_list() {
                field["repeated"] = Value::Bool(true);
            }
            if let Some((_, table, column)) = t.table.references.iter().find(|(from, _, _)| *from == c.name) {
                field["references"] = json!({"field": {"@id": format!("{table}/{column}")}});
            }
            field
        })
        .collect();
    let mut set = json!({
        "@type": "cr:RecordSet",
        "@id": name,
        "name": name,
        "description": t.table.description,
        "field": fields,
    });
    if !t.table.key.is_empty() {
        set["key"] = t.table.key.iter().map(|k| json!({"@id": format!("{name}/{k}")})).collect();
    }
    set
}

/// The RAI fields: how the data was collected, annotated and filtered, and
/// what it holds about people.
fn rai(kind: &dyn TaskKind, rules: &dyn CampaignRules, snapshot: &Snapshot, aggregate: &[u8]) -> Map<String, Value> {
    let c = &snapshot.campaign;
    let crowd = c.settings.map_or(kind.about().default_settings.crowd(), |s| s.crowd());
    let counts = format::counts(snapshot);
    let background: Vec<String> = crate::core::releases::datasheet::background_summary(snapshot)
        .into_iter()
        .map(|(q, answers)| {
            let parts: Vec<String> = answers.iter().map(|(a, n)| format!("{a}: {n}")).collect();
            format!("{q} ({})", parts.join(", "))
        })
        .collect();
    let who = if crowd {
        "crowd workers recruited through a crowd platform (Prolific or Amazon Mechanical Turk links), paid per \
         questionnaire through the platform"
    } else {
        "expert annotators with accounts, working in the Atelier annotation service"
    };
    let excluded = counts["responses_excluded"].as_object().cloned().unwrap_or_default();
    let filters = if excluded.is_empty() {
        "No response was excluded.".to_owned()
    } else {
        let reasons: Vec<String> = excluded.iter().map(|(r, n)| format!("{r}: {n}")).collect();
        format!(
            "Responses excluded by the campaign's quality rules (kept in `responses` with the reason): {}.",
            reasons.join("; ")
        )
    };
    let parameters = format::parameters(rules, snapshot);
    let mut rai = Map::new();
    let mut put = |key: &str, value: Value| {
        rai.insert(format!("rai:{key}"), value);
    };
    put(
        "dataCollection",
        format!(
            "{} annotators, {who}, gave {} responses in {} questionnaires ({} submitted) on {} items. {}",
            counts["annotators"],
            counts["responses"],
            counts["batches"],
            counts["submissions"],
            counts["items"],
            if background.is_empty() {
                "No background questions were asked.".to_owned()
            } else {
                format!("Background questions asked once per annotator: {}.", background.join("; "))
            }
        )
        .into(),
    );
    put("dataCollectionType", json!([if crowd { "Crowdsourced" } else { "Manual Human Curator" }]));
    put("dataAnnotationProtocol", rules.policy().datasheet_task.clone().into());
    put("dataAnnotationPlatform", json!(["Atelier"]));
    put(
        "dataAnnotationAnalysis",
        Value::from(match kind.datasheet_quality(aggregate) {
            q if q.is_empty() => format!("{} responses counted.", counts["responses_counted"]),
            q => q,
        }),
    );
    put(
        "dataPreprocessingProtocol",
        format!("{filters} Parameters that shaped the ground truth (configuration and fixed rules): {parameters}")
            .into(),
    );
    put(
        "annotatorDemographics",
        Value::from(if background.is_empty() {
            "Not collected.".to_owned()
        } else {
            format!("Self-reported background (annotators per answer): {}.", background.join("; "))
        }),
    );
    put(
        "personalSensitiveInformation",
        "Annotators appear only under pseudonyms (random identifiers stable within one release); no names, crowd \
         platform ids, e-mail or network addresses are included."
            .into(),
    );
    put("dataUseCases", format!("Evaluating {} models against human judgement.", kind.title()).into());
    put(
        "dataLimitations",
        "Judgements reflect the annotators who took part, not any wider population; items with few counted \
         responses have noisy labels; other exclusion rules give other data."
            .into(),
    );
    put(
        "dataReleaseMaintenancePlan",
        "Releases are immutable and numbered; a corrected or extended ground truth is a new release, each \
         verifiable byte for byte against its manifest."
            .into(),
    );
    rai
}

/// Renders the Croissant document for the folder's tables.
pub fn render(
    kind: &dyn TaskKind,
    rules: &dyn CampaignRules,
    snapshot: &Snapshot,
    aggregate: &[u8],
    info: &ReleaseInfo,
    tables: &[Written],
) -> Value {
    let c = &snapshot.campaign;
    let distribution: Vec<Value> = tables
        .iter()
        .map(|t| {
            json!({
                "@type": "cr:FileObject",
                "@id": file_id(t),
                "name": file_id(t),
                "description": format!("The `{}` table.", t.table.name),
                "contentUrl": t.path(),
                "encodingFormat": "application/x-parquet",
                "sha256": t.sha256,
            })
        })
        .collect();
    let mut doc = json!({
        "@context": context(),
        "@type": "sc:Dataset",
        "conformsTo": "http://mlcommons.org/croissant/1.0",
        "name": format!("{} (release v{})", c.name, info.release),
        "description": format!(
            "Human judgements for the {} benchmark collected with Atelier (campaign {}, release v{}).{}",
            kind.title(),
            c.id,
            info.release,
            if info.note.is_empty() { String::new() } else { format!(" {}", info.note) }
        ),
        "license": crate::core::releases::hf::card::license(info),
        "url": format!("urn:uuid:{}", c.id),
        "version": format!("{}.0.0", info.release),
        "datePublished": info.created_at,
        "creator": {"@type": "sc:Person", "name": info.created_by},
        "citeAs": format!(
            "@misc{{atelier_{}_v{},\n  title = {{{}, release v{}}},\n  note = {{Atelier campaign {}}},\n  year = {{{}}}\n}}",
            c.id.simple(),
            info.release,
            c.name.replace(['{', '}'], ""),
            info.release,
            c.id,
            info.created_at.get(..4).unwrap_or_default()
        ),
        "keywords": ["fashion", "human annotation", kind.title()],
        "isLiveDataset": false,
        "distribution": distribution,
        "recordSet": tables.iter().map(record_set).collect::<Vec<_>>(),
    });
    if let Some(map) = doc.as_object_mut() {
        map.extend(rai(kind, rules, snapshot, aggregate));
    }
    doc
}
