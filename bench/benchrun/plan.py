# SPDX-License-Identifier: GPL-2.0
"""The run's invocations: which binary, which arguments and which
backings (rotated per benchmark) each benchmark runs with.  What a
benchmark takes comes from the contract (bench/contract.py), not from its
name."""

import os

from .profiles import REALPROG, arch_backings


def rotation(backings, k):
    """backings rotated by k, as one comma list: the binary's first round
    of repetitions measures them in this order, and the later rounds follow
    a Williams design over it (bench/runner.c)."""
    k %= max(len(backings), 1)
    return ",".join(backings[k:] + backings[:k])


def bench_backings(p, bench, args, c):
    """The backings bench measures in this run, in table order."""
    profile_bk = p.get("backings", {})
    chosen = args.backings or profile_bk.get(bench, profile_bk.get("*"))
    if not chosen:
        return arch_backings(c, args.arch)
    want = chosen.split(",")
    for b in want:
        if b not in c.realprog_backings:
            c.backing(b)        # an unknown name stops here, named
    return [b for b in c.backing_names() if b in want]


def profile_args(p, bench):
    """The profile's arguments for bench, or the runner's own options."""
    return list(p.get(bench, p["runner"]))


def binary(bench, c):
    """The file name of bench's binary in build/bench (and the guest's
    /usr/local/bin)."""
    return REALPROG if bench == REALPROG else c.bench(bench)["binary"]


def native_binary(bench, c, bindir):
    """bench's binary for a native run: its build for this host's CPU,
    <binary>-native, where bench/bench.mk built one (streamk's -O3
    -march=native, which STREAM's rules allow and @meta streamk_build
    records); else binary()."""
    name = binary(bench, c)
    if os.path.exists(os.path.join(bindir, name + "-native")):
        return name + "-native"
    return name


def realprog_invocation(p, args, c):
    """The real-program step: one invocation, every backing (it rotates
    them per repetition itself, and skips what the kernel lacks)."""
    want = c.realprog_backings
    if args.backings:
        want = [b for b in want if b in args.backings.split(",")]
    return (REALPROG, profile_args(p, REALPROG) +
            ["--seed", str(args.seed), "--backings", ",".join(want)])


def bench_args(p, bench, args, preset, c):
    """The profile's arguments, the seed, and the TLB model preset for a
    benchmark that takes --model (the contract's options say which)."""
    a = profile_args(p, bench) + ["--seed", str(args.seed)]
    if c.has_option(bench, "model"):
        a += ["--model", preset]
    return a


def backings_of(argv):
    """The backings an invocation maps, in its order (its --backings)."""
    return argv[argv.index("--backings") + 1].split(",")


def invocations(p, args, preset, benches, c):
    """[(bench, argv without the binary)]: the run's binaries in order,
    each benchmark's first round of backings rotated one position more
    than the last's."""
    out = []
    for i, bench in enumerate(benches):
        if bench == REALPROG:
            out.append(realprog_invocation(p, args, c))
            continue
        out.append((bench, bench_args(p, bench, args, preset, c) + [
            "--backings", rotation(bench_backings(p, bench, args, c),
                                   args.rotate + i)]))
    return out
