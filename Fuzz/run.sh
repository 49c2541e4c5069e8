#!/usr/bin/env bash
# Builds the libFuzzer executables (the recipe of CONTRIBUTING.md, "Fuzzing") and runs one target or all of them.
#
#   Fuzz/run.sh [TARGET|all] [SECONDS]   fuzz TARGET (default: all, one after another) for SECONDS each (default 60)
#   Fuzz/run.sh merge [TARGET|all]       add the small inputs of Fuzz/work/TARGET that bring new coverage to Fuzz/Corpus/TARGET
#   Fuzz/run.sh replay [TARGET|all]      run every file of Fuzz/Corpus/TARGET once (no fuzzing)
#   Fuzz/run.sh build                    only build
#
# New inputs go to Fuzz/work/TARGET (not committed), crashers, hangs and leaks to Fuzz/Crashes/TARGET/.
# FUZZ_KEEP_GOING=1 keeps fuzzing after a crash or timeout (libFuzzer's -fork=1 with -ignore_crashes,
# still one fuzzing process at a time), for long unattended runs that should collect every finding.
# Every fuzzer runs under `nice -n 19`. FUZZ_JOBS is not supported on purpose: one process at a time.
set -euo pipefail
cd "$(dirname "$0")"
TARGETS=(FileOpen SegmentDecode Predicate Operations)

build() {
    # --sanitize fuzzer alone links libFuzzer; -Xswiftc -sanitize=fuzzer,address instruments every
    # module (both are needed, CONTRIBUTING.md). REALM_FAULT_INJECTION compiles the engine's fault points
    # into this release build for the Operations target.
    nice -n 19 swift build -c release --sanitize fuzzer -Xswiftc -sanitize=fuzzer,address \
        -Xswiftc -DREALM_FAULT_INJECTION >&2
}

binary() { echo "$(swift build -c release --show-bin-path)/$1"; }

select_targets() {
    if [[ "${1:-all}" == all ]]; then echo "${TARGETS[@]}"; return; fi
    for t in "${TARGETS[@]}"; do [[ "$t" == "$1" ]] && { echo "$t"; return; }; done
    echo "unknown target $1 (one of: ${TARGETS[*]} all)" >&2
    exit 1
}

export SWIFT_BACKTRACE=enable=no  # Swift's backtracer garbles AddressSanitizer's reports
# FileOpen and Operations write a file per input: keep them in memory, where fsync costs nothing.
if [[ -d /dev/shm && -w /dev/shm ]]; then
    export TMPDIR=/dev/shm/realm-fuzz-$$
    mkdir -p "$TMPDIR"
    trap 'rm -rf "$TMPDIR"' EXIT
fi
case "${1:-all}" in
build) build ;;
merge)
    build
    # Only inputs up to FUZZ_MERGE_MAX_BYTES (default 2048) are candidates: the committed corpus
    # stays small (mutated copies of the 20 KB seed files would add up fast).
    max_bytes="${FUZZ_MERGE_MAX_BYTES:-2048}"
    for t in $(select_targets "${2:-all}"); do
        mkdir -p "work/$t" "Corpus/$t"
        rm -rf "work/merge-$t" && mkdir -p "work/merge-$t"
        find "work/$t" -type f -size -"$((max_bytes + 1))"c -exec cp {} "work/merge-$t/" \;
        nice -n 19 "$(binary "$t")" -merge=1 -timeout=10 "Corpus/$t" "work/merge-$t"
    done
    ;;
replay)
    build
    for t in $(select_targets "${2:-all}"); do nice -n 19 "$(binary "$t")" -runs=0 -timeout=10 "Corpus/$t"; done
    ;;
*)
    targets=$(select_targets "${1:-all}")
    seconds="${2:-60}"
    keep_going=()
    if [[ "${FUZZ_KEEP_GOING:-0}" == 1 ]]; then
        keep_going=(-fork=1 -ignore_crashes=1 -ignore_timeouts=1 -ignore_ooms=1)
    fi
    build
    for t in $targets; do
        mkdir -p "work/$t" "work/bin" "Crashes/$t"
        # A copy, so that building again during a long run does not swap the binary under it.
        cp "$(binary "$t")" "work/bin/$t"
        echo "== $t for ${seconds}s" >&2
        # The first directory receives new inputs; the committed corpus is only read.
        nice -n 19 "work/bin/$t" "work/$t" "Corpus/$t" -max_total_time="$seconds" -timeout=10 \
            -artifact_prefix="Crashes/$t/" -print_final_stats=1 "${keep_going[@]}"
    done
    ;;
esac
