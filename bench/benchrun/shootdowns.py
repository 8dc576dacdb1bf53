# SPDX-License-Identifier: GPL-2.0
"""tlbflush's oracle (issue 34, point 1): the kernel's own count of the TLB
shootdowns it performed, read here around a run of build/bench/tlbflush
and checked against the operations its row claims.

The count is the "TLB" line of /proc/interrupts (x86: shootdown IPIs
received, per CPU; summed).  With N threads of one process running on N
CPUs, each drop must invalidate the other N-1 CPUs' TLBs: under "ipi"
(bare metal, a TCG guest: a Linux x86 kernel sends every remote flush as an
IPI) the count over a run must be at least IPI_SHARE x ops x (N-1); with
one thread no remote flush is needed, so it must stay under
ONE_THREAD_SHARE x ops.  Under "kvm_pv" (a KVM guest with the paravirtual
flush: a preempted vCPU is flagged to flush at its next entry, with no IPI)
the count sees only the IPIs to vCPUs that were running, so only a weak
bound holds: at least KVM_PV_SHARE x ops.  Where remote flushes are not
IPIs at all (arm64's broadcast TLBI; AMD's INVLPGB, Linux 6.15 on) there
is nothing to count: not checked, and said so.  The machine's other
shootdowns meanwhile (other processes) are measured over an idle window
before the run and subtracted.

What it misses: a flush of the wrong address or the wrong CPU (it counts
IPIs, not what they invalidated), an extra flush per operation (a lower
bound only), and under kvm_pv anything but "no shootdown at all"."""

import json
import os
import subprocess
import time

IPI_SHARE = 0.5
KVM_PV_SHARE = 0.005
ONE_THREAD_SHARE = 0.05
SLACK = 20              # shootdowns the noise estimate may miss
IDLE_S = 0.5            # the window the machine's own rate is read over


def tlb_irqs(path="/proc/interrupts"):
    """The TLB line of path summed over CPUs, or None where it has none."""
    try:
        with open(path) as f:
            for line in f:
                name, _, rest = line.strip().partition(":")
                if name == "TLB":
                    total = 0
                    for w in rest.split():
                        if not w.isdigit():
                            break
                        total += int(w)
                    return total
    except OSError:
        pass
    return None


def invlpgb(path="/proc/cpuinfo"):
    """Whether the CPU flushes remote TLBs by broadcast (AMD's INVLPGB)."""
    try:
        with open(path) as f:
            for line in f:
                if line.startswith("flags"):
                    return "invlpgb" in line.split()
    except OSError:
        pass
    return False


def verdict(delta, noise, ops, threads, flush_via):
    """(ok, bound, why): ok True/False, or None when not checked (why).
    delta: the TLB line's growth over the run; noise: what the machine
    would have added meanwhile; ops: the row's timed operations."""
    own = delta - noise
    if threads == 1:
        bound = ONE_THREAD_SHARE * ops + SLACK
        return own <= bound, bound, (
            "one thread: %.0f shootdowns beyond the machine's %.0f for %d "
            "operations, at most %.0f allowed (no other CPU runs the "
            "process)" % (own, noise, ops, bound))
    share = {"ipi": IPI_SHARE * (threads - 1), "kvm_pv": KVM_PV_SHARE}.get(
        flush_via)
    if share is None:
        return None, None, "remote flushes go by %s here, not IPIs: " \
            "nothing to count" % flush_via
    bound = share * ops
    return own >= bound, bound, (
        "%d threads (%s): %.0f shootdowns beyond the machine's %.0f for %d "
        "operations, at least %.0f wanted" % (threads, flush_via, own,
                                              noise, ops, bound))


def check(bindir, backing="devzero", kind="anon", threads=2, size="1M",
          duration_ms=300, extra=()):
    """Runs tlbflush once (one backing, kind and thread count, one
    repetition) with the TLB line read here around it; a dict: row (the
    binary's), delta, noise, flush_via, ok, bound, why."""
    if tlb_irqs() is None:
        return {"ok": None, "why": "no TLB line in /proc/interrupts "
                "(arm64 broadcasts TLBI: no IPI to count)"}
    if invlpgb():
        return {"ok": None, "why": "the CPU has INVLPGB: Linux 6.15 and "
                "later flush remote TLBs by broadcast, no IPI to count"}
    t0, i0 = time.monotonic(), tlb_irqs()
    time.sleep(IDLE_S)
    rate = (tlb_irqs() - i0) / (time.monotonic() - t0)
    cmd = [os.path.join(bindir, "tlbflush"), "--backings", backing,
           "--kind", kind, "--threads", str(threads), "--sizes", size,
           "--reps", "1", "--warmup", "0", "--duration-ms",
           str(duration_ms)] + list(extra)
    t0, i0 = time.monotonic(), tlb_irqs()
    p = subprocess.run(cmd, capture_output=True, text=True)
    delta, wall = tlb_irqs() - i0, time.monotonic() - t0
    out = {"cmd": cmd, "delta": delta, "noise": rate * wall + SLACK,
           "wall_s": wall, "rc": p.returncode, "ok": None}
    header, row, flush_via = None, None, None
    for line in p.stdout.splitlines():
        kw, _, rest = line.partition(" ")
        if kw == "@header":
            header = rest.split(" ", 1)[1].split(",")
        elif kw == "@row" and header:
            row = dict(zip(header, rest.split(" ", 1)[1].split(",")))
        elif kw == "@meta" and rest.startswith("tlbflush "):
            flush_via = json.loads(rest.split(" ", 1)[1]).get("flush_via")
    out.update(row=row, flush_via=flush_via)
    if p.returncode or not row:
        out["why"] = "tlbflush gave no row (rc %d): %s" % (
            p.returncode, (p.stderr or p.stdout).strip()[-500:])
        return out
    # the untimed pass's operations drop too: the row's timed ones are a
    # lower bound for the threads' check, the untimed ones are added to
    # the one thread's allowance (one per page of the region)
    ops = int(row["ops"])
    if int(row["low_overlap"]):
        out["why"] = "the threads did not run together (overlap %s): " \
            "nothing to judge" % row["overlap"]
        return out
    out["ok"], out["bound"], out["why"] = verdict(
        delta, out["noise"], ops, threads, flush_via)
    return out
