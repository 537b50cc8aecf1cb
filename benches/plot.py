#!/usr/bin/env python3
"""Draws benches/perf.svg from the RESULTS files that benches/load.sh and benches/tls.sh append to.

    RESULTS=/tmp/r.tsv benches/load.sh; RESULTS=/tmp/r.tsv PIN=1 benches/load.sh; ...
    benches/plot.py /tmp/r.tsv > benches/perf.svg
    PLOT_PROTOCOLS=http1,https1,h2 benches/plot.py /tmp/r.tsv > benches/perf.svg   # some protocols only

One panel per measure (req/s, CPU per request, p99), one group of bars per protocol and pinning,
one bar per server (direct, shunt, nginx): the bar is the median over runs, the whisker the range
(min to max), because these machines are shared and one run is not a figure. Standard library only.
"""

import os
import statistics
import sys
from collections import defaultdict

SERVERS = ["direct", "shunt", "nginx"]
COLOURS = {"direct": "#9e9e9e", "shunt": "#1f77b4", "nginx": "#2ca02c"}
MEASURES = [(0, "requests/s (higher is better)"), (2, "CPU µs per request (lower is better)"), (1, "p99 ms (lower is better)")]
PROTOCOL_ORDER = ["http1", "https1", "h2", "handshake"]


def load(paths):
    runs = defaultdict(list)  # (protocol, pinned, server) -> [(rps, p99, cpu)]
    for path in paths:
        with open(path, encoding="utf-8") as lines:
            for line in lines:
                fields = line.rstrip("\n").split("\t")
                if len(fields) != 6:
                    continue
                protocol, server, pinned, *values = fields
                try:
                    runs[(protocol, pinned, server)].append(tuple(float(v) for v in values))
                except ValueError:
                    continue
    return runs


def groups_of(runs):
    wanted = [p for p in os.environ.get("PLOT_PROTOCOLS", "").split(",") if p]
    keys = {(protocol, pinned) for protocol, pinned, _ in runs if not wanted or protocol in wanted}
    order = {p: i for i, p in enumerate(PROTOCOL_ORDER)}
    return sorted(keys, key=lambda k: (order.get(k[0], 99), k[0], k[1]))


def panel(runs, groups, measure, title, top):
    width, height, left, bar = 860, 220, 70, 18
    group_width = (width - left - 20) / max(len(groups), 1)
    shown = set(groups)
    values = [v[measure] for (protocol, pinned, _), rs in runs.items() if (protocol, pinned) in shown for v in rs]
    peak = max(values) if values else 1
    scale = (height - 60) / peak if peak else 1
    out = [f'<text x="{left}" y="{top + 16}" font-size="14" font-weight="bold">{title}</text>']
    base = top + height - 30
    out.append(f'<line x1="{left}" y1="{base}" x2="{width - 10}" y2="{base}" stroke="#333"/>')
    for tick in range(5):
        value = peak * tick / 4
        y = base - value * scale
        out.append(f'<line x1="{left - 4}" y1="{y:.1f}" x2="{width - 10}" y2="{y:.1f}" stroke="#eee"/>')
        label = f"{value:,.0f}" if peak >= 100 else f"{value:.1f}"
        out.append(f'<text x="{left - 8}" y="{y + 4:.1f}" font-size="10" text-anchor="end">{label}</text>')
    for index, (protocol, pinned) in enumerate(groups):
        x0 = left + index * group_width + (group_width - bar * len(SERVERS)) / 2
        for offset, server in enumerate(SERVERS):
            samples = [v[measure] for v in runs.get((protocol, pinned, server), [])]
            if not samples:
                continue
            x = x0 + offset * bar
            mid, low, high = statistics.median(samples), min(samples), max(samples)
            y = base - mid * scale
            out.append(
                f'<rect x="{x:.1f}" y="{y:.1f}" width="{bar - 3}" height="{mid * scale:.1f}" '
                f'fill="{COLOURS[server]}"><title>{server} {protocol} pin={pinned}: median {mid:,.1f}, '
                f"range {low:,.1f}–{high:,.1f} over {len(samples)} runs</title></rect>"
            )
            cx = x + (bar - 3) / 2
            out.append(
                f'<line x1="{cx:.1f}" y1="{base - low * scale:.1f}" x2="{cx:.1f}" y2="{base - high * scale:.1f}" '
                f'stroke="#000" stroke-width="1.5"/>'
            )
        label = f"{protocol} {'pinned' if pinned == '1' else 'unpinned'}"
        out.append(
            f'<text x="{left + (index + 0.5) * group_width:.1f}" y="{base + 16}" font-size="11" '
            f'text-anchor="middle">{label}</text>'
        )
    return out, height


def main(paths):
    runs = load(paths)
    if not runs:
        sys.exit("no results: run benches/load.sh or benches/tls.sh with RESULTS=FILE first")
    groups = groups_of(runs)
    parts, top = [], 40
    for measure, title in MEASURES:
        drawn, height = panel(runs, groups, measure, title, top)
        parts += drawn
        top += height + 10
    legend = [
        f'<rect x="{70 + i * 110}" y="12" width="12" height="12" fill="{COLOURS[s]}"/>'
        f'<text x="{86 + i * 110}" y="22" font-size="12">{s}</text>'
        for i, s in enumerate(SERVERS)
    ]
    legend.append('<text x="420" y="22" font-size="11">bar: median over runs; whisker: min to max</text>')
    print(
        f'<svg xmlns="http://www.w3.org/2000/svg" width="880" height="{top + 10}" '
        f'font-family="sans-serif"><rect width="100%" height="100%" fill="#fff"/>'
    )
    print("\n".join(legend + parts))
    print("</svg>")


if __name__ == "__main__":
    main(sys.argv[1:])
