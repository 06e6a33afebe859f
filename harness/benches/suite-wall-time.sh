#!/usr/bin/env bash
# The built-in suite's wall time: `conformance run` against the built-in runtime with the
# default options (longest waits first, --jobs 16) beside the old default (--jobs 4, corpus
# order), RUNS runs each (default 5, interleaved so machine load falls on both alike), with
# the release binary. Prints every run (wall seconds, verdict counts), the medians, and the
# load average before and after: the machine's load is part of the figure.
#
#   harness/benches/suite-wall-time.sh            # builds the release binary first
#   RUNS=3 BIN=target/release/conformance harness/benches/suite-wall-time.sh
#
# A bench, not a test: nothing here asserts a time.
set -euo pipefail

root="$(cd "$(dirname "$0")/../.." && pwd)"
runs="${RUNS:-5}"
bin="${BIN:-}"
if [[ -z "$bin" ]]; then
  (cd "$root" && cargo build -q --release -p conformance-cli --bin conformance)
  bin="$root/target/release/conformance"
fi
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

# One run: wall seconds and the verdict summary line.
one() {
  local name="$1"
  shift
  local dir="$work/$name"
  rm -rf "$dir"
  local start end
  start=$(date +%s.%N)
  "$bin" run --quiet --report-dir "$dir" "$@" >"$work/out" 2>&1 || true
  end=$(date +%s.%N)
  local summary
  summary=$(grep -m1 '^Conformance' "$work/out" | sed -E 's/ against .*//')
  printf '%.2f\t%s\n' "$(echo "$end - $start" | bc)" "$summary"
}

median() {
  sort -n | awk '{ v[NR] = $1 } END { if (NR % 2) print v[(NR + 1) / 2]; else printf "%.2f\n", (v[NR / 2] + v[NR / 2 + 1]) / 2 }'
}

echo "load average before: $(cut -d' ' -f1-3 /proc/loadavg) ($(nproc) CPUs)"
: >"$work/new"
: >"$work/old"
for i in $(seq 1 "$runs"); do
  line=$(one "new-$i")
  echo "default options          run $i: $line"
  echo "$line" | cut -f1 >>"$work/new"
  line=$(one "old-$i" --jobs 4 --corpus-order)
  echo "old default (--jobs 4, corpus order) run $i: $line"
  echo "$line" | cut -f1 >>"$work/old"
done
echo "load average after: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "median wall time, default options: $(median <"$work/new") s"
echo "median wall time, old default:     $(median <"$work/old") s"
