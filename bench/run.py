#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""Run the benchmark profile in the QEMU guest or natively; collect results.

    python3 -m bench.run --mode guest|native [--profile tiny|quick|full]

(python3 bench/run.py runs it the same way).  The binaries
(build/bench/<benchmark>, one for each benchmark bench/contract.py names)
speak a line protocol on stdout (see bench/rows.h): "@header BENCH CSV",
"@row BENCH CSV", "@meta KEY JSON", "@error BENCH TEXT", "@done BENCH RC";
everything else is progress and is echoed.  Each row is appended to results/<run-id>/<bench>.csv
as it arrives, meta.json is rewritten as metadata arrives, and
results/latest points at the run.  results/README.md documents the files.

guest: ./run-qemu.sh --hugepages N [--hugepages-1g N] --mem SIZE -- sh -c ...
       runs the binaries one after another in one boot (docs/interfaces.md).
       --arch arm64 boots the arm64 guest (TCG) with a pool of each of its
       four sizes, and the chase and mlp model the TLB of a Neoverse N1.
native: the same binaries on the host kernel; vm.nr_hugepages (and the 1 GB
       pool) are raised for the run and restored on every exit path.

The benchmarks and backings are bench/contract.py's (from benchtool).  Each
binary maps its backings at once and takes the repetitions as the outer
loop, measuring each backing once per round, right after an untimed pass
of its own, in the order of a Williams design (bench/runner.c), so neither
drift during a run (heat, boost, load) nor the backing before favours one;
the first round's order is rotated by one more position for each benchmark
and by --rotate for the whole run (compare rotates it per round).
meta.json records the order and the machine's state around the run.
run.py writes data only; plots/render.py draws it and writes the summary.
The code is in bench/benchrun/, a module per concern (its __init__ says
which).
"""
import os
import sys

if not __package__:
    # Run as a file (python3 bench/run.py, as the READMEs show): run as the
    # module it is, with the repository root, its imports' root, on the path.
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    os.execve(sys.executable, [sys.executable, "-m", "bench.run"] + sys.argv[1:],
              dict(os.environ, PYTHONPATH=os.pathsep.join(filter(None, [
                  root, os.environ.get("PYTHONPATH")]))))
from bench import contract  # noqa: E402
from bench.benchrun.check import BadInput  # noqa: E402
from bench.benchrun.cli import main  # noqa: E402

if __name__ == "__main__":
    try:
        sys.exit(main())
    except contract.ContractError as e:
        print("bench: " + str(e), file=sys.stderr)
        sys.exit(2)
    except BadInput as e:
        print("bench/run.py: error: " + str(e), file=sys.stderr)
        sys.exit(2)
