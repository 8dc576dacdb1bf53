# SPDX-License-Identifier: GPL-2.0
"""The guest run: one run-qemu.sh boot that runs every invocation in turn,
with the host's 2 MB pool raised for guest RAM where run-qemu.sh's
--print-config says it sits there."""

import json
import os
import shlex
import subprocess
import sys

from bench import contract

from .base import KB_1G, ROOT
from .plan import binary
from .rows import stream_lines


# The guest's THP knobs, as one @meta line (Results.add_meta: thp_guest).
GUEST_THP = ("t=/sys/kernel/mm/transparent_hugepage; printf '@meta thp_guest "
             "{\"enabled\": \"%s\", \"defrag\": \"%s\"}\\n' "
             "\"$(cat $t/enabled 2>/dev/null)\" \"$(cat $t/defrag 2>/dev/null)\"")


def guest_command(p, args, runs, c):
    """One run-qemu.sh boot that runs every invocation in turn; the
    initramfs has the binaries in /usr/local/bin."""
    script = "; ".join([GUEST_THP] + [
        "/usr/local/bin/%s %s; echo \"@exit %s $?\"" % (
            os.path.basename(binary(bench, c)),
            " ".join(shlex.quote(x) for x in argv), bench)
        for bench, argv in runs])
    cmd = [args.run_qemu]
    if args.arch != "x86_64":
        cmd += ["--arch", args.arch]
    # every pool of the architecture, 0 included: run-qemu.sh's own
    # defaults would otherwise fill the pools the run does not use
    for kb in contract.arch_pools(args.arch):
        pool = contract.POOL[kb]
        if p[pool.key] or kb != KB_1G:
            cmd += [pool.option, str(p[pool.key])]
    cmd += ["--mem", p["mem"], "--timeout", str(p["timeout"])]
    # the CPUs a benchmark that runs tasks in parallel spreads over
    # (faultscale's --tasks, tlbflush's --threads)
    if any(bench in c.bench_names() and (c.has_option(bench, "tasks") or
                                         c.has_option(bench, "threads"))
           for bench, _ in runs):
        cmd += ["--smp", str(p["smp"])]
    if args.kernel:
        cmd += ["--kernel", args.kernel]
    if args.initrd:
        cmd += ["--initrd", args.initrd]
    return cmd + args.qemu_arg + ["--", "sh", "-c", script]


def guest_ram_on_host_pool(cmd):
    """(MB, page kB) of guest RAM run-qemu.sh will take from a host hugetlb
    pool (--host-pages hugetlb, its default under KVM), from its
    --print-config for the same options; (0, 0) for none."""
    i = cmd.index("--")
    p = subprocess.run(cmd[:i] + ["--print-config"] + cmd[i:], cwd=ROOT,
                       capture_output=True, text=True)
    try:
        ram = json.loads(p.stdout)["guest_ram"]
    except (ValueError, KeyError, TypeError):
        # the boot itself stops with run-qemu.sh's reason
        print("bench: run-qemu.sh --print-config gave no config (exit %d): "
              "%s" % (p.returncode, p.stderr.strip()[-300:]),
              file=sys.stderr)
        return 0, 0
    if not ram.get("hugetlb"):
        return 0, 0
    return ram["size_mb"], ram["page_kb"]


def run_guest(res, cmd, pools):
    ram_mb, kb = guest_ram_on_host_pool(cmd)
    if ram_mb:
        # Room for all guest RAM on top of what the pool already lends out.
        pools.hold()
        total = pools.read(kb)
        free = pools.read(kb, "free_hugepages")
        got = pools.raise_to(kb, total - free + ram_mb * 1024 // kb)
        print("bench: host %d kB pool raised to %d for %d MB of guest RAM"
              % (kb, got, ram_mb))
    rc = stream_lines(cmd, res, cwd=ROOT)
    reason = contract.QEMU_EXIT_REASON.get(rc)
    if reason and rc != contract.QEMU_EXIT["USAGE"][0]:
        res.meta["errors"].append("run-qemu.sh: " + reason)
        print("bench: run-qemu.sh exit %d: %s" % (rc, reason),
              file=sys.stderr)
    return rc
