"""Plots a soak CSV (Soak/soak.sh): resident memory, descriptors and threads, and operations per minute.

    python plot.py RESULTS.csv WARMUP OUTPUT-BASENAME

Writes OUTPUT-BASENAME.png with matplotlib when it is installed, else OUTPUT-BASENAME.svg (drawn by hand).
"""
import csv
import sys


def main():
    path, warmup, output = sys.argv[1], int(sys.argv[2]), sys.argv[3]
    with open(path) as f:
        rows = list(csv.DictReader(f))
    minute = [int(r["minute"]) for r in rows]
    rss = [int(r["rss_kib"]) / 1024 for r in rows]
    # The live heap (glibc's mallinfo2), in runs since 2026-11-29.
    heap = [int(r["heap_kib"]) / 1024 for r in rows] if "heap_kib" in rows[0] else None
    fds = [int(r["fds"]) for r in rows]
    threads = [int(r["threads"]) for r in rows]
    operations = [int(r["operations"]) for r in rows]
    per_minute = [0] + [b - a for a, b in zip(operations, operations[1:])]
    warm = minute.index(warmup) if warmup in minute else 0
    title = (f"Kite soak: {minute[-1]} min, after minute {warmup}: RSS {rss[-1] - rss[warm]:+.2f} MiB, "
             f"fds {fds[-1] - fds[warm]:+d}, threads {threads[-1] - threads[warm]:+d}")
    try:
        import matplotlib
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt
    except ImportError:
        svg(output + ".svg", title, minute, warmup,
            [("RSS (MiB)", rss), ("open fds", fds), ("threads", threads), ("operations / min", per_minute)])
        return
    fig, axes = plt.subplots(3, 1, figsize=(10, 9), sharex=True)
    axes[0].plot(minute, rss, marker=".", color="tab:blue", label="resident memory")
    if heap:
        axes[0].plot(minute, heap, marker=".", color="tab:purple", label="live heap (mallinfo2)")
        axes[0].legend(loc="lower right")
    axes[0].set_ylabel("MiB (quiet moment)")
    axes[0].set_ylim(0, max(rss) * 1.15)
    axes[1].plot(minute, fds, marker=".", color="tab:orange", label="open file descriptors")
    axes[1].plot(minute, threads, marker=".", color="tab:green", label="threads")
    axes[1].set_ylim(0, max(max(fds), max(threads)) * 1.3)
    axes[1].legend(loc="lower right")
    axes[1].set_ylabel("count (quiet moment)")
    axes[2].bar(minute, per_minute, color="tab:gray")
    axes[2].set_ylabel("operations per minute")
    axes[2].set_xlabel("minute")
    for ax in axes:
        ax.axvline(warmup, color="red", linestyle="--", linewidth=1)
        ax.grid(True, alpha=0.3)
    axes[0].text(warmup, max(rss) * 1.05, " end of warm-up", color="red")
    fig.suptitle(title)
    fig.tight_layout()
    fig.savefig(output + ".png", dpi=100)


def svg(path, title, xs, warmup, series):
    """A plain SVG: one panel per series."""
    width, panel, left = 900, 160, 70
    parts = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{width}" height="{40 + panel * len(series)}" '
             'font-family="sans-serif" font-size="12">',
             f'<text x="10" y="20" font-size="14">{title}</text>']
    xmax = max(xs) or 1
    for i, (label, ys) in enumerate(series):
        top = 40 + i * panel
        ymax = max(ys) * 1.15 or 1
        X = lambda x: left + (width - left - 20) * x / xmax
        Y = lambda y: top + panel - 30 - (panel - 50) * y / ymax
        points = " ".join(f"{X(x):.1f},{Y(y):.1f}" for x, y in zip(xs, ys))
        parts += [f'<text x="10" y="{top + 15}">{label} (0 to {ymax:.0f})</text>',
                  f'<line x1="{left}" y1="{Y(0)}" x2="{width - 20}" y2="{Y(0)}" stroke="#999"/>',
                  f'<line x1="{X(warmup)}" y1="{top + 20}" x2="{X(warmup)}" y2="{Y(0)}" stroke="red" '
                  'stroke-dasharray="4"/>',
                  f'<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="{points}"/>']
    parts.append("</svg>")
    with open(path, "w") as f:
        f.write("\n".join(parts))


if __name__ == "__main__":
    main()
