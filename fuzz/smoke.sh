#!/usr/bin/env bash
# Runs every fuzz target for a short, bounded time on its committed corpus (fuzz/corpus/<target>):
# a crash, a leak, an input slower than the per-input timeout or a memory bound broken fails.
# New inputs go to a scratch directory, so the checkout stays as it was; a failing input is
# saved under fuzz/artifacts/<target>/ (ignored by git), its path and its libFuzzer log printed.
#
#   fuzz/smoke.sh [seconds per target, default 20] [target...]
#
# FUZZ_BUILD_FLAGS: flags for `cargo fuzz build` and `run` (CI passes `--dev`: the build without
# optimisations takes a fraction of the release build's time; docs/fuzzing.md#ci).
# The toolchain: nightly when installed (`cargo +nightly fuzz`), else the stable one with
# RUSTC_BOOTSTRAP=1 (a machine of this kind has no way to fetch a nightly; the sanitizer runtimes
# ship with stable too); FUZZ_TOOLCHAIN=stable forces the latter. Needs cargo-fuzz
# (`cargo install cargo-fuzz --locked`). The bounds are those of docs/fuzzing.md.
set -euo pipefail
cd "$(dirname "$0")/.."
seconds=${1:-20}
[ $# -gt 0 ] && shift
targets=("$@")
read -r -a flags <<<"${FUZZ_BUILD_FLAGS:-}"

if [ "${FUZZ_TOOLCHAIN:-}" != stable ] && cargo +nightly --version >/dev/null 2>&1; then
  fuzz=(cargo +nightly fuzz)
else
  echo "no nightly toolchain: cargo fuzz on $(cargo --version) with RUSTC_BOOTSTRAP=1"
  export RUSTC_BOOTSTRAP=1
  fuzz=(cargo fuzz)
fi
if [ ${#targets[@]} -eq 0 ]; then
  mapfile -t targets < <("${fuzz[@]}" list)
fi

started=$SECONDS
"${fuzz[@]}" build "${flags[@]}"
echo "fuzz build: $((SECONDS - started)) s"

scratch=$(mktemp -d)
trap 'rm -rf "$scratch"' EXIT
failed=()
for target in "${targets[@]}"; do
  mkdir -p "$scratch/$target"
  log="$scratch/$target.log"
  # stdin is /dev/null: an input naming /dev/stdin (a kubeconfig's tokenFile) reads nothing.
  # libFuzzer runs every seed before -max_total_time counts; `timeout` bounds that part too
  # (a kill is a failure).
  if timeout --kill-after=10 "$((seconds + 240))" \
    "${fuzz[@]}" run "${flags[@]}" "$target" "$scratch/$target" "fuzz/corpus/$target" -- \
    -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -malloc_limit_mb=256 \
    -print_final_stats=1 </dev/null >"$log" 2>&1; then
    execs=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log")
    speed=$(sed -n 's/^stat::average_exec_per_sec: *//p' "$log")
    rss=$(sed -n 's/^stat::peak_rss_mb: *//p' "$log")
    done_line=$(grep -E '^#[0-9]+[[:space:]]+DONE' "$log" | tail -1 || true)
    cov=$(grep -oE 'cov: [0-9]+ ft: [0-9]+ corp: [0-9]+/[0-9]+[a-zA-Z]*' <<<"$done_line" || true)
    echo "fuzz $target: ok, $execs runs in ${seconds}s ($speed/s), $cov, peak RSS ${rss} MB"
  else
    status=$?
    echo "fuzz $target: FAILED (exit $status)" >&2
    tail -80 "$log" >&2
    # libFuzzer names the input it saved: "Test unit written to fuzz/artifacts/<target>/crash-…".
    reproducer=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
    if [ -n "$reproducer" ]; then
      echo "fuzz $target: reproducer $reproducer" >&2
      echo "  replay: ${fuzz[*]} run ${flags[*]} $target $reproducer" >&2
    fi
    failed+=("$target")
  fi
done
echo "fuzz smoke: ${#targets[@]} targets, $((SECONDS - started)) s with the build"
if [ ${#failed[@]} -gt 0 ]; then
  echo "fuzz targets failed: ${failed[*]}" >&2
  exit 1
fi
