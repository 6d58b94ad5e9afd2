//! The dataset card (`README.md`): the YAML header the Hugging Face Hub
//! reads (one config per table), then the release's datasheet.

use crate::core::kind::contract::TaskKind;
use crate::core::releases::format::ReleaseInfo;
use crate::core::releases::hf::table::Written;
use crate::core::releases::snapshot::Snapshot;
use std::fmt::Write;

/// The Hub's size category for a number of rows.
fn size_category(rows: usize) -> &'static str {
    match rows {
        0..1_000 => "n<1K",
        1_000..10_000 => "1K<n<10K",
        10_000..100_000 => "10K<n<100K",
        100_000..1_000_000 => "100K<n<1M",
        1_000_000..10_000_000 => "1M<n<10M",
        _ => "10M<n<100M",
    }
}

/// A YAML scalar: JSON's double-quoted string is YAML's too.
fn yaml(text: &str) -> String {
    serde_json::Value::from(text).to_string()
}

/// The licence a release declares (the Hub's identifier; `unknown` when the admin gave none).
pub fn license(info: &ReleaseInfo) -> &str {
    info.license.as_deref().unwrap_or("unknown")
}

/// Renders the card.
pub fn render(
    kind: &dyn TaskKind,
    snapshot: &Snapshot,
    info: &ReleaseInfo,
    tables: &[Written],
    empty: &[&str],
    datasheet: &str,
) -> String {
    let c = &snapshot.campaign;
    let mut md = String::from("---\n");
    let _ = writeln!(md, "pretty_name: {}", yaml(&format!("{} (release v{})", c.name, info.release)));
    let _ = writeln!(md, "license: {}", yaml(license(info)));
    let _ = writeln!(md, "language:\n- en");
    let _ = writeln!(md, "task_categories:");
    for category in kind.about().hub_task_categories {
        let _ = writeln!(md, "- {category}");
    }
    let ground_truth_rows = tables.first().map_or(0, |t| t.rows);
    let _ = writeln!(md, "size_categories:\n- {}", size_category(ground_truth_rows));
    let _ = writeln!(md, "tags:\n- fashion\n- human-annotation\n- {}", yaml(&c.kind));
    let _ = writeln!(md, "configs:");
    for (n, t) in tables.iter().enumerate() {
        let _ = writeln!(md, "- config_name: {}", t.table.name);
        let _ = writeln!(md, "  data_files:\n  - split: train\n    path: {}", t.path());
        if n == 0 {
            let _ = writeln!(md, "  default: true");
        }
    }
    md.push_str("---\n\n");
    let _ = writeln!(md, "# {} (release v{})\n", c.name, info.release);
    let _ = writeln!(
        md,
        "Human judgements for the {} benchmark, collected with Atelier. Each table is one configuration; the \
         first, `{}`, loads by default:\n",
        kind.title(),
        tables.first().map_or("ground_truth", |t| t.table.name)
    );
    let _ = writeln!(md, "```python\nfrom datasets import load_dataset\n");
    for t in tables {
        let _ = writeln!(
            md,
            "{} = load_dataset(\"path/to/this/folder\", \"{}\", split=\"train\")",
            t.table.name, t.table.name
        );
    }
    md.push_str("```\n\n`croissant.json` describes the same files in MLCommons Croissant 1.0.\n\n");
    if !empty.is_empty() {
        let names: Vec<String> = empty.iter().map(|n| format!("`{n}`")).collect();
        let _ = writeln!(md, "Tables without rows in this release are left out: {}.\n", names.join(", "));
    }
    md.push_str("## Tables\n\n");
    for t in tables {
        let _ = writeln!(md, "### `{}` ({} rows)\n\n{}\n", t.table.name, t.rows, t.table.description);
        let _ = writeln!(md, "| column | type | description |\n| --- | --- | --- |");
        for col in &t.table.columns {
            let _ = writeln!(md, "| `{}` | {} | {} |", col.name, col.ty.describe(), col.description);
        }
        md.push('\n');
    }
    // The datasheet's sections, one level down under the card's title.
    for line in datasheet.lines().skip_while(|l| l.starts_with("# ")) {
        if line.starts_with('#') {
            md.push('#');
        }
        md.push_str(line);
        md.push('\n');
    }
    md
}
