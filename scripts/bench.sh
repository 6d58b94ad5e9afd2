#!/usr/bin/env bash
# Runs Atelier's statistics benchmarks beside the Python reference
# implementation, rewrites its two rows of BENCHMARKS.md's table and adds the
# run to docs/benchmarks-history.md.
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
day=$(date -u +%Y-%m-%d)
# The two rows of the current-figures table are rewritten; the run's details go to the history.
alpha_row="| ordinal alpha per questionnaire, 2,139 questionnaires × 50 × 4 | $(ms "$rust_alpha") | PyPI \`krippendorff\` $(ms "$py_alpha"): **$(ratio "$py_alpha" "$rust_alpha")x** | ≥ 50x | \`scripts/bench.sh\` (\`cargo bench --bench vton_alpha\`) | $day |"
cli_row="| \`atelier stats alpha --format long\`, $ratings ratings, whole process | $(ms "$rust_cli") | pandas + \`krippendorff\` $(ms "$py_cli"): **$(ratio "$py_cli" "$rust_cli")x** | ≥ 5x | \`scripts/bench.sh\` | $day |"
awk -v a="$alpha_row" -v c="$cli_row" '
  /^\| ordinal alpha per questionnaire/ { print a; next }
  /^\| `atelier stats alpha --format long`/ { print c; next }
  { print }' BENCHMARKS.md >BENCHMARKS.md.new && mv BENCHMARKS.md.new BENCHMARKS.md
cat >>docs/benchmarks-history.md <<MD

## Statistics against the Python reference ($day)
\`scripts/bench.sh\` on $(nproc) cores ($cpu), $(uname -sr), $(rustc --version); both sides pinned to one core
(\`taskset -c 0\`), medians of 7 runs. Alpha per questionnaire at VTON scale (427,800 ratings): Python
\`krippendorff.alpha\` $(ms "$py_alpha"), Atelier \`stats::alpha\` $(ms "$rust_alpha") ($(ratio "$py_alpha" "$rust_alpha")x).
\`atelier stats alpha --format long\` on $ratings ratings: Python (pandas + krippendorff) $(ms "$py_cli") (alpha
$py_value), Atelier $(ms "$rust_cli") (alpha $rust_value), $(ratio "$py_cli" "$rust_cli")x.
MD
sed -n '/^## Current figures/,/^## How to run/p' BENCHMARKS.md
