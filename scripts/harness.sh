#!/usr/bin/env bash
# Load and fault harness, on this machine only (loopback, temporary
# directories, embedded PostgreSQL started and stopped by each part):
#
#   scripts/harness.sh            all three parts (about 12 minutes on 2 cores)
#   scripts/harness.sh ingest     votes and next task against pgbench on the same cluster
#   scripts/harness.sh faults     kill -9 of the service and of PostgreSQL, PostgreSQL shutdown,
#                                 under retrying load: acknowledged = stored exactly once
#   scripts/harness.sh scale      VTON-QBench size: import, rating, campaign page, exports, a release, RSS
#
# Each part prints RESULT lines; BENCHMARKS.md records them with the date and
# the machine. Needs PostgreSQL's server binaries and pgbench (Debian:
# postgresql, postgresql-contrib on older releases); the ingest part sends
# its votes with wrk (Debian: wrk) when it is installed, as the audit did.
set -euo pipefail
cd "$(dirname "$0")/.."
parts=("${@:-ingest faults scale}")
echo "$(date -u +%Y-%m-%dT%H:%MZ) $(nproc) cores, $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ //'), $(rustc --version)"
for part in ${parts[*]}; do
  case "$part" in
    ingest) cargo bench --quiet --bench vote_ingest ;;
    faults) cargo bench --quiet --bench faults ;;
    scale) cargo bench --quiet --bench scale ;;
    *) echo "unknown part: $part (ingest, faults or scale)" >&2; exit 2 ;;
  esac
done
