#!/bin/bash
# Counts the runtime calls, system calls and context switches of one GET through the real engine (retains,
# releases, objects, casts, task-allocator frames, task switches, mallocs), with uprobes on the Swift runtime and
# glibc, for one or more builds of the benchmark executable taking turns against one server process. Deterministic
# where the jobs' times are not (BENCHMARKS.md, "The engine's guards"): each build runs the job twice, with N1 and
# N2 units, and the difference is divided by N2 - N1, so the connections' set-up drops out.
#
#   Benchmarks/Scripts/exchange-counts.sh gets 1000 3000 BUILD...      (small GETs one after another: case 1's)
#   Benchmarks/Scripts/exchange-counts.sh gets64 100 300 BUILD...      (rounds of 64 in flight: case 2's; per round)
#
# Each BUILD is a folder holding a release KiteBenchmarks and the malloc interposer's libraries beside it (as
# Benchmarks/.build/release does). The first build also runs the server. Needs root (perf probe) and perf; the
# probes stay installed (`perf probe -d 'probe_*'` removes them).
set -euo pipefail
job=$1 n1=$2 n2=$3
shift 3
runtime=$(dirname "$(readlink -f "$(command -v swift)")")/../lib/swift/linux
libc=$(ldconfig -p | awk '/libc.so.6 .*x86-64/ {print $NF; exit}')
probe() { perf probe -q -x "$1" "$2" 2>/dev/null || true; }
for symbol in swift_retain swift_release swift_allocObject swift_dynamicCast; do
    probe "$runtime/libswiftCore.so" "$symbol"
done
probe "$runtime/libswift_Concurrency.so" swift_task_alloc
probe "$runtime/libswift_Concurrency.so" swift_task_switch
probe "$libc" malloc
events=(-e probe_libswiftCore:swift_retain -e probe_libswiftCore:swift_release -e probe_libswiftCore:swift_allocObject
    -e probe_libswiftCore:swift_dynamicCast -e probe_libswift_Concurrency:swift_task_alloc
    -e probe_libswift_Concurrency:swift_task_switch -e probe_libc:malloc -e raw_syscalls:sys_enter -e context-switches)

# The server process serves until its standard input closes, and prints its port first.
folder=$(mktemp -d)
trap 'exec 9>&-; wait; rm -rf "$folder"' EXIT
mkfifo "$folder/input"
LD_LIBRARY_PATH=$1 KITE_BENCHMARK_SERVER_PROCESS=1 "$1/KiteBenchmarks" <"$folder/input" >"$folder/server" 2>&1 &
exec 9>"$folder/input"
for _ in $(seq 1 100); do grep -q PORT "$folder/server" && break; sleep 0.1; done
port=$(awk '/PORT/ {print $2}' "$folder/server")
[ -n "$port" ] || { echo "the server process did not start: $(cat "$folder/server")" >&2; exit 1; }

count() {
    LD_LIBRARY_PATH=$1 KITE_BENCHMARK_CLIENT_PROCESS="$job Kite http://127.0.0.1:$port $2" \
        perf stat -x, "${events[@]}" "$1/KiteBenchmarks" 2>&1 >/dev/null | grep -E 'probe_|sys_enter|context-switches' || {
        echo "the job failed: run $1/KiteBenchmarks with KITE_BENCHMARK_CLIENT_PROCESS set to see why" >&2
        exit 1
    }
}
for round in 1 2; do
    for build in "$@"; do
        echo "== $build, run $round"
        count "$build" "$n1" >"$folder/small"
        count "$build" "$n2" >"$folder/large"
        paste -d, "$folder/small" "$folder/large" | awk -F, -v units=$((n2 - n1)) '{
            n = split($3, name, ":"); printf "%-20s %10.2f\n", name[n], ($(NF / 2 + 1) - $1) / units }'
    done
done
