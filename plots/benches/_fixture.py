# SPDX-License-Identifier: GPL-2.0
"""What the plot modules' fixture() functions share: the shape of an
invented run (Spec) and a Skylake-like TLB and cache, so that their rows
look like a real run's.  Only tests/plots/make_fixture.py and the plot
tests call them; nothing here is measured."""
from dataclasses import dataclass

KB, MB, GB = 1024, 1024 ** 2, 1024 ** 3
# Skylake-like TLB geometry: entries per level for each page size.
L1 = {4: 64, 2048: 32, 1048576: 4}
STLB = {4: 1536, 2048: 1536, 1048576: 16}


@dataclass
class Spec:
    """An invented run: its backings [(name, page_kb)], working sets and
    how slow its host is (scale 6 under TCG, 1 under KVM)."""
    name: str
    backings: list
    wss: list
    scale: float = 1.0
    walk_ns: float = 25.0
    counters: bool = False
    fault_scale: float = 1.0
    stream_ns_col: bool = False
    hops: tuple = ("line",)
    preset: str = "skylake"


def miss_per_1k(wss, page_kb, entries):
    reach = entries * page_kb * KB
    return 0.0 if wss <= reach else 1000.0 * (1.0 - reach / wss)


def cache_ns(wss, scale):
    # L1 / L2 / LLC / DRAM plateaus of the host, stretched by `scale`.
    if wss <= 32 * KB:
        return 1.2 * scale
    if wss <= 1 * MB:
        return 4.0 * scale
    if wss <= 24 * MB:
        return 14.0 * scale
    return 80.0 * scale


def fmt(x, nd=2):
    return "" if x is None else f"{x:.{nd}f}"
