"""Results of the swarm benchmark: CSV files, the Markdown table and the
gnuplot figures."""

import csv
import os
import statistics
import subprocess

from .cells import GiB, Cell

RUN_FIELDS = ["run_id", "size_bytes", "rate", "n", "variant", "system", "rep", "status",
              "seconds", "limit_seconds", "ratio", "first_receiver_s", "median_receiver_s",
              "others_s", "slow_s", "seed_upload_bytes", "seed_cpu_s", "receivers_cpu_s",
              "cpu_s_per_gib", "machine_cpu_s", "machine_cpu_s_per_gib", "copies", "copies_ok",
              "fault_s", "receivers_s", "note"]
PROGRESS_FIELDS = ["run_id", "size_bytes", "rate", "n", "variant", "system", "rep", "receiver",
                   "t", "fraction"]


def slow_split(cell, res):
    """(slowest of the other receivers, slowest of the slow ones) in seconds."""
    times = res["receivers"]
    slow = cell.slow_receivers
    return (max(t for i, t in enumerate(times, 1) if i not in slow),
            max(times[i - 1] for i in slow))


def cpu_per_gib(cell, res):
    """CPU seconds (user + system, seed and receivers) per GiB delivered."""
    if res["seed_cpu_s"] is None or res["receivers_cpu_s"] is None or res["status"] != "ok":
        return None
    return (res["seed_cpu_s"] + res["receivers_cpu_s"]) / gib_delivered(cell, res)


def gib_delivered(cell, res):
    # A fault cell's killed receiver is no copy delivered (its CPU counts).
    copies = res["copies"] if res.get("copies") is not None else cell.n
    return copies * cell.size / GiB


def machine_cpu_per_gib(cell, res):
    """The whole machine's busy CPU seconds, from launch until the last
    receiver was done, per GiB delivered (the kernel's packet work included,
    and anything else that ran on the machine then)."""
    if res.get("machine_cpu_s") is None or res["status"] != "ok":
        return None
    return res["machine_cpu_s"] / gib_delivered(cell, res)


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

    def add(self, cell, rep, res):
        size, rate, limit = cell.size, cell.rate, cell.limit
        done = sorted(t for t in res["receivers"] if t is not None)
        split = slow_split(cell, res) if cell.slow_receivers and res["seconds"] else None
        cpu = cpu_per_gib(cell, res)
        machine = machine_cpu_per_gib(cell, res)
        row = {
            "run_id": self.run_id, "size_bytes": size, "rate": rate, "n": res["n"],
            "variant": cell.variant, "system": res["system"], "rep": rep,
            "status": res["status"],
            "seconds": f"{res['seconds']:.3f}" if res["seconds"] is not None else "",
            "limit_seconds": f"{limit:.3f}" if limit else "",
            "ratio": f"{res['seconds'] / limit:.3f}" if limit and res["seconds"] else "",
            "first_receiver_s": f"{done[0]:.3f}" if done else "",
            "median_receiver_s": f"{statistics.median(done):.3f}" if done else "",
            "others_s": f"{split[0]:.3f}" if split else "",
            "slow_s": f"{split[1]:.3f}" if split else "",
            "seed_upload_bytes": res["seed_upload_bytes"] if res["seed_upload_bytes"] else "",
            "seed_cpu_s": f"{res['seed_cpu_s']:.2f}" if res["seed_cpu_s"] is not None else "",
            "receivers_cpu_s": (f"{res['receivers_cpu_s']:.2f}"
                                if res["receivers_cpu_s"] is not None else ""),
            "cpu_s_per_gib": f"{cpu:.2f}" if cpu is not None else "",
            "machine_cpu_s": (f"{res['machine_cpu_s']:.2f}"
                              if res.get("machine_cpu_s") is not None else ""),
            "machine_cpu_s_per_gib": f"{machine:.2f}" if machine is not None else "",
            "copies": res["copies"] if res.get("copies") is not None else "",
            "copies_ok": res["copies_ok"] if res.get("copies_ok") is not None else "",
            "fault_s": f"{res['fault_s']:.3f}" if res.get("fault_s") is not None else "",
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
                    w.writerow([self.run_id, size, rate, res["n"], cell.variant, res["system"], rep, i,
                                f"{t:.3f}", f"{frac:.4f}"])

    # --- aggregation ---------------------------------------------------------

    @staticmethod
    def _cell_of(row):
        return Cell(int(row["size_bytes"]), row["rate"], int(row["n"]), row["variant"])

    def cells(self):
        seen = []
        for r in self.rows:
            cell = self._cell_of(r)
            if cell not in seen:
                seen.append(cell)
        return seen

    def systems(self):
        seen = []
        for r in self.rows:
            if r["system"] not in seen:
                seen.append(r["system"])
        return seen

    def _rows(self, cell, system):
        return [r for r in self.rows if self._cell_of(r) == cell and r["system"] == system]

    def median(self, cell, system, field="seconds"):
        """(median of `field` over the ok runs, ok runs, all runs) for one
        cell and system."""
        rows = self._rows(cell, system)
        ok = [float(r[field]) for r in rows if r["status"] == "ok" and r[field] != ""]
        return (statistics.median(ok) if ok else None), len(ok), len(rows)

    def _time_text(self, cell, system):
        med, ok, total = self.median(cell, system)
        if total == 0:
            return ""
        if med is None:
            why = sorted({r["status"] for r in self._rows(cell, system)})
            text = f"{'/'.join(why)} ({total} run{'s' * (total > 1)})"
            return text + self._copies_text(cell, system)
        limit = cell.limit
        if cell.slow_receivers:
            # The goal for this cell: the others as if the slow link were
            # not there, the slow one at its own link's rate.
            others, _, _ = self.median(cell, system, "others_s")
            slow, _, _ = self.median(cell, system, "slow_s")
            slow_ones = "slow one" if len(cell.slow_receivers) == 1 else "slowest slow one"
            text = (f"{others:.2f} ({others / limit:.2f}x); {slow_ones} {slow:.2f} "
                    f"({slow / cell.slow_limit:.2f}x)")
        else:
            text = f"{med:.2f}" + (f" ({med / limit:.2f}x)" if limit else "")
        if ok != total or ok < 3:
            text += f" [{ok}/{total}]" if ok != total else f" [{ok} run{'s' * (ok > 1)}]"
        return text + self._copies_text(cell, system)

    def _copies_text(self, cell, system):
        """Fault cells: correct copies of the counted receivers, all runs."""
        if not cell.fault:
            return ""
        rows = [r for r in self._rows(cell, system) if r["copies"] != ""]
        if not rows:
            return "; no copy checked"
        good = sum(int(r["copies_ok"]) for r in rows)
        total = sum(int(r["copies"]) for r in rows)
        return f"; {good}/{total} copies correct" + (" (all)" if good == total else "")

    def table(self):
        """The time table, then CPU seconds per GiB delivered: the system's
        processes', and the whole machine's."""
        systems = self.systems()
        head = "| cell | N | limit | " + " | ".join(systems) + " |"
        rule = "|---|---|---|" + "---|" * len(systems)
        times = [head, rule]
        cpus = [head.replace("| limit |", "| |", 1), rule]
        machine = list(cpus)
        for cell in self.cells():
            lim = f"{cell.limit:.2f}" if cell.limit else "-"
            times.append(f"| {cell.label()} | {cell.n} | {lim} | " +
                         " | ".join(self._time_text(cell, s) for s in systems) + " |")
            for lines, field in ((cpus, "cpu_s_per_gib"), (machine, "machine_cpu_s_per_gib")):
                meds = [self.median(cell, s, field)[0] for s in systems]
                lines.append(f"| {cell.label()} | {cell.n} | | " +
                             " | ".join("" if m is None else f"{m:.2f}" for m in meds) + " |")
        return ("\n".join(times) + "\n\nCPU seconds (user + system of the seed and every "
                "receiver process, from wait4) per GiB delivered, median:\n\n" +
                "\n".join(cpus) + "\n\nThe whole machine's busy CPU seconds (/proc/stat, "
                "from launch until the last receiver was done: the kernel's packet work in "
                "softirq included) per GiB delivered, median:\n\n" + "\n".join(machine) + "\n")

    def failures(self):
        return [r for r in self.rows if r["status"] != "ok"]

    # --- plots ---------------------------------------------------------------

    def plots(self, prefix="swarm"):
        """Draws the PNGs with gnuplot; returns their file names."""
        made = []
        for rate_kind, title in (("shaped", "shaped links"), ("unshaped", "unshaped links")):
            cells = [c for c in self.cells() if not c.variant and
                     (c.rate == "unshaped") == (rate_kind == "unshaped")]
            if not cells:
                continue
            # The size and rate with the most N values.
            groups = sorted({(c.size, c.rate) for c in cells},
                            key=lambda g: -sum((c.size, c.rate) == g for c in cells))
            cells = sorted((c for c in cells if (c.size, c.rate) == groups[0]), key=lambda c: c.n)
            if len(cells) < 2:
                continue
            name = f"{prefix}-time-vs-peers-{rate_kind}.png"
            self._plot_time(cells, os.path.join(self.out_dir, name),
                            f"{cells[0].size >> 20} MiB to N receivers, {cells[0].rate} ({title})")
            made.append(name)
        for system in self.systems():
            rows = [r for r in self.rows if r["system"] == system and r["status"] == "ok"]
            if not any(self._progress_rows(r) for r in rows):
                continue
            rows = [r for r in rows if not r["variant"]] or rows
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
                    and p["size_bytes"] == str(row["size_bytes"])
                    and p["variant"] == row["variant"]]

    def _plot_time(self, cells, png, title):
        dat = png[:-4] + ".dat"
        systems = self.systems()
        with open(dat, "w") as f:
            f.write("# N limit " + " ".join(systems) + "\n")
            for c in cells:
                limit = c.limit or float("nan")
                vals = []
                for s in systems:
                    med, _, _ = self.median(c, s)
                    vals.append(f"{med:.3f}" if med is not None else "NaN")
                f.write(f"{c.n} {limit:.3f} " + " ".join(vals) + "\n")
        plots = []
        if cells[0].limit:
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
        cell = self._cell_of(row)
        limit = cell.limit
        extra = (f"set arrow from {limit:.3f},0 to {limit:.3f},100 nohead dashtype 2 lc 'black'\n"
                 if limit else "")
        gnuplot(f"""
set terminal pngcairo size 900,560 font ',11'
set output '{png}'
set title "{row['system']}: each receiver's progress, {cell.label()}, N={row['n']} (run {row['rep']}, {float(row['seconds']):.2f} s)"
set xlabel 'seconds since the receivers were started'
set ylabel 'percent of the file verified'
set yrange [0:100]
set grid
set key off
{extra}plot for [i=0:{len(receivers) - 1}] '{dat}' index i using 1:2 with lines lw 1.5
""")
        os.remove(dat)


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True, timeout=60)
