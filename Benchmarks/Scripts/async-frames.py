#!/usr/bin/env python3
"""Lists the largest async frames of a binary's async functions.

Each async function has an "async function pointer" (mangled name ending in `Tu`): a relative offset to
the function and the size of the context (frame) its caller allocates from the task allocator. A frame
larger than the allocator's slab (about 1,000 bytes) makes it take a new slab from malloc for every
task that calls the function, so large frames on the request path cost allocations per request.

    Benchmarks/Scripts/async-frames.py Benchmarks/.build/release/KiteBenchmarks 4Kite 30
"""
import re
import struct
import subprocess
import sys

binary = sys.argv[1]
module = sys.argv[2] if len(sys.argv) > 2 else "4Kite"
count = int(sys.argv[3]) if len(sys.argv) > 3 else 30

symbols = []
for line in subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True).stdout.splitlines():
    parts = line.split()
    if len(parts) == 3 and parts[2].endswith("Tu") and module in parts[2]:
        symbols.append((int(parts[0], 16), parts[2]))
sections = []
for line in subprocess.run(["readelf", "-SW", binary], capture_output=True, text=True).stdout.splitlines():
    match = re.match(r"\s*\[\s*\d+\]\s+\S+\s+\S+\s+([0-9a-f]+)\s+([0-9a-f]+)\s+([0-9a-f]+)", line)
    if match and int(match.group(1), 16) > 0:
        sections.append(tuple(int(match.group(i), 16) for i in (1, 2, 3)))
frames = []
with open(binary, "rb") as file:
    for address, name in symbols:
        for start, offset, size in sections:
            if start <= address < start + size:
                file.seek(offset + address - start)
                _, context = struct.unpack("<iI", file.read(8))
                frames.append((context, name))
                break
frames.sort(reverse=True)
frames = frames[:count]
names = subprocess.run(
    ["swift", "demangle", "--simplified", "--compact"],
    input="\n".join(name for _, name in frames), capture_output=True, text=True,
).stdout.splitlines()
for (context, _), name in zip(frames, names):
    print(f"{context:6d}  {name.removeprefix('async function pointer to ')}")
