#!/usr/bin/env bash
# Runs Atelier's statistics benchmarks beside the Python reference
# implementation and writes the figures to BENCHMARKS.md.
#
#   scripts/bench.sh            (needs python3 with venv, network for PyPI once)
set -euo pipefail
cd "$(dirname "$0")/.."
venv=target/bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet krippendorff==0.9.0 pandas numpy
fi
py="$venv/bin/python"
cargo build --release --quiet
cargo bench --quiet --bench vton_alpha --no-run 2>/dev/null
bench_out=$(taskset -c 0 cargo bench --quiet --bench vton_alpha 2>/dev/null)
rust_alpha=$(grep BENCH_SECONDS <<<"$bench_out" | cut -d= -f2)
py_out=$(taskset -c 0 "$py" scripts/bench_reference.py alpha)
py_alpha=$(grep BENCH_SECONDS <<<"$py_out" | cut -d= -f2)

csv=target/bench-long.csv
[ -f "$csv" ] || "$py" scripts/bench_reference.py gen "$csv" >/dev/null
median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
time_cmd() {
  for _ in 1 2 3 4 5 6 7; do
    local s e
    s=$(date +%s.%N); taskset -c 0 "$@" >/dev/null; e=$(date +%s.%N)
    echo "$e - $s" | bc -l
  done | median
}
rust_cli=$(time_cmd target/release/atelier stats alpha --level ordinal --format long "$csv")
py_cli=$(time_cmd "$py" scripts/bench_reference.py long "$csv")
rust_value=$(target/release/atelier stats alpha --level ordinal --format long "$csv")
py_value=$("$py" scripts/bench_reference.py long "$csv")
ratings=$(($(wc -l <"$csv") - 1))

ratio() { echo "scale=1; $1 / $2" | bc -l; }
ms() { printf '%.1f ms' "$(echo "$1 * 1000" | bc -l)"; }
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //')
# The sections written by hand or by the other harnesses are kept as they are.
others=$(awk '/^## / && !/^## (Alpha per questionnaire|Command line, long format)/ {keep = 1} keep' BENCHMARKS.md 2>/dev/null || true)
cat >BENCHMARKS.md <<MD
# Benchmarks

Written by \`scripts/bench.sh\` on $(date -u +%Y-%m-%d), $(nproc) cores ($cpu), $(uname -sr), $(rustc --version).
Both sides are pinned to one core (\`taskset -c 0\`); figures are medians of repeated runs. The machine is a shared VM,\nso single runs vary by up to 2x; rerun the script to see the spread.

## Alpha per questionnaire at VTON scale
2,139 questionnaires x 50 items x 4 raters on a 3-level scale (427,800 ratings): ordinal Krippendorff's alpha per
questionnaire plus the mean score per item (\`cargo bench --bench vton_alpha\`), against PyPI \`krippendorff\` 0.9.0
called once per questionnaire.

| implementation | time | speed-up |
| --- | --- | --- |
| Python \`krippendorff.alpha\` | $(ms "$py_alpha") | 1x |
| Atelier \`stats::alpha\` | $(ms "$rust_alpha") | $(ratio "$py_alpha" "$rust_alpha")x |

Target: at least 50x.

## Command line, long format at benchmark scale
$ratings ratings (62,688 units, 13,838 coders, about 7 ratings per unit), whole process including start-up and CSV
parsing: \`atelier stats alpha --level ordinal --format long\` against a Python script that reads the CSV with pandas
and calls \`krippendorff.alpha\` with value counts (\`scripts/bench_reference.py long\`).

| implementation | time | alpha | speed-up |
| --- | --- | --- | --- |
| Python (pandas + krippendorff) | $(ms "$py_cli") | $py_value | 1x |
| \`atelier stats alpha\` | $(ms "$rust_cli") | $rust_value | $(ratio "$py_cli" "$rust_cli")x |

Target: at least 5x.
MD
if [ -n "$others" ]; then printf '\n%s\n' "$others" >>BENCHMARKS.md; fi
cat BENCHMARKS.md
