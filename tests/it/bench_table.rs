//! BENCHMARKS.md's table of current figures, as the benches write it
//! (`benches/support/figures.rs`; benches run no tests of their own).

use crate::bench_figures::{updated, Row};

#[test]
fn a_row_is_replaced_by_its_first_cell_and_a_new_one_added_at_the_end() {
    let text = "# B\n\n## Current figures\n\n| what | figure | baseline | target | command | taken |\n| --- | --- | --- | --- | --- | --- |\n| a | 1 | | | x | d0 |\n| b | 2 | | | y | d0 |\n\nafter\n";
    let row = |what: &str, figure: &str| Row {
        what: what.into(),
        figure: figure.into(),
        baseline: String::new(),
        target: "t".into(),
        command: "c".into(),
    };
    let out = updated(text, &[row("b", "3"), row("c", "4")], "d1").expect("table");
    assert!(
        out.contains("| a | 1 | | | x | d0 |\n| b | 3 |  | t | c | d1 |\n| c | 4 |  | t | c | d1 |\n\nafter\n"),
        "{out}"
    );
}
