# SPDX-License-Identifier: GPL-2.0
"""Run gnuplot for each figure job; the labels are passed as arguments,
never as gnuplot code."""
import os
import subprocess
import sys

from bench import contract

PLOTS = os.path.dirname(os.path.abspath(__file__))


def run_gnuplot(script, args):
    cmd = ["gnuplot", "-c", os.path.join(PLOTS, script)] + [str(a) for a in args]
    p = subprocess.run(cmd, capture_output=True, text=True)
    return p.returncode, (p.stdout + p.stderr).strip()


def draw(run, caption, jobs, notes):
    """Runs gnuplot for each Job: (figures drawn, any failed, any output)."""
    figures, failed, noisy = [], False, False
    for job in jobs:
        colours = " ".join(contract.load().colour(b) for b in job.backings)
        rc, text = run_gnuplot(job.script, [
            job.data, os.path.join(run, job.name), caption, job.timing,
            " ".join(job.backings), job.extra, job.hop_col, job.hop, colours])
        if text:
            noisy = True
            print(f"render: gnuplot {job.script} on {job.data}:\n{text}", file=sys.stderr)
        if rc != 0:
            failed = True
            notes.append(f"{job.name} failed: gnuplot exit status {rc}")
        else:
            figures.append(job.name)
    return figures, failed, noisy
