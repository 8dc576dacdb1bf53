# SPDX-License-Identifier: GPL-2.0
"""The TLB model a run uses: named by the user (make bench MODEL=...,
bench/run.py --model) or decided on the host, where the CPU is real, and
passed to every benchmark that models (the guest's -cpu max is no real
core: under TCG it reads AMD family 15 model 107, which no preset fits).
meta.json tlb_model records the choice, where it came from and the label
every figure and summary line that uses it carries.

How the host's CPU is decided (host_model):
  1. `benchtool tlbgeometry --model auto`: vendor-family-model through
     perf's table (bench/pmu.c), the preset of the core the runner pins
     to; else, on bare metal, the geometry its CPUID leaves report.
  2. Under a hypervisor the model number is the hypervisor's to choose
     and may name an older core than the silicon (this project's Intel VM
     reads 6-A7, perf's rocketlake, yet has AMX, which no Rocket Lake
     has; its 4 KB L1 TLB knee measures about 96 entries, Golden Cove's
     count, not Ice Lake's 64).  Instruction-set flags cannot be faked
     upward (the guest could not run the instructions), so where they
     prove a newer core than the model number names (CORE_FLAGS), the
     flags decide.  A model number the flags do not contradict stands.
  3. Otherwise there is no model, said once (no_model_message) with MODEL=
     and the presets.  No borrowed preset: another core's reaches put the
     modelled knees at the wrong sizes, and a wrong number named as a
     model is still a wrong number.

Stdlib only, and runnable as a script for the Makefile's check of MODEL=
before anything is built: `python3 bench/benchrun/model.py check NAME`.
"""

import json
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))

# Each vendor's presets, oldest core first (gracemont, an E-core, and the
# Arm presets are no step on these lines).
GENERATIONS = {
    "GenuineIntel": ["haswell", "broadwell", "skylake", "icelake",
                     "goldencove"],
    "AuthenticAMD": ["zen1", "zen3", "zen4", "zen5"],
}

# (vendor, /proc/cpuinfo flag, the oldest preset whose core has it, why):
# the newest match of a vendor is the least core the flags prove.
CORE_FLAGS = [
    ("GenuineIntel", "amx_tile", "goldencove",
     "AMX, which Intel first shipped in Sapphire Rapids (Golden Cove "
     "cores)"),
    ("AuthenticAMD", "avx512_vp2intersect", "zen5",
     "AVX-512 VP2INTERSECT, which AMD first shipped in Zen 5"),
    ("AuthenticAMD", "avx512f", "zen4",
     "AVX-512, which AMD first shipped in Zen 4"),
]


def preset_names(path=os.path.join(ROOT, "bench", "tlbmodel.c")):
    """The presets of bench/tlbmodel.c's table, read from its source so
    that MODEL= is checked before anything is built (a test holds this
    equal to `benchtool presets`)."""
    with open(path) as f:
        text = f.read()
    table = text[text.index("tlb_presets[] = {"):]
    table = table[:table.index("{ NULL")]
    return re.findall(r'^\t\{ "([^"]+)"', table, re.M)


def check_model(name):
    """None when name is auto, a preset or a spec (a spec holds "=", the
    binaries check it), else the error naming the presets."""
    if name == "auto" or "=" in name or name in preset_names():
        return None
    return ("MODEL/--model '%s' is not a TLB model: name a preset (%s), "
            "a spec (bench/tlbmodel.h) or auto (each binary's own core), "
            "or leave it out for the host CPU's" % (name, ", ".join(
                preset_names())))


def no_model_message(cpu, why):
    """The one sentence a run without a model says."""
    return ("no TLB model: no preset fits this host's CPU (%s), so the "
            "run shows no modelled TLB misses. Name the nearest core with "
            "MODEL=<preset> (make bench) or --model <preset> "
            "(bench/run.py); presets: %s. Why: %s"
            % (cpu, ", ".join(preset_names()), why))


def flags_preset(vendor, flags):
    """(preset, why) the instruction-set flags prove at least, or
    (None, None)."""
    for v, flag, preset, why in CORE_FLAGS:
        if v == vendor and flag in (flags or ()):
            return preset, "its flags include %s: %s" % (flag, why)
    return None, None


def newer(vendor, a, b):
    """Whether preset a is a later core of vendor than preset b."""
    gen = GENERATIONS.get(vendor, [])
    return a in gen and (b not in gen or gen.index(a) > gen.index(b))


def auto_report(benchtool):
    """`benchtool tlbgeometry --model auto` as a dict, or None."""
    try:
        p = subprocess.run([benchtool, "tlbgeometry"], capture_output=True,
                           text=True)
        return json.loads(p.stdout) if p.returncode == 0 else None
    except (OSError, ValueError):
        return None


def cpu_name(rep):
    cpu = (rep or {}).get("cpu") or {}
    if not cpu:
        return "unidentified"
    name = "%s family %d model 0x%X" % (cpu.get("vendor", "?").strip(),
                                        cpu.get("family", 0),
                                        cpu.get("model", 0))
    perf = re.search(r"perf model (\S+),", (rep or {}).get("why", ""))
    if perf:
        name += ", perf model " + perf.group(1)
    if cpu.get("hypervisor"):
        name += ", under hypervisor " + cpu["hypervisor"]
    return name


def host_model(rep, flags):
    """The host's model from its auto report (auto_report()) and its
    /proc/cpuinfo flags: {arg, preset, source, why}; arg is what the
    binaries get (a preset, a spec, or "none")."""
    rep = rep or {}
    cpu = rep.get("cpu") or {}
    got = rep.get("model")
    name = cpu_name(rep)
    if cpu.get("hypervisor"):
        fp, fwhy = flags_preset(cpu.get("vendor"), flags)
        if fp and (got in (None, "cpuid") or newer(cpu["vendor"], fp, got)):
            return {"arg": fp, "preset": fp, "source": "host-flags",
                    "why": "the host's CPU (%s): the model number names "
                    "%s, but %s, so the geometry is %s's at least "
                    "(bench/benchrun/model.py)"
                    % (name, got or "no preset", fwhy, fp)}
    if got == "cpuid":
        spec = (rep.get("cpuid") or {}).get("spec")
        return {"arg": spec, "preset": "cpuid", "source": "host-cpuid",
                "why": "the geometry the host CPU's CPUID leaves report "
                "(%s, bare metal)" % name}
    if got:
        return {"arg": got, "preset": got, "source": "host",
                "why": "the host's CPU (%s)%s" % (name, "; the hypervisor's "
                       "model number, which its flags do not contradict"
                       if cpu.get("hypervisor") else "")}
    return {"arg": "none", "preset": None, "source": "none",
            "why": no_model_message(name, rep.get("why") or
                                    "benchtool tlbgeometry gave no report")}


def label(m):
    """What every title and summary line using the model says."""
    if not m.get("preset"):
        return "no TLB model"
    if m.get("source") == "binary":
        return "MODEL: the preset --model auto finds on the measured core, " \
            "not measured"
    what = {"host": "geometry of the host's CPU",
            "host-flags": "geometry of the host's CPU (from its flags)",
            "host-cpuid": "geometry from the host CPU's CPUID",
            "named": "geometry named by MODEL=/--model",
            "arm64": "geometry, borrowed for the arm64 guest's -cpu max"
            }.get(m.get("source"), "geometry")
    return "MODEL: %s %s, not measured" % (m["preset"], what)


def decide(model, arch, benchtool, flags, arm64_preset):
    """meta.json's tlb_model for --model model on arch: {arg, preset,
    source, why, label}.  None (not given) decides on the host (the arm64
    guest: arm64_preset); an explicit auto leaves it to each binary on the
    core it runs on (lava/job.py asks for that on a board)."""
    if model == "auto":
        m = {"arg": "auto", "preset": "auto", "source": "binary",
             "why": "--model auto: each binary resolves it on its core"}
    elif model:
        m = {"arg": model, "preset": model if "=" not in model else "custom",
             "source": "named", "why": "--model %s (MODEL=)" % model}
    elif arch == "arm64":
        m = {"arg": arm64_preset, "preset": arm64_preset, "source": "arm64",
             "why": "the arm64 guest's -cpu max is no real core"}
    else:
        m = host_model(auto_report(benchtool), flags)
    m["label"] = label(m)
    return m


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "check":
        err = check_model(sys.argv[2])
        if err:
            print(err)
        sys.exit(0)
    print("usage: model.py check NAME", file=sys.stderr)
    sys.exit(64)
