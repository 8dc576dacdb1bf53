# SPDX-License-Identifier: GPL-2.0
"""The hugetlb pools: how many pages a run needs of each size, raising
the host's for a native run and restoring them (HugePools, under the
host-state lock, bench/hostlock.py), and fitting a working set to a pool
that could not be raised far enough."""

import os

from .base import KB_1G, KB_2M, MB, SavedHostState, size_bytes
from .plan import backings_of


class HugePools(SavedHostState):
    """Raises the host's hugetlb pools for a run; restore() puts back what
    was there (call it from finally; it is idempotent).  The first raise
    takes the host-state lock (bench/hostlock.py), the restore gives it
    back."""

    SYS = "/sys/kernel/mm/hugepages/hugepages-%dkB/nr_hugepages"

    def __init__(self, sysfmt=None):
        super().__init__()
        self.sysfmt = sysfmt or self.SYS

    def _read(self, kb):
        with open(self.sysfmt % kb) as f:
            return int(f.read())

    def read(self, kb, name="nr_hugepages"):
        """A pool file (nr_hugepages, free_hugepages); 0 if unreadable."""
        path = os.path.join(os.path.dirname(self.sysfmt % kb), name)
        try:
            with open(path) as f:
                return int(f.read())
        except (OSError, ValueError):
            return 0

    def _write(self, kb, n):
        with open(self.sysfmt % kb, "w") as f:
            f.write("%d\n" % n)

    def raise_to(self, kb, n):
        """Returns the pool size obtained (the kernel may give fewer)."""
        self.hold()     # the pool as it is while no other run changes it
        try:
            cur = self._read(kb)
        except OSError:
            return 0
        if cur >= n:
            return cur


        self.saved.setdefault(kb, cur)
        try:
            self._write(kb, n)
        except OSError as e:
            print("bench: cannot set %d kB pool to %d: %s" % (kb, n, e))
        return self._read(kb)

    def _what(self, kb, n):
        return "%d kB pool (want %d)" % (kb, n)


def needs_pools(backings, c):
    """False when a backing list names no hugetlb backing."""
    return any(c.needs_pool(b) for b in backings)


def wants_1g(backings, c):
    return any(c.needs_pool(b) == KB_1G for b in backings)


def together(runs, c):
    """{pool_kb: the most backings drawing on that pool that one binary
    maps at once}."""
    most = {}
    for bench, argv in runs:
        if bench not in c.bench_names():    # not a runner benchmark
            continue
        n = {}
        for b in backings_of(argv):
            kb = c.needs_pool(b)
            if kb:
                n[kb] = n.get(kb, 0) + 1
        for kb, k in n.items():
            most[kb] = max(most.get(kb, 0), k)
    return most


def raise_pools(res, pools, p):
    """Raises the host's pools for a native run; 1 GB pages it cannot get
    in full are given back (the 1G backings then skip, saying why)."""
    got = pools.raise_to(KB_2M, p["hugepages"])
    if got < p["hugepages"]:
        print("bench: only %d of %d 2 MB pages" % (got, p["hugepages"]))
    if not p["hugepages_1g"]:
        return
    got1 = pools.raise_to(KB_1G, p["hugepages_1g"])
    if got1 < p["hugepages_1g"]:
        res.meta.setdefault("notes", []).append(
            "could get only %d of %d 1 GB pages; 1G backings skipped"
            % (got1, p["hugepages_1g"]))
        print("bench: could get only %d of %d 1 GB pages; giving them back"
              % (got1, p["hugepages_1g"]))
        if KB_1G in pools.saved:
            pools._write(KB_1G, pools.saved.pop(KB_1G))


def fit_pool(res, bench, cmd, free_2m, arrays=1):
    """cmd, with bench's working set (arrays equal arrays of whole 4 KB
    pages) cut to what free_2m free 2 MB pages hold when the pool could
    not be raised far enough for it (streamk's rows and @meta streamk_llc
    then say STREAM's 4x rule was not met; a note says why)."""
    if "--sizes" not in cmd:
        return cmd
    i = cmd.index("--sizes") + 1
    want = max(size_bytes(x) for x in cmd[i].split(","))
    unit = arrays * 4096
    room = free_2m * 2 * MB // unit * unit
    if want <= room:
        return cmd
    note = ("%s: the 2 MB pool had %d free pages, so it ran %d B of "
            "arrays instead of %d B" % (bench, free_2m, room, want))
    res.meta.setdefault("notes", []).append(note)
    print("bench: " + note)
    return cmd[:i] + [str(room)] + cmd[i + 1:]
