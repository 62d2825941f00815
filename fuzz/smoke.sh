#!/usr/bin/env bash
# Runs every fuzz target for a short, bounded time on its committed corpus (fuzz/corpus/<target>):
# a crash, a leak, an input slower than the per-input timeout or a memory bound broken fails.
# New inputs go to a scratch directory, so the checkout stays as it was; a failing input is
# saved under fuzz/artifacts/<target>/ (ignored by git) and its libFuzzer log printed.
#
#   fuzz/smoke.sh [seconds per target, default 20] [target...]
#
# Needs the nightly toolchain and cargo-fuzz (`cargo install cargo-fuzz --locked`). The bounds
# are those of docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
[ $# -gt 0 ] && shift
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <(cargo +nightly fuzz list)
fi
cargo +nightly fuzz build
scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target"
  log="$scratch/$target.log"
  # stdin is /dev/null: an input naming /dev/stdin (a kubeconfig's tokenFile) reads nothing.
  if cargo +nightly fuzz run "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -print_final_stats=1 </dev/null >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+' "$log" | tail -1)
    echo "fuzz $target: ok, $execs runs in ${seconds}s ($speed/s), $cov, peak RSS ${rss} MB"
  else
    echo "fuzz $target: FAILED" >&2
    tail -80 "$log" >&2
    failed+=("$target")
  fi
done
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
