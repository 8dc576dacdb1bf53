# SPDX-License-Identifier: GPL-2.0
"""The labels every figure and the summary carry, from meta.json: the
caption (machine, software, run) and the timing note."""
import json
import os

import contract


def load_meta(run):
    path = os.path.join(run, "meta.json")
    try:
        with open(path) as f:
            return json.load(f), None
    except FileNotFoundError:
        return {}, "meta.json missing"
    except (OSError, ValueError) as e:
        return {}, f"meta.json unreadable: {e}"


def accelerator(meta):
    q = meta.get("qemu") or None
    if not q:
        return f"none ({meta.get('mode', 'native')})"
    accel = str(q.get("accel", "?"))
    if q.get("icount"):
        accel += " + icount"
    # an x86_64 guest's meta.json predates "arch": only arm64 is named
    guest = "arm64 guest" if meta.get("arch") == "arm64" else "guest"
    accel += f" ({q.get('version') or 'QEMU version not recorded'}, {guest})"
    hm = meta.get("host_memory")
    if isinstance(hm, dict):
        accel += f", guest RAM on host {hm.get('host_pages')} pages"
    return accel


def caption_of(meta):
    """Two lines: the machine, then the software and run."""
    caption = " | ".join([
        f"host: {meta.get('host_cpu', 'not recorded')}",
        f"accelerator: {accelerator(meta)}",
    ]) + "\n" + " | ".join([
        f"kernel: {meta.get('kernel', 'not recorded')}",
        f"series: {meta.get('series_id', 'not recorded')}",
        f"profile: {meta.get('profile', 'not recorded')}",
        f"run: {meta.get('run_id', 'not recorded')}",
    ])
    machine = meta.get("machine") or {}
    if machine.get("hypervisor") and meta.get("timing_source") in ("native", "kvm"):
        caption += "\n" + contract.HYPERVISOR_NOTE
    return caption


def timing_note(meta):
    """Hardware timings need no warning on the figure; the rest say what they are."""
    src = meta.get("timing_source")
    return "" if src == "native" else contract.timing_label(src)
