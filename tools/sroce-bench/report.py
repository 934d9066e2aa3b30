#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0 OR BSD-2-Clause
"""`make bench` report: medians of the guest's raw samples as a table on
stdout, a JSON file and the input of bench_plot (PNG).

  report.py --kver K --out DIR [--plot BIN] TABLE=bench-x.tsv...

Each TSV line is "driver metric param run value" (tools/testing/guest/
bench.sh).  Figures are median, min and max over the runs; the ratio
column is sroce over rdma_rxe (for latency, CPU and memory lower is
better, for the rest higher).  No targets are judged here: the numbers of
an emulated guest only mean something as ratios within one boot.
"""
import argparse
import json
import math
import os
import statistics
import subprocess
import sys

LOWER_BETTER = ("_lat_us", "cpu_s_per_gib", "kmem_kib_per_qp", "post_us")
ORDER = ["write_bw_gbps", "send_bw_gbps", "read_bw_gbps", "msgrate_64b_mpps",
         "post_us", "post_cap_mpps",
         "write_lat_us", "send_lat_us", "read_lat_us", "cpu_s_per_gib",
         "agg_bw_gbps", "tcp_gbps", "link_udp_gbps", "kmem_kib_per_qp"]
LABEL = {
    "write_bw_gbps": "ib_write_bw Gb/s", "send_bw_gbps": "ib_send_bw Gb/s",
    "read_bw_gbps": "ib_read_bw Gb/s", "msgrate_64b_mpps": "msg rate 64 B Mpps, QPs",
    "post_us": "empty post (doorbell) us", "post_cap_mpps": "1 poster's cap Mpps",
    "write_lat_us": "ib_write_lat 8 B us", "send_lat_us": "ib_send_lat 8 B us",
    "read_lat_us": "ib_read_lat 8 B us", "cpu_s_per_gib": "CPU s per GiB written",
    "agg_bw_gbps": "64 KiB write Gb/s, QPs", "tcp_gbps": "iperf3 TCP Gb/s",
    "link_udp_gbps": "link ceiling Gb/s",
    "kmem_kib_per_qp": "memory KiB per QP, QPs",
}


def size_name(p):
    try:
        n = int(p)
    except ValueError:
        return p
    for unit, div in (("MiB", 1 << 20), ("KiB", 1 << 10)):
        if n >= div and n % div == 0:
            return "%d %s" % (n // div, unit)
    return str(n)


def load(path):
    data = {}
    with open(path) as f:
        for line in f:
            parts = line.split()
            if len(parts) != 5:
                continue
            drv, metric, param, _run, value = parts
            try:
                v = float(value)
            except ValueError:
                continue
            if math.isfinite(v) and v > 0:
                data.setdefault((metric, param), {}).setdefault(drv, []).append(v)
    return data


def summarize(data):
    rows = []
    def key(k):
        m, p = k
        return (ORDER.index(m) if m in ORDER else 99,
                int(p) if p.isdigit() else 0, p)
    for metric, param in sorted(data, key=key):
        row = {"metric": metric, "param": param}
        for drv, vals in data[(metric, param)].items():
            row[drv] = {"median": statistics.median(vals), "min": min(vals),
                        "max": max(vals), "n": len(vals)}
        if "rxe" in row and "sroce" in row and row["rxe"]["median"] > 0:
            row["ratio"] = row["sroce"]["median"] / row["rxe"]["median"]
        rows.append(row)
    return rows


def fmt(cell):
    if not cell:
        return "-"
    m = cell["median"]
    p = 3 if m < 10 else 1
    s = "%.*f" % (p, m)
    if cell["n"] > 1:
        s += " [%.*f..%.*f]" % (p, cell["min"], p, cell["max"])
    return s


def print_table(name, rows, tcp):
    print("\n%s" % name)
    print("  %-30s %-24s %-24s %8s %8s" % ("metric", "rdma_rxe", "sroce",
                                           "sroce/rxe", "vs TCP"))
    for r in rows:
        label = "%s %s" % (LABEL.get(r["metric"], r["metric"]),
                           size_name(r["param"]) if r["param"] not in ("1",) or
                           r["metric"] not in ("tcp_gbps",) else "")
        if r["metric"] in ("write_lat_us", "send_lat_us", "read_lat_us"):
            label = "%s %s" % (LABEL[r["metric"]], r["param"])
        if r["metric"] in ("post_us", "post_cap_mpps"):
            label = LABEL[r["metric"]]
        ratio = "%.2fx" % r["ratio"] if "ratio" in r else "-"
        vs_tcp = "-"
        if r["metric"].endswith("_bw_gbps") and r["metric"] != "agg_bw_gbps" \
                and tcp and "sroce" in r:
            vs_tcp = "%.2fx" % (r["sroce"]["median"] / tcp)
        if r["metric"] == "tcp_gbps" and "tcp" in r:
            print("  %-30s %-24s" % (label.strip(), fmt(r["tcp"])))
            continue
        if r["metric"] == "link_udp_gbps" and "link" in r:
            # No driver: the link with nothing but the kernel's own
            # packet generator on it (bench_pair.sh link_ceiling()).
            print("  %-30s %-24s" % (label.strip(), fmt(r["link"])))
            continue
        print("  %-30s %-24s %-24s %8s %8s" % (label.strip(), fmt(r.get("rxe")),
                                               fmt(r.get("sroce")), ratio, vs_tcp))


def tcp_cell(r):
    return r.get("tcp") or r.get("sroce") or r.get("rxe")


def plot_input(kver, tables):
    # One figure per table.
    tname = tables[0][0]
    lines = ["title %s: sroce vs rdma_rxe vs TCP, %s (qemu TCG: ratios only)"
             % (tname.split(" (")[0], kver)]
    for tname, rows in tables:
        bw = [r for r in rows if r["metric"] in
              ("write_bw_gbps", "send_bw_gbps", "read_bw_gbps")]
        if not bw:
            continue
        series = []
        for drv in ("sroce", "rxe"):
            for op in ("write", "send", "read"):
                series.append((drv, op))
        for i, (drv, op) in enumerate(series):
            lines.append("series %s-%s" % (drv, op))
        tcp = [r for r in rows if r["metric"] == "tcp_gbps"]
        tcp_v = tcp_cell(tcp[0]) if tcp else None
        if tcp_v:
            lines.append("series TCP")
        # Table B: what the link carries with no transport on it, drawn
        # across the sizes as TCP is.
        link = [r for r in rows if r["metric"] == "link_udp_gbps" and
                "link" in r]
        link_v = link[0]["link"] if link else None
        if link_v:
            lines.append("series link-ceiling")
        for i, (drv, op) in enumerate(series):
            for r in bw:
                if r["metric"] == op + "_bw_gbps" and drv in r:
                    x = math.log2(int(r["param"]) / 1024)
                    lines.append("point %d %g %g" % (i, x, r[drv]["median"]))
        extra = [v for v in (tcp_v, link_v) if v]
        for i, v in enumerate(extra):
            for x in (2, 6, 10):
                lines.append("point %d %g %g" % (len(series) + i, x,
                                                 v["median"]))
        for r in rows:
            if r["metric"].endswith("_lat_us") and r["param"] == "typ" and \
                    "rxe" in r and "sroce" in r:
                lines.append("bar %s %g %g" % (r["metric"].split("_")[0],
                                               r["rxe"]["median"],
                                               r["sroce"]["median"]))
        break
    return "\n".join(lines) + "\n"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--kver", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--plot")
    ap.add_argument("tables", nargs="+")
    a = ap.parse_args()
    tables, doc = [], {"kernel": a.kver, "tables": {}}
    for spec in a.tables:
        name, path = spec.split("=", 1)
        if not os.path.exists(path):
            print("%s: no samples (%s missing)" % (name, path))
            continue
        rows = summarize(load(path))
        tables.append((name, rows))
        doc["tables"][name] = rows
        tcp = [r for r in rows if r["metric"] == "tcp_gbps"]
        tcp_v = None
        if tcp:
            c = tcp_cell(tcp[0])
            tcp_v = c["median"] if c else None
        print_table("%s, kernel %s" % (name, a.kver), rows, tcp_v)
    os.makedirs(a.out, exist_ok=True)
    jpath = os.path.join(a.out, "bench-%s.json" % a.kver)
    with open(jpath, "w") as f:
        json.dump(doc, f, indent=1, sort_keys=True)
    print("\nJSON: %s" % jpath)
    for i, t in enumerate(tables if a.plot else []):
        w = t[0].split()
        tag = w[1] if len(w) > 1 and w[0] == "table" else str(i)
        png = os.path.join(a.out, "bench-%s-%s.png" % (a.kver, tag))
        p = subprocess.run([a.plot, png], input=plot_input(a.kver, [t]),
                           text=True)
        if p.returncode == 0:
            print("plot: %s" % png)
        else:
            return 1
    return 0 if tables else 1


if __name__ == "__main__":
    sys.exit(main())
