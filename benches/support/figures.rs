//! The benches write their figures into BENCHMARKS.md's table of current
//! figures ("## Current figures"): a row is known by its first cell (what
//! users meet); a bench replaces its own rows, adds new ones at the end of
//! the table and leaves every other row as it is. Shortened runs (a smaller
//! scale, fewer seconds) print their rows but do not write them.

use std::path::PathBuf;

/// One row of the table.
pub struct Row {
    /// What users meet (the row's key).
    pub what: String,
    /// The figure.
    pub figure: String,
    /// The baseline measured in the same run, and the ratio to it.
    pub baseline: String,
    /// The target, and whether it is met.
    pub target: String,
    /// The command that produced it.
    pub command: String,
}

impl Row {
    fn cells(&self, taken: &str) -> String {
        let cells = [&self.what, &self.figure, &self.baseline, &self.target, &self.command];
        let cells: Vec<String> = cells.iter().map(|c| c.replace('|', "\\|")).collect();
        format!("| {} | {taken} |", cells.join(" | "))
    }
}

/// The first cell of a table row.
fn key(line: &str) -> Option<&str> {
    let rest = line.strip_prefix('|')?;
    Some(rest.split(" | ").next()?.trim())
}

/// `text` with `rows` written into its table of current figures.
pub fn updated(text: &str, rows: &[Row], taken: &str) -> Result<String, String> {
    let lines: Vec<&str> = text.lines().collect();
    let heading = lines.iter().position(|l| *l == "## Current figures").ok_or("no \"## Current figures\" heading")?;
    let start = (heading..lines.len()).find(|&i| lines[i].starts_with('|')).ok_or("no table under the heading")?;
    let end = (start..lines.len()).find(|&i| !lines[i].starts_with('|')).unwrap_or(lines.len());
    let mut table: Vec<String> = lines[start..end].iter().map(|l| (*l).to_owned()).collect();
    for row in rows {
        let line = row.cells(taken);
        // The header and the rule are the first two lines.
        match table.iter().skip(2).position(|l| key(l) == Some(row.what.as_str())) {
            Some(i) => table[i + 2] = line,
            None => table.push(line),
        }
    }
    let mut out: Vec<String> = lines[..start].iter().map(|l| (*l).to_owned()).collect();
    out.extend(table);
    out.extend(lines[end..].iter().map(|l| (*l).to_owned()));
    Ok(out.join("\n") + "\n")
}

/// Prints the rows and, on a full run, writes them into BENCHMARKS.md.
pub fn record(rows: &[Row], full_run: bool) {
    for row in rows {
        println!("FIGURE {} | {} | {} | {}", row.what, row.figure, row.baseline, row.target);
    }
    if !full_run {
        println!("BENCHMARKS.md not written: a shortened run");
        return;
    }
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("BENCHMARKS.md");
    let taken = chrono::Utc::now().format("%Y-%m-%d").to_string();
    let result = std::fs::read_to_string(&path)
        .map_err(|e| e.to_string())
        .and_then(|text| updated(&text, rows, &taken))
        .and_then(|text| std::fs::write(&path, text).map_err(|e| e.to_string()));
    match result {
        Ok(()) => println!("BENCHMARKS.md: {} row(s) written", rows.len()),
        Err(e) => eprintln!("BENCHMARKS.md not written: {e}"),
    }
}

/// "met" or "**not met**", for a target cell.
pub fn met(yes: bool) -> &'static str {
    if yes {
        "met"
    } else {
        "**not met**"
    }
}

/// 487900 as "487,900".
pub fn thousands(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}
