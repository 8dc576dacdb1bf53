# SPDX-License-Identifier: GPL-2.0
"""The labels every figure and the summary carry, from meta.json: the
caption (machine, software, run) and the timing note."""
import json
import os
import re

from bench import contract

# CPUID's vendor strings and hypervisor signatures, in words.
VENDORS = {"GenuineIntel": "Intel", "AuthenticAMD": "AMD", "HygonGenuine": "Hygon",
           "CentaurHauls": "Centaur", "  Shanghai  ": "Zhaoxin"}
HYPERVISORS = {"TCGTCGTCGTCG": "TCG emulation (QEMU)", "KVMKVMKVM": "KVM",
               "Microsoft Hv": "Hyper-V", "VMwareVMware": "VMware", "XenVMMXenVMM": "Xen",
               "bhyve bhyve ": "bhyve", "ACRNACRNACRN": "ACRN", "VBoxVBoxVBox": "VirtualBox"}
# perf's VENDOR-FAMILY-MODEL[-STEPPING]: family decimal, model and stepping hex.
CPUID_RE = re.compile(r"\b(%s)-(\d+)-([0-9A-Fa-f]+)(?:-([0-9A-Fa-f]+))?\b"
                      % "|".join(v for v in VENDORS if v.strip() == v))
HYPERVISOR_RE = re.compile(r"\bhypervisor (%s)" % "|".join(
    re.escape(h) for h in HYPERVISORS))


def in_words(text):
    """text with perf's CPU ids (AuthenticAMD-15-6B-1) and CPUID hypervisor
    signatures (TCGTCGTCGTCG) said in words: "AMD CPU (family 15 model 107,
    stepping 1)", "TCG emulation (QEMU)"."""
    def cpu(m):
        words = f"{VENDORS[m.group(1)]} CPU (family {int(m.group(2))} model {int(m.group(3), 16)}"
        if m.group(4):
            words += f", stepping {int(m.group(4), 16)}"
        return words + ")"
    text = CPUID_RE.sub(cpu, text)
    return HYPERVISOR_RE.sub(lambda m: HYPERVISORS[m.group(1)], text)


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
