#!/bin/bash
# Kite's fuzz targets (libFuzzer, with AddressSanitizer and LeakSanitizer), from the repository root:
#
#   Fuzz/fuzz.sh build                      build the one binary that holds every target (debug: `@testable`), in the
#                                           tests' build folder (.build), whose dependencies it reuses
#   Fuzz/fuzz.sh build-release              the same binary with the dependencies optimised (.build-fuzz-release; 18
#                                           minutes the first time): `run` and `all` use it when it is there
#   Fuzz/fuzz.sh list                       the targets
#   Fuzz/fuzz.sh run TARGET SECONDS [RUNS]  fuzz one target, growing Fuzz/Corpus/TARGET
#   Fuzz/fuzz.sh all SECONDS [RUNS]         every target, two at a time
#   Fuzz/fuzz.sh parallel TARGET SECONDS N  one target in N processes at once, sharing Fuzz/Corpus/TARGET (each
#                                           logs to Fuzz/Findings/TARGET-logs/fuzz-I.log): for the whole-client
#                                           targets, whose inputs mostly wait, so one process leaves a core idle
#   Fuzz/fuzz.sh check [SECONDS]            every target briefly against its committed corpus (CI: 20 s each),
#                                           new inputs kept out of the tree
#
# Each input is at most 4,096 bytes and must finish in 100 ms of CPU (the harness traps past it) and in 2 s of wall
# clock (libFuzzer; 20 s in CI's check);
# a single allocation over 64 MiB or a resident size over 2 GiB is a finding. A finding's input is written to
# Fuzz/Findings/; replay it with `KITE_FUZZ_TARGET=TARGET .build/debug/KiteFuzz FILE`.
set -euo pipefail
cd "$(dirname "$0")/.."
# The build folder: the tests' (Fuzz/Package.swift says why); KITE_FUZZ_SCRATCH names another.
SCRATCH=${KITE_FUZZ_SCRATCH:-.build}
BIN=$SCRATCH/debug/KiteFuzz
# Long runs take the release build when there is one (the whole-client targets run about 3 times as fast); CI's check
# always takes the debug build it has just made.
RELEASE_SCRATCH=.build-fuzz-release
RUN_BIN=$BIN
if [ -x "$RELEASE_SCRATCH/release/KiteFuzz" ] && [ -z "${KITE_FUZZ_DEBUG:-}" ]; then RUN_BIN=$RELEASE_SCRATCH/release/KiteFuzz; fi
# Swift's backtracer reads the stack after a trap, which AddressSanitizer reports as an underflow of its own.
export SWIFT_BACKTRACE=enable=no
# Leaks of dependencies (swift-corelibs-foundation), each explained in the file.
export LSAN_OPTIONS="suppressions=$(pwd)/.ci/lsan-suppressions.txt${LSAN_OPTIONS:+:$LSAN_OPTIONS}"
OPTIONS=(-max_len=4096 -timeout=2 -malloc_limit_mb=64 -rss_limit_mb=2048 -print_final_stats=1)

# The options of one target in a mode (run or check). decompression runs the decoder on a task of its own;
# LeakSanitizer reports the harness's output Data of some inputs as leaked after the task ended (RELIABILITY.md,
# open findings), so its leak check is off until that is explained. propertyList, xmlDocument and xmlParser: Foundation
# leaks an error object for every malformed input (suppressed, .ci/lsan-suppressions.txt), and libFuzzer then runs
# a whole-heap leak check after each, about 14 inputs a second; long runs turn the check off, CI's check keeps it.
options() {
    echo "${OPTIONS[@]}"
    case "$1/$2" in
    decompression/*) echo -detect_leaks=0 ;;
    # A whole exchange (its total timeout is 2 s; ClientHarness.bound checks 10 s of wall clock). The leak check
    # after each input is off: a request cancelled or shut down winds down on the cooperative pool after its input
    # has ended, and what it still holds then (a response's Data: its storage sits behind an enum case kept in the
    # pointer's spare bits, llvm/llvm-project#56751) reads as leaked; the check took 40 % of the time besides.
    # LeakSanitizer's check at exit stays on.
    client/* | clientHTTP2/*) echo -timeout=30 -detect_leaks=0 ;;
    propertyList/run | xmlDocument/run | xmlParser/run) echo -detect_leaks=0 ;;
    esac
    # CI's check runs beside the documentation and Benchmarks builds, where a process can stall for seconds:
    # libFuzzer's timeout is on the wall clock, so there it only catches hangs (20 s). Slow inputs are the harness's
    # own bound, on CPU time.
    if [ "$2" = check ] && [ "$1" != client ] && [ "$1" != clientHTTP2 ]; then echo -timeout=20; fi
}

# decompression: LeakSanitizer's check at exit too (libFuzzer's -detect_leaks=0 turns off only its check after each
# input); CI's check once failed on the same open finding there (282 bytes in 2 allocations, 2026-11-29).
asan_options() {
    case "$1" in
    decompression) echo "detect_leaks=0${ASAN_OPTIONS:+:$ASAN_OPTIONS}" ;;
    *) echo "${ASAN_OPTIONS:-}" ;;
    esac
}

targets() {
    sed -n '/^enum FuzzTarget/,/^    static let selected/p' Fuzz/Sources/KiteFuzz/FuzzTarget.swift |
        sed -n 's/^    case \([A-Za-z0-9]*\)$/\1/p'
}

# The flags are in Fuzz/Package.swift, on Kite's sources and the targets only. (One flag, `-sanitize=fuzzer,address`:
# swiftc keeps only the last of several `-sanitize=` flags.)
# --disable-build-manifest-caching: the build folder is shared with other packages, and SwiftPM 6.3.1 can reuse the
# cached plan of the package built last instead of planning this one (seen with TSan/, .ci/run says more).
build() {
    swift build --package-path Fuzz --scratch-path "$SCRATCH" --disable-build-manifest-caching
}

build_release() {
    swift build -c release --package-path Fuzz --scratch-path "$RELEASE_SCRATCH" --disable-build-manifest-caching
}

run() {
    local target=$1 seconds=$2 runs=${3:--1}
    mkdir -p "Fuzz/Corpus/$target" Fuzz/Findings
    # shellcheck disable=SC2046
    ASAN_OPTIONS=$(asan_options "$target") KITE_FUZZ_TARGET=$target "$RUN_BIN" "Fuzz/Corpus/$target" \
        $(options "$target" run) -max_total_time="$seconds" -runs="$runs" -artifact_prefix="Fuzz/Findings/$target-"
}

# N fuzzers at once on one corpus (libFuzzer's -jobs=N -workers=N: each reads the others' new inputs as they appear).
# Each runs the whole corpus first, then mutates; the executions of a run are the sum of the logs' last "#N" counts.
# (Not -fork: each of its short jobs starts a process and runs its part of the corpus again.)
parallel() {
    local target=$1 seconds=$2 workers=$3 root logs binary=$RUN_BIN
    root=$(pwd)
    case "$binary" in /*) ;; *) binary=$root/$binary ;; esac
    logs=$root/Fuzz/Findings/$target-logs
    mkdir -p "Fuzz/Corpus/$target" "$logs"
    # shellcheck disable=SC2046
    (cd "$logs" && ASAN_OPTIONS=$(asan_options "$target") KITE_FUZZ_TARGET=$target "$binary" \
        "$root/Fuzz/Corpus/$target" $(options "$target" run) -jobs="$workers" -workers="$workers" \
        -max_total_time="$seconds" -artifact_prefix="$root/Fuzz/Findings/$target-")
    local total=0 count
    for log in "$logs"/fuzz-*.log; do
        count=$(grep -o '^#[0-9]*' "$log" | tail -n 1 | tr -d '#')
        total=$((total + ${count:-0}))
    done
    echo "$target: $total executions in $workers processes"
}

# A target with open findings (RELIABILITY.md, "Open findings") that a mutation can meet in CI's seconds: CI replays
# its committed corpus, every input once with every property checked, and leaves the mutating to the long runs.
replay_only() { [ "$1" = clientHTTP2 ]; }

check_one() {
    local target=$1 seconds=$2 scratch=$3 inputs
    mkdir -p "$scratch/$target"
    if replay_only "$target"; then
        inputs=("Fuzz/Corpus/$target"/*)
    else
        inputs=("$scratch/$target" "Fuzz/Corpus/$target" -max_total_time="$seconds")
    fi
    # shellcheck disable=SC2046
    if ASAN_OPTIONS=$(asan_options "$target") KITE_FUZZ_TARGET=$target "$BIN" $(options "$target" check) \
        -artifact_prefix="Fuzz/Findings/$target-" "${inputs[@]}" >"$scratch/$target.log" 2>&1; then
        if grep -q "Is the code instrumented for coverage" "$scratch/$target.log"; then
            echo "fuzz $target: FAILED: the parsers are not instrumented for coverage"
            return 1
        fi
        if replay_only "$target"; then
            echo "fuzz $target: $(grep -c '^Executed ' "$scratch/$target.log") inputs replayed, no finding"
        else
            echo "fuzz $target: $(awk '/^stat::number_of_executed_units/ {print $2}' "$scratch/$target.log") runs, no finding"
        fi
    else
        echo "fuzz $target: FAILED"
        grep -E "Fatal error|Assertion failed|Precondition failed|ERROR: |SUMMARY|Test unit written" "$scratch/$target.log" |
            head -20
        return 1
    fi
}

# Every target against its committed corpus (new inputs go to a scratch directory), two at a time.
check() {
    local seconds=$1 failed=0 scratch pids=()
    scratch=$(mktemp -d)
    mkdir -p Fuzz/Findings
    for target in $(targets); do
        check_one "$target" "$seconds" "$scratch" &
        pids+=($!)
        if [ ${#pids[@]} -eq 2 ]; then
            wait "${pids[0]}" || failed=1
            pids=("${pids[1]}")
        fi
    done
    for pid in "${pids[@]}"; do wait "$pid" || failed=1; done
    rm -rf "$scratch"
    return $failed
}

case "${1:-}" in
build) build ;;
build-release) build_release ;;
list) targets ;;
run) run "$2" "$3" "${4:-}" ;;
parallel) parallel "$2" "$3" "$4" ;;
all)
    seconds=$2 runs=${3:--1}
    targets | xargs -P 2 -I{} bash -c "Fuzz/fuzz.sh run {} $seconds $runs > Fuzz/Findings/{}.log 2>&1 && echo '{}: done' || echo '{}: FAILED'"
    ;;
check) check "${2:-20}" ;;
*) sed -n '2,18p' "$0"; exit 2 ;;
esac
