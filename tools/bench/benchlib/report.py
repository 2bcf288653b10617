"""Results of the swarm benchmark: CSV files, the Markdown table and the
gnuplot figures."""

import csv
import os
import statistics
import subprocess

RUN_FIELDS = ["run_id", "size_bytes", "rate", "n", "system", "rep", "status", "seconds",
              "limit_seconds", "ratio", "first_receiver_s", "median_receiver_s",
              "seed_upload_bytes", "seed_cpu_s", "receivers_cpu_s", "receivers_s", "note"]
PROGRESS_FIELDS = ["run_id", "size_bytes", "rate", "n", "system", "rep", "receiver", "t",
                   "fraction"]


def cell_label(size, rate):
    return f"{size >> 20} MiB, {rate if rate != 'unshaped' else 'unshaped'}"


class Results:
    def __init__(self, out_dir, run_id):
        self.out_dir = out_dir
        self.run_id = run_id
        self.rows = []
        os.makedirs(out_dir, exist_ok=True)
        self.runs_csv = os.path.join(out_dir, "runs.csv")
        self.progress_csv = os.path.join(out_dir, "progress.csv")
        for path, fields in ((self.runs_csv, RUN_FIELDS), (self.progress_csv, PROGRESS_FIELDS)):
            with open(path, "w", newline="") as f:
                csv.writer(f).writerow(fields)

    def add(self, size, rate, limit, rep, res):
        done = sorted(t for t in res["receivers"] if t is not None)
        row = {
            "run_id": self.run_id, "size_bytes": size, "rate": rate, "n": res["n"],
            "system": res["system"], "rep": rep, "status": res["status"],
            "seconds": f"{res['seconds']:.3f}" if res["seconds"] is not None else "",
            "limit_seconds": f"{limit:.3f}" if limit else "",
            "ratio": f"{res['seconds'] / limit:.3f}" if limit and res["seconds"] else "",
            "first_receiver_s": f"{done[0]:.3f}" if done else "",
            "median_receiver_s": f"{statistics.median(done):.3f}" if done else "",
            "seed_upload_bytes": res["seed_upload_bytes"] if res["seed_upload_bytes"] else "",
            "seed_cpu_s": f"{res['seed_cpu_s']:.2f}" if res["seed_cpu_s"] is not None else "",
            "receivers_cpu_s": (f"{res['receivers_cpu_s']:.2f}"
                                if res["receivers_cpu_s"] is not None else ""),
            "receivers_s": ";".join("" if t is None else f"{t:.3f}" for t in res["receivers"]),
            "note": res["note"],
        }
        self.rows.append(row)
        with open(self.runs_csv, "a", newline="") as f:
            csv.DictWriter(f, RUN_FIELDS).writerow(row)
        with open(self.progress_csv, "a", newline="") as f:
            w = csv.writer(f)
            for i, points in sorted(res["progress"].items()):
                for t, frac in points:
                    w.writerow([self.run_id, size, rate, res["n"], res["system"], rep, i,
                                f"{t:.3f}", f"{frac:.4f}"])

    # --- aggregation ---------------------------------------------------------

    def cells(self):
        seen = []
        for r in self.rows:
            key = (r["size_bytes"], r["rate"], r["n"])
            if key not in seen:
                seen.append(key)
        return seen

    def systems(self):
        seen = []
        for r in self.rows:
            if r["system"] not in seen:
                seen.append(r["system"])
        return seen

    def median(self, cell, system):
        """(median seconds, ok runs, all runs) for one cell and system."""
        rows = [r for r in self.rows
                if (r["size_bytes"], r["rate"], r["n"]) == cell and r["system"] == system]
        ok = [float(r["seconds"]) for r in rows if r["status"] == "ok"]
        return (statistics.median(ok) if ok else None), len(ok), len(rows)

    def table(self):
        systems = self.systems()
        lines = ["| file, rate | N | limit | " + " | ".join(systems) + " |",
                 "|---|---|---|" + "---|" * len(systems)]
        for cell in self.cells():
            size, rate, n = cell
            limit = size * 8 / rate_bps(rate) if rate_bps(rate) else None
            cols = []
            for s in systems:
                med, ok, total = self.median(cell, s)
                if total == 0:
                    cols.append("")
                    continue
                if med is None:
                    why = sorted({r["status"] for r in self.rows if r["system"] == s and
                                  (r["size_bytes"], r["rate"], r["n"]) == cell})
                    cols.append(f"{'/'.join(why)} ({total} run{'s' * (total > 1)})")
                    continue
                text = f"{med:.2f}"
                if limit:
                    text += f" ({med / limit:.2f}x)"
                if ok != total or ok < 3:
                    text += f" [{ok}/{total}]" if ok != total else f" [{ok} run{'s' * (ok > 1)}]"
                cols.append(text)
            lim = f"{limit:.2f}" if limit else "-"
            lines.append(f"| {cell_label(size, rate)} | {n} | {lim} | " + " | ".join(cols) + " |")
        return "\n".join(lines) + "\n"

    def cpu_table(self):
        """Median CPU seconds (seed + receivers, user + system, whole life)
        per GiB delivered (file size x N), per cell and system, ok runs only."""
        systems = self.systems()
        lines = ["| file, rate | N | " + " | ".join(systems) + " |",
                 "|---|---|" + "---|" * len(systems)]
        for cell in self.cells():
            size, rate, n = cell
            cols = []
            for s in systems:
                per = []
                for r in self.rows:
                    if ((r["size_bytes"], r["rate"], r["n"]) != cell or r["system"] != s or
                            r["status"] != "ok" or r["seed_cpu_s"] == "" or
                            r["receivers_cpu_s"] == ""):
                        continue
                    cpu = float(r["seed_cpu_s"]) + float(r["receivers_cpu_s"])
                    per.append(cpu / (size * n / (1 << 30)))
                cols.append(f"{statistics.median(per):.1f}" if per else "")
            lines.append(f"| {cell_label(size, rate)} | {n} | " + " | ".join(cols) + " |")
        return "\n".join(lines) + "\n"

    def failures(self):
        return [r for r in self.rows if r["status"] != "ok"]

    # --- plots ---------------------------------------------------------------

    def plots(self, prefix="swarm"):
        """Draws the PNGs with gnuplot; returns their file names."""
        made = []
        for rate_kind, title in (("shaped", "shaped links"), ("unshaped", "unshaped links")):
            cells = [c for c in self.cells() if (c[1] == "unshaped") == (rate_kind == "unshaped")]
            sizes = sorted({c[0] for c in cells}, key=lambda s: -sum(c[0] == s for c in cells))
            if not cells:
                continue
            size = sizes[0]  # the size with the most N values
            cells = sorted((c for c in cells if c[0] == size), key=lambda c: c[2])
            if len(cells) < 2:
                continue
            name = f"{prefix}-time-vs-peers-{rate_kind}.png"
            self._plot_time(cells, os.path.join(self.out_dir, name),
                            f"{size >> 20} MiB to N receivers, {cells[0][1]} ({title})")
            made.append(name)
        for system in self.systems():
            rows = [r for r in self.rows if r["system"] == system and r["status"] == "ok"]
            if not any(self._progress_rows(r) for r in rows):
                continue
            shaped = [r for r in rows if r["rate"] != "unshaped"] or rows
            best = max(shaped, key=lambda r: (int(r["n"]) * (1 if int(r["size_bytes"]) <= 64 << 20
                                                              else 0.5), -int(r["rep"])))
            name = f"{prefix}-progress-{system}.png"
            self._plot_progress(best, os.path.join(self.out_dir, name))
            made.append(name)
        return made

    def _progress_rows(self, row):
        with open(self.progress_csv) as f:
            return [p for p in csv.DictReader(f)
                    if p["system"] == row["system"] and p["n"] == str(row["n"])
                    and p["rep"] == str(row["rep"]) and p["rate"] == row["rate"]
                    and p["size_bytes"] == str(row["size_bytes"])]

    def _plot_time(self, cells, png, title):
        dat = png[:-4] + ".dat"
        systems = self.systems()
        with open(dat, "w") as f:
            f.write("# N limit " + " ".join(systems) + "\n")
            for c in cells:
                limit = c[0] * 8 / rate_bps(c[1]) if rate_bps(c[1]) else float("nan")
                vals = []
                for s in systems:
                    med, _, _ = self.median(c, s)
                    vals.append(f"{med:.3f}" if med is not None else "NaN")
                f.write(f"{c[2]} {limit:.3f} " + " ".join(vals) + "\n")
        plots = []
        if rate_bps(cells[0][1]):
            plots.append(f"'{dat}' using 1:2 with lines dashtype 2 lw 2 lc 'black' "
                         "title 'limit (size/rate)'")
        for k, s in enumerate(systems):
            plots.append(f"'{dat}' using 1:{k + 3} with linespoints lw 2 pt {k + 5} title '{s}'")
        gnuplot(f"""
set terminal pngcairo size 900,560 font ',11'
set output '{png}'
set title '{title}'
set xlabel 'receivers (N)'
set ylabel 'seconds until every receiver holds the file (median)'
set logscale xy 2
set xtics (1,2,4,8,16,32,64)
set grid
set key top left
plot {', '.join(plots)}
""")
        os.remove(dat)

    def _plot_progress(self, row, png):
        points = self._progress_rows(row)
        dat = png[:-4] + ".dat"
        receivers = sorted({int(p["receiver"]) for p in points})
        with open(dat, "w") as f:
            for i in receivers:
                f.write(f"# receiver {i}\n")
                for p in points:
                    if int(p["receiver"]) == i:
                        f.write(f"{p['t']} {float(p['fraction']) * 100:.2f}\n")
                f.write("\n\n")
        size, rate = int(row["size_bytes"]), row["rate"]
        limit = size * 8 / rate_bps(rate) if rate_bps(rate) else None
        extra = (f"set arrow from {limit:.3f},0 to {limit:.3f},100 nohead dashtype 2 lc 'black'\n"
                 if limit else "")
        gnuplot(f"""
set terminal pngcairo size 900,560 font ',11'
set output '{png}'
set title "{row['system']}: each receiver's progress, {cell_label(size, rate)}, N={row['n']} (run {row['rep']}, {float(row['seconds']):.2f} s)"
set xlabel 'seconds since the receivers were started'
set ylabel 'percent of the file verified'
set yrange [0:100]
set grid
set key off
{extra}plot for [i=0:{len(receivers) - 1}] '{dat}' index i using 1:2 with lines lw 1.5
""")
        os.remove(dat)


def rate_bps(rate):
    from .lan import parse_rate
    return parse_rate(rate)


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True, timeout=60)
