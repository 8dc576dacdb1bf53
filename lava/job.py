#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""LAVA job definitions for a benchmark profile, from the project itself.

    python3 -m lava.job --profile quick --arch x86_64 --device qemu \\
        [--artifacts URL] [--device-type NAME] [--dtb URL] [--out FILE]

Devices:
  qemu   LAVA's `qemu` device type (x86_64 or arm64), TCG, the initramfs
         deployed to tmpfs as one cpio with LAVA's overlay in it
  ipxe   x86_64 hardware booted by iPXE, kernel and ramdisk from tftp
         (device type `x86` unless --device-type)
  uboot  arm64 boards booted by u-boot from tftp (--device-type names the
         board's type, --dtb its device tree; the lab's device type decides
         how u-boot loads the ramdisk)

Nothing is decided here that run-qemu.sh and bench/run.py decide: the
benchmarks and their commands are bench/run.py's plan for a guest run
(benchrun.plan_run, as `bench/run.py --mode guest` makes it), and the
kernel command line, pools, memory, CPUs and timeout are what
`run-qemu.sh --print-config` says a boot of that command uses.  Nothing
here parses a command line or another stage's text.  The guest is the
stock initramfs: /init, finding no /job/env, waits at a prompt
(hugetlb.job=shell) and LAVA's test shell runs the job through
/usr/local/bin/hugetlb-lava-results, which prints every line and turns
@row, @exit and TAP lines into lava-test-case calls.
"""
import argparse
import json
import math
import os
import shlex
import subprocess
import sys

import yaml

from bench import contract
from bench import benchrun as bench_run  # bench/run.py's code

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

PROMPT = "hugetlb# "
DEVICES = {"qemu": ("x86_64", "arm64"), "ipxe": ("x86_64",),
           "uboot": ("arm64",)}
DEFAULT_DEVICE_TYPE = {"qemu": "qemu", "ipxe": "x86",
                       "uboot": "bcm2711-rpi-4-b"}
# The board a hardware job is sized for unless --board names the lab's:
# MEM,CPUS (bench/run.py --board); the quick profile needs 7 to 8 GB.
# The largest Raspberry Pi 4 has 8 GB and four cores.
DEFAULT_BOARD = {"ipxe": "8G,4", "uboot": "8G,4"}
# What each benchmark's metric counts, for lava-test-case --units.
UNITS = {"ns_per_access": "ns", "ns_per_update": "ns", "us_per_call": "us",
         "us_per_mb": "us/MB", "p99_us": "us",
         "faults_per_s": "faults/s", "ops_per_s": "ops/s", "gb_per_s": "GB/s", "mb_per_s": "MB/s"}
# Minutes for what run-qemu.sh does not time: fetching and unpacking the
# images, and booting to the prompt (TCG boots take the longest).
DEPLOY_MIN = 10
BOOT_MIN = {"qemu": 10, "ipxe": 10, "uboot": 10}
# Kernel arguments run-qemu.sh adds for TCG only (see its comments).
TCG_ONLY_ARGS = ("tsc=reliable", "no_timer_check")


# The CPU, as fleet-report puts machines side by side: x86's vendor,
# family, model and model name; Arm's implementer, variant, part.
CPU_META = (
    "awk -F': *' '/^vendor_id/ {v=$2} /^cpu family/ {f=$2} "
    "/^model[ \\t]*:/ {m=$2} /^model name/ {n=$2} /^CPU implementer/ {v=$2} "
    "/^CPU variant/ {f=$2} /^CPU part/ {m=$2} END {printf \"@meta cpu_id "
    "{\\\"vendor\\\": \\\"%s\\\", \\\"family\\\": \\\"%s\\\", "
    "\\\"model\\\": \\\"%s\\\", \\\"name\\\": \\\"%s\\\"}\\n\", v, f, m, n}' "
    "/proc/cpuinfo")


class JobError(Exception):
    """The job cannot be written; the message names cause and fix."""


def guest_plan(args, c):
    """bench/run.py's plan for this profile in a guest; a board is a real
    core, so there the chase picks its own TLB model (--model auto), and
    TCG's time does not bind it: the plan is sized as a native run's for
    the board's memory and CPUs (--board)."""
    argv = ["--mode", "guest", "--profile", args.profile, "--arch", args.arch]
    if args.device != "qemu":
        argv += ["--model", "auto", "--board", args.board]
    return bench_run.plan_run(argv, c)


def qemu_config(cmd):
    """run-qemu.sh --print-config for the boot cmd asks for (TCG, as a
    lab's qemu runs it)."""
    i = cmd.index("--")
    p = subprocess.run(cmd[:i] + ["--accel", "tcg", "--print-config"] +
                       cmd[i:], cwd=ROOT, capture_output=True, text=True)
    if p.returncode:
        raise JobError("run-qemu.sh --print-config failed: %s"
                       % p.stderr.strip())
    try:
        cfg = json.loads(p.stdout)
        return {k: cfg[k] for k in ("kernel_args", "memory_mb", "smp", "job",
                                    "clock_boots", "timeout_s")}
    except (ValueError, KeyError, TypeError) as e:
        raise JobError("run-qemu.sh --print-config gave no config (%s): %s"
                       % (e, p.stdout.strip()[:300]))


def metrics_spec(c):
    """BENCH:KEY,...:METRIC:UNITS;... for hugetlb-lava-results."""
    return ";".join("%s:%s:%s:%s" % (b["name"], ",".join(b["key"]),
                                     b["metric"],
                                     UNITS.get(b["metric"], b["metric"]))
                    for b in c.benches)


def series_id(arch):
    path = os.path.join(ROOT, contract.GUEST_FILES[arch][0] + ".series")
    try:
        with open(path) as f:
            return f.read().strip() or "unknown"
    except OSError:
        return "unknown"


def unbuilt_warning(arch):
    """A warning when the job's kernel is not built here yet (its .series
    file, written with it by kernel/build.sh, is missing): the job then
    says series=unknown and the lab fetches whatever lies at the URL."""
    if series_id(arch) != "unknown":
        return None
    kernel = contract.GUEST_FILES[arch][0]
    more = " ARCH=arm64" if arch == "arm64" else ""
    return ("warning: %s is not built (no %s.series), so the job says "
            "hugetlb.series=unknown: run 'make kernel initramfs%s' before serving "
            "the artifacts" % (kernel, kernel, more))


def kernel_args(append, device, accel, arch):
    """The pools (and for qemu run-qemu.sh's console and TCG arguments)
    plus the guest's job words; a lab's device type adds its console."""
    keep = [w for w in append if device == "qemu" or
            w.startswith(("hugepagesz=", "hugepages=", "rdinit="))]
    return keep + ["hugetlb.job=shell", "hugetlb.accel=" + accel,
                   "hugetlb.series=" + series_id(arch)]


def test_action(args, plan, c):
    meta = {"profile": args.profile, "arch": args.arch,
            "device": args.device, "device_type": args.device_type,
            "memory_mb": plan["mem_mb"], "git_rev": plan["git_rev"],
            "benches": plan["benches"]}
    if args.device != "qemu":
        meta["board"] = args.board      # what the plan was sized for
    steps = [
        "echo %s" % shlex.quote("@meta lava_job " + json.dumps(meta)),
        "cd /tmp",
        CPU_META,
        "hugetlb-lava-results --metrics %s -- %s" % (
            shlex.quote(metrics_spec(c)), plan["job"]),
    ]
    name = "hugetlb-%s-%s" % (args.profile, args.arch)
    return {"test": {
        "timeout": {"minutes": plan["test_min"]},
        "definitions": [{
            "from": "inline", "name": name, "path": "inline/%s.yaml" % name,
            "repository": {
                "metadata": {
                    "format": "Lava-Test Test Definition 1.0",
                    "name": name,
                    "description": "the /dev/hugetlb benchmark suite, "
                                   "profile %s (bench/run.py)" % args.profile},
                "run": {"steps": steps}}}]}}


def url(args, path):
    return args.artifacts.rstrip("/") + "/" + path


def deploy_boot(args, plan):
    kernel, initrd = contract.GUEST_FILES[args.arch]
    cmdline = " ".join(plan["kernel_args"])
    timeout = {"minutes": DEPLOY_MIN}
    boot = {"timeout": {"minutes": BOOT_MIN[args.device]},
            "prompts": [PROMPT]}
    if args.device == "qemu":
        # One cpio, LAVA's overlay put inside it (LAVA reads only the
        # first archive of a concatenation).
        deploy = {"to": "tmpfs", "images": {
            "kernel": {"url": url(args, kernel), "image_arg":
                       "-kernel {kernel} -append \"%s\"" % cmdline},
            "ramdisk": {"url": url(args, initrd),
                        "image_arg": "-initrd {ramdisk}",
                        "format": "cpio.newc", "overlays": {"lava": True}}}}
        # TCG on a loaded host can miscalibrate the guest's TSC, which
        # /init refuses (exit 122); boot again, as often as run-qemu.sh.
        boot.update(method="qemu", media="tmpfs",
                    failure_retry=plan["clock_boots"])
    else:
        deploy = {"to": "tftp", "kernel": {"url": url(args, kernel)},
                  "ramdisk": {"url": url(args, initrd)}}
        if args.device == "uboot":
            deploy["kernel"]["type"] = "image"
            deploy["dtb"] = {"url": args.dtb}
        boot.update(method={"ipxe": "ipxe", "uboot": "u-boot"}[args.device],
                    commands="ramdisk")
    deploy["timeout"] = timeout
    return [{"deploy": deploy}, {"boot": boot}]


def context(args, plan):
    if args.device != "qemu":
        return {"extra_kernel_args": " ".join(plan["kernel_args"])}
    # LAVA's qemu device type takes -cpu and -machine from the context
    # on arm64 only, and has no variable for the CPU count.
    ctx = {"arch": {"x86_64": "amd64", "arm64": "arm64"}[args.arch],
           "memory": plan["mem_mb"],
           "extra_options": ["-smp %d" % plan["smp"]],
           # TCG, as hugetlb.accel=tcg says: the numbers are emulated.
           "no_kvm": "True"}
    if args.arch == "arm64":
        ctx.update(cpu="max", machine="virt,gic-version=3")
    else:
        ctx["extra_options"].append("-cpu max")
    return ctx


def plan_for(args, c):
    run = guest_plan(args, c)
    cfg = qemu_config(run.cmds[0])
    if args.device != "qemu" and \
            cfg["memory_mb"] * bench_run.MB > run.args.board_mem:
        raise JobError("the %s profile needs %d MB (its pools, working sets "
                       "and kernel) and the board has %s: name a bigger "
                       "board (BOARD=MEM,CPUS) or a smaller profile"
                       % (args.profile, cfg["memory_mb"],
                          args.board.split(",")[0]))
    accel = "tcg" if args.device == "qemu" else "native"
    return {"kernel_args": kernel_args(cfg["kernel_args"].split(),
                                       args.device, accel, args.arch),
            "mem_mb": cfg["memory_mb"], "smp": cfg["smp"], "job": cfg["job"],
            "benches": [bench for bench, _ in run.runs],
            "test_min": math.ceil(cfg["timeout_s"] / 60),
            "clock_boots": cfg["clock_boots"],
            "git_rev": bench_run.git_rev()}


def job(args, c):
    plan = plan_for(args, c)
    actions = deploy_boot(args, plan) + [test_action(args, plan, c)]
    # What the lab's machine needs: the pools are on the kernel command
    # line and must fit in its memory; a board's plan is sized for it.
    needs = {"hugetlb.profile": args.profile, "hugetlb.arch": args.arch,
             "hugetlb.min_memory_mb": plan["mem_mb"]}
    if args.device != "qemu":
        needs["hugetlb.board"] = args.board
    total = DEPLOY_MIN + BOOT_MIN[args.device] + plan["test_min"] + 5
    doc = {
        "device_type": args.device_type,
        "job_name": "hugetlb %s %s on %s" % (args.profile, args.arch,
                                             args.device_type),
        "timeouts": {"job": {"minutes": total},
                     "connection": {"minutes": 2}},
        "priority": "medium",
        "visibility": "public",
        "metadata": needs,
        "context": context(args, plan),
        "actions": actions,
    }
    return doc


def parse_args(argv):
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--profile", default="quick",
                    choices=("tiny", "quick", "full"))
    ap.add_argument("--arch", default="x86_64", choices=("x86_64", "arm64"))
    ap.add_argument("--device", default="qemu", choices=sorted(DEVICES))
    ap.add_argument("--device-type", help="LAVA device type (default: "
                    "qemu, x86 for ipxe, bcm2711-rpi-4-b for uboot)")
    ap.add_argument("--artifacts", default="file://" + ROOT,
                    help="URL the kernel and initramfs are served under, "
                    "with build/... below it (default: this tree)")
    ap.add_argument("--dtb", help="uboot: URL of the board's device tree "
                    "(default: ARTIFACTS/dtbs/DEVICE_TYPE.dtb)")
    ap.add_argument("--board", metavar="MEM,CPUS",
                    help="hardware: the board's RAM and CPUs, which size "
                    "the profile (default: %s)" % ", ".join(
                        "%s %s" % kv for kv in sorted(DEFAULT_BOARD.items())))
    ap.add_argument("--out", help="write here (default: stdout)")
    args = ap.parse_args(argv)
    if args.arch not in DEVICES[args.device]:
        ap.error("--device %s boots %s only, not --arch %s" % (
            args.device, " or ".join(DEVICES[args.device]), args.arch))
    if args.device == "qemu" and args.board:
        ap.error("--board sizes a hardware job; --device qemu runs in "
                 "QEMU, sized by run-qemu.sh: drop --board")
    args.board_defaulted = args.device != "qemu" and not args.board
    if args.board_defaulted:
        args.board = DEFAULT_BOARD[args.device]
    args.device_type = args.device_type or DEFAULT_DEVICE_TYPE[args.device]
    args.dtb = args.dtb or url(args, "dtbs/%s.dtb" % args.device_type)
    return args


def main(argv=None):
    args = parse_args(argv)
    try:
        text = yaml.safe_dump(job(args, contract.load()), sort_keys=False,
                              width=1 << 16)
    except (JobError, contract.ContractError) as e:
        print("lava-job: %s" % e, file=sys.stderr)
        return 2
    if args.out:
        os.makedirs(os.path.dirname(os.path.abspath(args.out)), exist_ok=True)
        with open(args.out + ".tmp", "w") as f:
            f.write(text)
        os.replace(args.out + ".tmp", args.out)
        print("lava-job: %s" % args.out)
    else:
        sys.stdout.write(text)
    warning = unbuilt_warning(args.arch)
    if warning:
        print("lava-job: %s" % warning, file=sys.stderr)
    if args.board_defaulted:
        print("lava-job: the %s job is sized for a board of %s of RAM and %s "
              "CPUs (the default): name the lab's with BOARD=MEM,CPUS "
              "(--board)" % ((args.device,) + tuple(args.board.split(","))),
              file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
