//! The layout the architecture page promises: no loop of more than two
//! files anywhere in `src`, and no loop between top-level modules, as
//! `scripts/import_map.py` reads the imports.

use std::process::Command;

fn import_map(args: &[&str]) -> (bool, String) {
    let root = env!("CARGO_MANIFEST_DIR");
    let out = Command::new("python3")
        .arg(format!("{root}/scripts/import_map.py"))
        .args(args)
        .output()
        .expect("python3 runs (the suite's Python tests need it too)");
    (out.status.success(), String::from_utf8_lossy(&out.stdout).into_owned())
}

#[test]
fn no_import_loop_longer_than_two_files() {
    let (ok, report) = import_map(&[]);
    assert!(ok, "{report}");
    assert!(report.contains("0 loops over 2"), "{report}");
}

#[test]
fn top_level_modules_do_not_import_each_other_in_a_loop() {
    let (ok, report) = import_map(&["--depth", "1"]);
    assert!(ok, "{report}");
}

#[test]
fn the_import_map_sees_a_loop_when_there_is_one() {
    // The check can fail: allowed two-file pairs (a campaign and the kind
    // registry naming each other) are loops it reports under `--max 1`.
    let (ok, report) = import_map(&["--max", "1"]);
    assert!(!ok, "{report}");
    assert!(report.contains("loop of 2: core/campaign/campaigns core/kind/registry"), "{report}");
}
