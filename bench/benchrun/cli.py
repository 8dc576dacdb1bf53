# SPDX-License-Identifier: GPL-2.0
"""Run the benchmark profile in the QEMU guest or natively; collect results.

bench/run.py's command line and main(): the profile, the invocations, the
host's state around them and the run's meta.json (see bench/run.py)."""

import argparse
import dataclasses
import datetime
import os
import platform
import shlex
import signal
import sys

from bench import contract

from . import check
from .base import GB, MB, ROOT
from .guest import guest_command, run_guest
from .host import (NODE_POOL, ThpSettings, cpu_flags, git_rev, host_cpu,
                   loadavg, machine_state, mem_available, pinned_node,
                   qemu_version)
from .model import check_model, decide
from .native import run_native
from .plan import backings_of, invocations, native_binary
from .pools import HugePools, needs_pools, together, wants_1g
from .profiles import (REALPROG, host_llc, model_reaches, override_sizes,
                       profile, size_pools)
from .rows import Results, check_exits, new_run_id, report


# Where the host's /proc and /sys are read and THP is set (tests point it
# at a fake tree).
HOST_ROOT = "/"

# The TLB model of the arm64 guest's runs: -cpu max is no real core, and
# the chase cannot pick a preset from a CPU the event tables do not know
# (bench/pmu.c), so the model is the Neoverse N1's (bench/tlbmodel.c).
ARM64_PRESET = "neoverse-n1"

# Why the arm64 run has no real-program step (meta.json notes).
ARM64_NO_REALPROG = ("realprog not run on arm64: it runs Debian's x86_64 "
                     "xz and memcached under an LD_PRELOAD library "
                     "(bench/realprog/), "
                     "and the arm64 initramfs holds neither")


def parse_args(argv, c):
    # prog: lava/job.py plans through here too, and a refusal must name
    # the command whose options it refuses
    ap = argparse.ArgumentParser(prog="bench/run.py",
                                 description=__doc__.splitlines()[0])
    ap.add_argument("--mode", choices=("guest", "native"), required=True,
                    help="guest: in the QEMU guest (run-qemu.sh); native: "
                    "on this host's kernel")
    ap.add_argument("--arch", choices=contract.ARCHES,
                    help="guest: the guest's architecture (default: arm64 "
                    "for a --kernel named Image*, else x86_64); native: "
                    "this host's")
    ap.add_argument("--profile", default="quick",
                    choices=("tiny", "quick", "full"),
                    help="tiny: a smoke test; quick (default): minutes; "
                    "full: the long sweep (bench/benchrun/profiles.py)")
    ap.add_argument("--benches", default=None,
                    help="comma list, each once, of %s (default: all of "
                    "them; realprog, the real-program step, on x86_64 "
                    "only)" % ", ".join(c.bench_names() + [REALPROG]))
    ap.add_argument("--backings", help="comma list, each once (default: "
                    "all; `benchtool contract` lists them)")
    ap.add_argument("--rotate", type=int, default=0,
                    help="start each benchmark's backings this many "
                    "positions further on (default 0)")
    ap.add_argument("--seed", type=int, default=1,
                    help="seed of the benchmarks' random layouts "
                    "(default 1)")
    ap.add_argument("--model",
                    help="TLB model of the benchmarks that model (chase, "
                    "mlp, tlbreach): a preset or a spec; auto: each "
                    "binary picks its core's (a real core: a board, "
                    "native).  Default: the host CPU's preset, decided on "
                    "the host and passed to the guest "
                    "(bench/benchrun/model.py), or none where no preset "
                    "fits, saying so; the arm64 guest: %s" % ARM64_PRESET)
    ap.add_argument("--results-dir", default=os.path.join(ROOT, "results"),
                    help="where results/<run-id>/ is written (default "
                    "results)")
    ap.add_argument("--bindir", default=os.path.join(ROOT, "build", "bench"),
                    help="native: the benchmark binaries (default "
                    "build/bench)")
    ap.add_argument("--run-qemu", default=os.path.join(ROOT, "run-qemu.sh"),
                    help="guest: the script that boots it (default "
                    "run-qemu.sh)")
    ap.add_argument("--kernel", help="guest: bzImage (arm64: Image) for "
                    "run-qemu.sh")
    ap.add_argument("--initrd", help="guest: initramfs for run-qemu.sh")
    ap.add_argument("--qemu-arg", action="append", default=[],
                    help="extra run-qemu.sh argument (repeatable)")
    ap.add_argument("--no-1g", action="store_true",
                    help="do not preallocate 1 GB pages")
    ap.add_argument("--sizes", help="override the profile's working sets "
                    "(every benchmark's but fault's), e.g. 1G or "
                    "16K,6M,1G: positive sizes with an optional K, M or G "
                    "suffix, by the benchmarks' own parser")
    ap.add_argument("--board", metavar="MEM,CPUS",
                    help="guest: plan for real hardware that boots this "
                    "kernel and initramfs (a LAVA board: lava/job.py), "
                    "with MEM of RAM (e.g. 16G) and CPUS CPUs, not for "
                    "QEMU: sized as a native run is, since TCG's time "
                    "does not bind it; plans only (--dry-run)")
    ap.add_argument("--dry-run", action="store_true",
                    help="check the options and the plan, print the "
                    "commands, run nothing (make bench does this before "
                    "building anything)")
    args = ap.parse_args(argv)
    args.benches_given = args.benches is not None
    if not args.benches_given:
        args.benches = ",".join(c.bench_names() + [REALPROG])
    set_arch(ap, args)
    bad = check_model(args.model) if args.model else None
    if bad:
        ap.error(bad)
    for opt in ("benches", "backings"):
        names = (getattr(args, opt) or "").split(",")
        twice = sorted({b for b in names if names.count(b) > 1})
        if twice:
            ap.error("--%s %s: %s listed twice: name each once" % (
                opt, getattr(args, opt), ", ".join(twice)))
    if args.sizes is not None:
        try:
            args.size_list = check.sizes(args.sizes)
        except check.BadInput as e:
            ap.error(str(e))
    if args.board is not None:
        args.board_mem, args.board_cpus = board(ap, args)
    try:
        for b in args.benches.split(","):
            if b != REALPROG:
                c.bench(b)
        for b in (args.backings or "").split(",") if args.backings else []:
            if b not in c.realprog_backings:
                c.backing(b)
    except contract.ContractError as e:
        ap.error(str(e))
    return args


def board(ap, args):
    """(bytes, CPUs) of --board MEM,CPUS; refused outside a guest plan."""
    if args.mode != "guest":
        ap.error("--board plans a guest job for a board; --mode native "
                 "measures this host: drop one")
    mem, _, cpus = args.board.partition(",")
    try:
        sizes = check.sizes(mem)
    except check.BadInput as e:
        ap.error("--board %s: %s" % (args.board, e))
    if len(sizes) != 1 or not cpus.isdigit() or int(cpus) < 1:
        ap.error("--board %s: want MEM,CPUS, the board's RAM and CPU "
                 "count, e.g. 16G,8" % args.board)
    return sizes[0], int(cpus)


def set_arch(ap, args):
    """args.arch from --arch, the kernel's name or the host; on arm64 no
    real-program step by default (the TLB model: model.decide())."""
    host = {"aarch64": "arm64"}.get(platform.machine(), platform.machine())
    if args.mode == "native":
        if args.arch and args.arch != host:
            ap.error("--arch %s with --mode native on a %s host: native runs "
                     "measure this host; use --mode guest" % (args.arch,
                                                              host))
        args.arch = host if host in contract.ARCHES else "x86_64"
    elif not args.arch:
        kernel = os.path.basename(args.kernel or "")
        args.arch = "arm64" if kernel.startswith("Image") else "x86_64"
    if args.arch != "arm64":
        return
    benches = args.benches.split(",")
    if REALPROG in benches:
        if args.benches_given:
            ap.error(ARM64_NO_REALPROG)
        args.benches = ",".join(b for b in benches if b != REALPROG)


def first_meta(args, run_id, cmds, runs):
    guest = args.mode == "guest"
    state = machine_state(HOST_ROOT)
    meta = {
        "run_id": run_id,
        "date": datetime.datetime.now().astimezone().isoformat(
            timespec="seconds"),
        "git_rev": git_rev(),
        "profile": args.profile,
        "mode": args.mode,
        "host_cpu": host_cpu(),
        "kernel": None if guest else platform.release(),
        "series_id": None if guest else "host",
        "arch": args.arch,
        "qemu": {"version": qemu_version(args.arch), "accel": None,
                 "icount": None}
        if guest else None,
        "timing_source": None if guest else "native",
        "commands": [" ".join(shlex.quote(x) for x in c) for c in cmds],
        "backing_order": {},
        "machine": dict(state, loadavg_start=loadavg(), loadavg_end=None,
                        thp_in_run={"enabled": state["thp_enabled"],
                                    "defrag": state["thp_defrag"]}),
        # the cores QEMU's vCPU threads share in guest mode (faultscale)
        "host_cpus": os.cpu_count(),
        "tlb_model": args.tlb_model,
        "status": "running",
    }
    for bench, argv in runs:
        meta["backing_order"].setdefault(bench, []).extend(backings_of(argv))
    if state["hypervisor"] and not guest:
        meta["notes"] = [contract.HYPERVISOR_NOTE]
    if args.arch == "arm64" and not args.benches_given:
        meta.setdefault("notes", []).append(ARM64_NO_REALPROG)
    return meta


def stop_signals():
    """Turns the first SIGINT/SIGTERM/SIGHUP into KeyboardInterrupt and
    ignores the rest, so they cannot cut the cleanup short (child, pools,
    meta.json).  A signal that was ignored when we started (nohup, a
    background job) stays ignored.  Returns a function that ignores them
    all from then on."""
    stops = [s for s in (signal.SIGINT, signal.SIGTERM, signal.SIGHUP)
             if signal.getsignal(s) != signal.SIG_IGN]

    def ignore_stops():
        for s in stops:
            signal.signal(s, signal.SIG_IGN)

    def on_term(sig, frame):
        ignore_stops()
        raise KeyboardInterrupt("signal %d" % sig)

    for s in stops:
        signal.signal(s, on_term)
    return ignore_stops


@dataclasses.dataclass
class RunPlan:
    """What a run will do, decided before anything is changed or started:
    the options, the profile sized for this host, the invocations
    ((bench, argv) in order), the commands that run them (guest: the one
    run-qemu.sh boot), the benchmarks asked for and the backings they
    map.  lava/job.py writes a lab's job from the same plan."""
    args: argparse.Namespace
    profile: dict
    runs: list
    cmds: list
    benches: list
    backings: set


def sized_plan(args, c, benches, mem):
    """(profile, invocations, backings) of the run for mem bytes of
    memory, checked by the binaries' rules."""
    # A board runs the guest's job on its own hardware: sized as a native
    # run for its memory and CPUs.  Its LLC is not known here: streamk
    # takes the profile's largest working set, and the binary says on the
    # board whether STREAM's rule was met.
    on_board = args.board is not None
    p = profile(args.profile, "native" if on_board else args.mode, mem, c,
                llc=host_llc() if args.mode == "native" else None,
                arch=args.arch, reaches=model_reaches(args.tlb_model["arg"]),
                cpus=args.board_cpus if on_board else None)
    if on_board:
        p["smp"] = args.board_cpus      # the job's CPUs (--print-config)
        # the board's job runs the native-sized plan in one boot, with
        # one timeout for all of it (native runs have none): four times
        # the guest's, as no one here has timed it on hardware; a job cut
        # short by it keeps every row it printed (lava/fetch.py)
        p["timeout"] *= 4
    if args.sizes is not None:
        override_sizes(p, args.sizes, args.arch, top=max(args.size_list))
    runs = invocations(p, args, args.tlb_model["arg"], benches, c)
    check.invocations(runs)
    selected = {b for bench, a in runs if bench != REALPROG
                for b in backings_of(a)}
    if REALPROG not in benches:
        p.pop(REALPROG, None)
    size_pools(p, with_1g=not args.no_1g and wants_1g(selected, c),
               together=together(runs, c), mem_available=mem,
               arch=args.arch)
    return p, runs, selected


def plan_run(argv, c):
    args = parse_args(argv, c)
    args.tlb_model = decide(args.model, args.arch,
                            os.path.join(ROOT, contract.BENCHTOOL),
                            cpu_flags(HOST_ROOT), ARM64_PRESET)
    if args.tlb_model["source"] == "none":
        # said once, here: the binaries get --model none and stay quiet
        print("bench: " + args.tlb_model["why"], file=sys.stderr)
    benches = [b for b in args.benches.split(",") if b]
    on_board = args.board is not None
    mem = args.board_mem if on_board else mem_available()
    p, runs, selected = sized_plan(args, c, benches, mem)
    # A board reserves every pool at boot, beside the 4 KB and THP
    # working sets: where the plan for its RAM needs more (the full
    # chase takes a third of the memory it is given), plan for less
    # until it fits, or down to 1 GB (lava/job.py then refuses it).
    while on_board and int(p["mem"].rstrip("M")) * MB > args.board_mem \
            and mem > GB:
        mem = mem * 3 // 4
        p, runs, selected = sized_plan(args, c, benches, mem)
    for note in p["notes"]:
        print("bench: " + note, file=sys.stderr)
    if args.mode == "guest":
        cmds = [guest_command(p, args, runs, c)]
    else:
        cmds = [[os.path.join(args.bindir, native_binary(b, c, args.bindir))]
                + a for b, a in runs]
    return RunPlan(args, p, runs, cmds, benches, selected)


def main(argv=None):
    c = contract.load()
    plan = plan_run(argv, c)
    args, p, runs, cmds = plan.args, plan.profile, plan.runs, plan.cmds
    benches, selected = plan.benches, plan.backings
    guest = args.mode == "guest"
    if args.board is not None and not args.dry_run:
        print("bench/run.py: --board plans a board's job (lava/job.py "
              "--board); it boots nothing here: add --dry-run to see the "
              "plan", file=sys.stderr)
        return 2
    # a board's plan is for another machine: this host's checks do not
    # apply to it (lava/job.py checks it against the board's RAM)
    if args.board is None and guest:
        check.guest(cmds[0], HOST_ROOT)
    elif args.board is None:
        check.native(p, HOST_ROOT)
    if args.dry_run:
        for cmd in cmds:
            print(" ".join(shlex.quote(x) for x in cmd))
        return 0

    os.makedirs(args.results_dir, exist_ok=True)
    run_id = new_run_id(args.results_dir, args.mode, args.profile)
    res = Results(args.results_dir, run_id,
                  first_meta(args, run_id, cmds, runs))
    if p["notes"]:
        res.meta.setdefault("notes", []).extend(p["notes"])
    print("bench: %s run %s -> %s" % (args.mode, args.profile, res.dir),
          flush=True)
    node = None if guest else pinned_node(args.bindir, HOST_ROOT)
    pools = HugePools(None if node is None else
                      os.path.join(HOST_ROOT, NODE_POOL % node))
    res.meta["machine"]["pool_node"] = node
    thp = ThpSettings(HOST_ROOT)
    ignore_stops = stop_signals()
    status, rc = "complete", 0
    try:
        # A native run holds the host-state lock throughout: it changes the
        # pools and THP, and another native run would disturb its timings.
        if not guest:
            pools.hold()
        # Natively THP is set for the thp backing (see ThpSettings).  A
        # guest needs nothing set: it boots fresh with the project config's
        # enabled=madvise, defrag=madvise and is discarded after the run;
        # its values are recorded (thp_guest).
        if not guest and any(c.needs_thp(b) for b in selected):
            res.meta["machine"]["thp_in_run"] = thp.apply()
            res.write_meta()
        if guest:
            rc = run_guest(res, cmds[0], pools)
        else:
            rc = run_native(res, runs, cmds, pools, p,
                            needs_pools(selected, c) or REALPROG in benches, c)
        rc = check_exits(res, benches, rc)
        if rc:
            status = "failed"
    except KeyboardInterrupt:
        status, rc = "interrupted", contract.QEMU_EXIT["INTERRUPTED"][0]
        print("bench: interrupted", file=sys.stderr)
    finally:
        # From here to exit nothing is left to stop, and a signal would only
        # turn a recorded status into a different exit code: ignore them.
        ignore_stops()
        pools.restore()
        thp.restore()
        res.meta["machine"]["loadavg_end"] = loadavg()
        res.finish(status)
    report(res, status)
    return rc
