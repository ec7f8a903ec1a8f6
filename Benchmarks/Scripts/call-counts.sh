#!/bin/bash
# Counts the runtime calls one GET of the `pipeline` job makes (retains, releases, objects, task-allocator
# frames, executor switches, task creations, mallocs), with uprobes on the Swift runtime and glibc.
# Deterministic where the job's time is not: two runs of the job (1,000 and 3,000 GETs per round, nine rounds,
# each GET followed by a bare task hop), and the difference divided by the 18,000 extra GET-and-hop pairs.
#
#   Benchmarks/Scripts/call-counts.sh Benchmarks/.build/release/KiteBenchmarks
#
# Needs root (perf probe) and perf. The probes stay installed; `perf probe -d 'probe_*'` removes them.
set -euo pipefail
binary=$1
runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
# The benchmark links package-benchmark's malloc interposer, built beside it.
interposer=$(cd "$(dirname "$0")/.." && pwd)/.build/x86_64-unknown-linux-gnu/release
probe() { perf probe -q -x "$1" "$2" 2>/dev/null || true; }
probe "$runtime/libswiftCore.so" swift_retain
probe "$runtime/libswiftCore.so" swift_release
probe "$runtime/libswiftCore.so" swift_allocObject
probe "$runtime/libswift_Concurrency.so" swift_task_alloc
probe "$runtime/libswift_Concurrency.so" swift_task_switch
probe "$runtime/libswift_Concurrency.so" swift_task_create
probe "$libc" malloc
events=(-e probe_libswiftCore:swift_retain -e probe_libswiftCore:swift_release -e probe_libswiftCore:swift_allocObject
    -e probe_libswift_Concurrency:swift_task_alloc -e probe_libswift_Concurrency:swift_task_switch
    -e probe_libswift_Concurrency:swift_task_create -e probe_libc:malloc)
run() {
    LD_LIBRARY_PATH="$interposer" \
        KITE_BENCHMARK_CLIENT_PROCESS="pipeline Kite http://api.test $1" \
        perf stat -x, "${events[@]}" "$binary" 2>&1 >/dev/null | grep probe || {
        echo "the job failed: run $binary with KITE_BENCHMARK_CLIENT_PROCESS set to see why" >&2
        exit 1
    }
}
paste -d, <(run 1000) <(run 3000) | awk -F, '{ split($3, name, ":"); printf "%-20s %8.1f\n", name[2], ($(NF/2+1) - $1) / 18000 }'
