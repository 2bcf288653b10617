"""One cell of the benchmark matrix: a file size, the link rate, N
receivers, and optionally links that differ from the others (the seed's,
as on an image server with a faster NIC, or one slow receiver's) and a
fault (a process killed during the run, benchlib/faults.py).

Spec syntax (run-bench --cells):
MiB:RATE:N[,N...][:seed=RATE][:slow=RATE[:slows=K]|:slowfirst=RATE]
[:fault=seed-kill|:fault=forwarder-kill][:burst=BYTES], cells separated by
';'; each kind at most once. `burst` gives this cell's links another tbf
bucket than run-bench --tbf-burst (a small one: links that serialize what
they send, as a real one does, benchlib/lan.py Lan._cap_gso).
`slow` shapes the last receiver (host N), `slowfirst` the first (host 1,
started first, so most often the first to subscribe: a chain's head, the
worst place for a slow link in a chain). `slows=K` makes K receivers
slow, spread through the start order (host N, N - N/K, N - 2N/K, ...): a
chain then finds slow links in the middle of its line, not only at its
end. A fault with a slow receiver fires before every receiver is done
whatever the system: receivers that finish together (a seed pushing to
all at once) miss the seed-kill fault otherwise."""

from typing import NamedTuple

from .faults import KINDS as FAULT_KINDS
from .lan import MAX_TBF_BURST, MIN_TBF_BURST, parse_rate

MiB = 1 << 20
GiB = 1 << 30


KINDS = ("seed", "slow", "slowfirst", "fault", "burst", "slows")


class Cell(NamedTuple):
    size: int
    rate: str
    n: int
    # "" or KIND=VALUE fields joined by ':' ("seed=400mbit",
    # "fault=seed-kill:slow=50mbit")
    variant: str = ""

    def _value(self, kind):
        for part in self.variant.split(":"):
            k, _, v = part.partition("=")
            if k == kind:
                return v
        return None

    @property
    def limit(self):
        """size / link rate in seconds (None when unshaped)."""
        bps = parse_rate(self.rate)
        return self.size * 8 / bps if bps else None

    def _odd_rate(self, kind):
        v = self._value(kind)
        return parse_rate(v) if v else None

    def _slow_rate(self):
        return self._odd_rate("slow") or self._odd_rate("slowfirst")

    @property
    def slow_receivers(self):
        """The receivers (1..N) on a slow link, last first; empty when none."""
        if self._odd_rate("slowfirst") is not None:
            return [1]
        if self._odd_rate("slow") is None:
            return []
        k = int(self._value("slows") or 1)
        return [self.n - j * (self.n // k) for j in range(k)]

    @property
    def slow_limit(self):
        bps = self._slow_rate()
        return self.size * 8 / bps if bps else None

    @property
    def fault(self):
        """The fault kind (benchlib/faults.py), or None."""
        return self._value("fault")

    @property
    def tbf_burst(self):
        """This cell's tbf bucket in bytes, or None (run-bench --tbf-burst)."""
        v = self._value("burst")
        return int(v) if v else None

    def host_rates(self):
        """Hosts whose link rate differs: {host index: bits/s} (host 0 is the seed)."""
        rates = {}
        if self._odd_rate("seed") is not None:
            rates[0] = self._odd_rate("seed")
        for host in self.slow_receivers:
            rates[host] = self._slow_rate()
        return rates

    def label(self):
        text = f"{self.size >> 20} MiB, {self.rate}"
        seed, slow, first, fault, burst, _ = (self._value(k) for k in KINDS)
        if seed:
            text += f", seed {seed}"
        if slow and len(self.slow_receivers) > 1:
            text += f", {len(self.slow_receivers)} receivers {slow}"
        elif slow:
            text += f", one receiver {slow}"
        if first:
            text += f", the first receiver {first}"
        if fault:
            text += {"seed-kill": ", seed killed after one copy",
                     "forwarder-kill": ", r1 killed mid-way"}.get(fault, f", {fault}")
        if burst:
            text += f", {int(burst) >> 10} KiB bucket"
        return text

    def tag(self):
        return (f"{self.size >> 20}M-{self.rate}-n{self.n}" +
                (f"-{self.variant.replace('=', '').replace(':', '-')}" if self.variant else ""))


def parse(spec):
    """'64:100mbit:1,2,4;64:100mbit:8:seed=400mbit' -> [Cell, ...]."""
    want = ("want MiB:RATE:N[,N...][:seed=RATE][:slow=RATE[:slows=K]|:slowfirst=RATE]"
            f"[:fault={'|'.join(FAULT_KINDS)}][:burst=BYTES]")
    cells = []
    for part in spec.split(";"):
        fields = part.split(":")
        if len(fields) < 3:
            raise ValueError(f"cell {part!r}: {want}")
        size, rate, ns = fields[:3]
        parse_rate(rate)
        kinds = []
        for variant in fields[3:]:
            kind, eq, odd = variant.partition("=")
            if kind not in KINDS or not eq:
                raise ValueError(f"cell {part!r}: {variant!r} is not one of: {want}")
            # slow, slowfirst: one link (slows only counts slow's)
            family = "slow" if kind in ("slow", "slowfirst") else kind
            if family in ("slow" if k in ("slow", "slowfirst") else k for k in kinds):
                raise ValueError(f"cell {part!r}: one {family} field at most")
            kinds.append(kind)
            if kind == "fault":
                if odd not in FAULT_KINDS:
                    raise ValueError(f"cell {part!r}: fault is one of {', '.join(FAULT_KINDS)}")
            elif kind == "slows":
                if not odd.isdigit() or int(odd) < 1:
                    raise ValueError(f"cell {part!r}: slows is a count of receivers, 1 or more")
            elif kind == "burst":
                if not odd.isdigit() or not MIN_TBF_BURST <= int(odd) <= MAX_TBF_BURST:
                    raise ValueError(f"cell {part!r}: burst is {MIN_TBF_BURST}.."
                                     f"{MAX_TBF_BURST} bytes")
                if parse_rate(rate) == 0:
                    raise ValueError(f"cell {part!r}: burst needs a shaped rate")
            else:
                parse_rate(odd)
        if "slows" in kinds and "slow" not in kinds:
            raise ValueError(f"cell {part!r}: slows needs slow=RATE")
        cell = Cell(int(size) * MiB, rate, 1, ":".join(fields[3:]))
        for n in ns.split(","):
            if not 1 <= int(n) <= 199:
                raise ValueError(f"cell {part!r}: N must be 1..199 (the LAN holds 200 hosts)")
            if cell.fault == "forwarder-kill" and int(n) < 2:
                raise ValueError(f"cell {part!r}: fault=forwarder-kill needs N >= 2")
            if len(cell._replace(n=int(n)).slow_receivers) >= int(n):
                raise ValueError(f"cell {part!r}: slows must leave at least one receiver fast")
            cells.append(cell._replace(n=int(n)))
    return cells
