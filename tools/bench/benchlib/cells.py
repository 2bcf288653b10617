"""One cell of the benchmark matrix: a file size, the link rate, N
receivers, and optionally one link that differs from the others (the
seed's, as on an image server with a faster NIC, or one slow receiver's),
or a fault (a process killed during the run, benchlib/faults.py).

Spec syntax (run-bench --cells):
MiB:RATE:N[,N...][:seed=RATE|:slow=RATE|:slowfirst=RATE|:fault=seed-kill|
:fault=forwarder-kill], cells separated by ';'. `slow` shapes the last
receiver (host N), `slowfirst` the first (host 1, started first, so most
often the first to subscribe: a chain's head, the worst place for a slow
link in a chain)."""

from typing import NamedTuple

from .faults import KINDS as FAULT_KINDS
from .lan import parse_rate

MiB = 1 << 20
GiB = 1 << 30


class Cell(NamedTuple):
    size: int
    rate: str
    n: int
    variant: str = ""  # "", "seed=RATE", "slow=RATE", "slowfirst=RATE" or "fault=KIND"

    @property
    def limit(self):
        """size / link rate in seconds (None when unshaped)."""
        bps = parse_rate(self.rate)
        return self.size * 8 / bps if bps else None

    def _odd_rate(self, kind):
        k, _, v = self.variant.partition("=")
        return parse_rate(v) if k == kind else None

    def _slow_rate(self):
        return self._odd_rate("slow") or self._odd_rate("slowfirst")

    @property
    def slow_receiver(self):
        """The receiver (1..N) on the slow link, or None."""
        if self._odd_rate("slowfirst") is not None:
            return 1
        return self.n if self._odd_rate("slow") is not None else None

    @property
    def slow_limit(self):
        bps = self._slow_rate()
        return self.size * 8 / bps if bps else None

    @property
    def fault(self):
        """The fault kind (benchlib/faults.py), or None."""
        k, _, v = self.variant.partition("=")
        return v if k == "fault" else None

    def host_rates(self):
        """Hosts whose link rate differs: {host index: bits/s} (host 0 is the seed)."""
        if self._odd_rate("seed") is not None:
            return {0: self._odd_rate("seed")}
        if self._slow_rate() is not None:
            return {self.slow_receiver: self._slow_rate()}
        return {}

    def label(self):
        text = f"{self.size >> 20} MiB, {self.rate}"
        k, _, v = self.variant.partition("=")
        if k == "seed":
            text += f", seed {v}"
        elif k == "slow":
            text += f", one receiver {v}"
        elif k == "slowfirst":
            text += f", the first receiver {v}"
        elif k == "fault":
            text += {"seed-kill": ", seed killed after one copy",
                     "forwarder-kill": ", r1 killed mid-way"}.get(v, f", {v}")
        return text

    def tag(self):
        return (f"{self.size >> 20}M-{self.rate}-n{self.n}" +
                (f"-{self.variant.replace('=', '')}" if self.variant else ""))


def kind_of(variant):
    return variant.partition("=")[0]


def parse(spec):
    """'64:100mbit:1,2,4;64:100mbit:8:seed=400mbit' -> [Cell, ...]."""
    cells = []
    for part in spec.split(";"):
        fields = part.split(":")
        if len(fields) not in (3, 4):
            raise ValueError(f"cell {part!r}: want MiB:RATE:N[,N...]"
                             "[:seed=RATE|:slow=RATE|:slowfirst=RATE|:fault=KIND]")
        size, rate, ns = fields[:3]
        variant = fields[3] if len(fields) == 4 else ""
        parse_rate(rate)
        if variant:
            kind, eq, odd = variant.partition("=")
            if kind not in ("seed", "slow", "slowfirst", "fault") or not eq:
                raise ValueError(f"cell {part!r}: the 4th field is seed=RATE, slow=RATE, "
                                 "slowfirst=RATE or "
                                 f"fault={'|'.join(FAULT_KINDS)}")
            if kind == "fault":
                if odd not in FAULT_KINDS:
                    raise ValueError(f"cell {part!r}: fault is one of {', '.join(FAULT_KINDS)}")
            else:
                parse_rate(odd)
        for n in ns.split(","):
            if not 1 <= int(n) <= 199:
                raise ValueError(f"cell {part!r}: N must be 1..199 (the LAN holds 200 hosts)")
            if kind_of(variant) == "fault" and variant.endswith("forwarder-kill") and int(n) < 2:
                raise ValueError(f"cell {part!r}: fault=forwarder-kill needs N >= 2")
            cells.append(Cell(int(size) * MiB, rate, int(n), variant))
    return cells
