# SPDX-License-Identifier: GPL-2.0
"""Whether the hardware held a run's huge pages as huge TLB entries.

A huge page the guest or host kernel maps is one TLB entry only where
every layer below maps it as large: in a KVM guest the hardware caches
the smaller of the guest's and the host's page (QEMU's RAM on the host,
meta.json host_memory.kernel_page_kb); on a VM host the hypervisor's own
backing is unknown unless tlbreach measured it (its 4 KB-stride curve on
a huge backing knees where 4 KB pages do: "held as 4 KB entries").  Every
TLB claim about a page size split so (the model's walks, latency, the
knees' bytes) is flagged or withheld beside it, saying why (issue 29,
point 3).  Under TCG there is no hardware TLB under the guest at all:
the model is a model of the named geometry and nothing here applies."""
import os

from bench import contract
from bench import tlbknees
from plots.table import Table, fmt_bytes, fnum

# the TLB entry sizes a page can be held as, kB
ENTRY_KB = (4, 64, 2048, 32768, 1048576)


def held_kb(big, small, pk):
    """(entry kB, words) one L1 TLB entry covers on a pk kB backing, from
    its page-stride reach (big) and its 4 KB-stride reach (small)
    (tlbknees.reach); (None, words) where the curves cannot tell."""
    if not big or not big["knees"] or small is None:
        return None, ""
    n = big["knees"][0].entries
    if not small["knees"]:
        low = small["max_n"] * 4096 / n
        # a lower bound: it tells only once no smaller entry fits it
        fits = [kb for kb in ENTRY_KB if kb <= pk and kb * 1024 > low / 2]
        return (pk if fits == [pk] else None), f">= {fmt_bytes(low)}"
    covers = small["knees"][0].entries * 4096 / n
    kb = min((k for k in ENTRY_KB if k <= pk),
             key=lambda k: abs(k * 1024 - covers) / (k * 1024))
    return kb, fmt_bytes(covers) + (" (held as 4 KB entries)" if kb == 4 else "")


def tlbreach_held(run):
    """{page kB: (entry kB, backing)} where tlbreach's curves say what one
    entry covers on a huge backing; {} without hardware timing (TCG says
    nothing of a TLB) or without tlbreach.csv."""
    if not contract.timing_is_hardware(run.meta.get("timing_source")) or \
            not os.path.exists(os.path.join(run.path, "tlbreach.csv")):
        return {}
    t = Table.read(run.path, "tlbreach")
    if not t.ok:
        return {}
    out = {}
    for b in t.backings():
        pk = fnum(next((r["page_kb"] for r in t.rows if r["backing"] == b), None))
        if not pk or pk <= 4:
            continue
        big = tlbknees.reach(t.rows, b, pk * 1024)
        small = tlbknees.reach(t.rows, b, 4096)
        kb, _ = held_kb(big, small, pk)
        if kb and (pk not in out or kb < out[pk][0]):
            out[pk] = (kb, b)
    return out


def split_pages(run, page_sizes):
    """{page kB: (entry kB or None, why)} for each of page_sizes (kB) the
    hardware holds as smaller entries (entry kB) or may (None: the run
    cannot tell); page sizes held whole are left out."""
    meta = run.meta
    src = meta.get("timing_source")
    if not contract.timing_is_hardware(src):
        return {}
    hm = meta.get("host_memory") if src == "kvm" else None
    host_kb = fnum((hm or {}).get("kernel_page_kb")) if isinstance(hm, dict) else None
    measured = tlbreach_held(run)
    vm = (meta.get("machine") or {}).get("hypervisor") and src == "native"
    out = {}
    for pk in sorted({p for p in page_sizes if p and p > 4}):
        if host_kb and pk > host_kb:
            out[pk] = (int(host_kb), f"held as {fmt_bytes(host_kb * 1024)} entries: "
                       f"guest RAM on host {fmt_bytes(host_kb * 1024)} pages "
                       "(meta.json host_memory)")
        elif pk in measured and measured[pk][0] < pk:
            kb, b = measured[pk]
            out[pk] = (kb, f"held as {fmt_bytes(kb * 1024)} entries: tlbreach's "
                       f"{b} curves (one L1 entry covers {fmt_bytes(kb * 1024)})")
        elif vm and pk not in measured:
            out[pk] = (None, "unverified: the host is a VM, which may hold "
                       f"{fmt_bytes(pk * 1024)} pages as smaller TLB entries, "
                       "and tlbreach did not tell (not run, or no knee at this "
                       "page size)")
    return out
