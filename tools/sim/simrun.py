"""Shared by tools/sim/calibrate and tools/sim/predict: run swarmcast-sim,
and replace a generated block in docs/benchmarks.md."""

import json
import os
import subprocess
from concurrent.futures import ThreadPoolExecutor

REPO = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))


def sim_path(build):
    return os.path.join(os.path.abspath(build), "tools", "sim", "swarmcast-sim")


def run(exe, args):
    """One simulation; its --json object."""
    out = subprocess.run([exe, "--json", *args], stdout=subprocess.PIPE, check=True, text=True)
    return json.loads(out.stdout)


def run_all(exe, arg_lists, jobs):
    with ThreadPoolExecutor(max_workers=jobs) as pool:
        return list(pool.map(lambda a: run(exe, a), arg_lists))


def replace_block(doc_path, begin, end, block, before_heading):
    """Puts `block` between the markers, or, the first time, before the
    heading `before_heading` (or at the end)."""
    text = open(doc_path).read()
    body = f"{begin}\n\n{block.rstrip()}\n\n{end}"
    if begin in text and end in text:
        head, rest = text.split(begin, 1)
        _, tail = rest.split(end, 1)
        text = head + body + tail
    elif before_heading and before_heading in text:
        head, tail = text.split(before_heading, 1)
        text = head + body + "\n\n" + before_heading + tail
    else:
        text = text.rstrip() + "\n\n" + body + "\n"
    with open(doc_path, "w") as f:
        f.write(text)


def gnuplot(script):
    subprocess.run(["gnuplot"], input=script, text=True, check=True)
