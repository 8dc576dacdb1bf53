# SPDX-License-Identifier: GPL-2.0
"""bench/run.py by concern, one module each (bench/run.py is the entry
point, with the same command line):

    base      the project root, sizes, the host's small text files
    profiles  the profiles: each benchmark's arguments, pools and memory
    plan      the invocations: binary, arguments and backings of each
    model     the run's TLB model: named, or decided on the host
    host      the host's state for meta.json, and its THP knobs
    pools     the hugetlb pools: sizing, raising, restoring
    rows      the binaries' line protocol into results/<run-id>/
    guest     one run-qemu.sh boot that runs the invocations
    native    the invocations on this host, and their oracles
    walk      the chase's walk cost under perf stat, after its native run
    check     a plan checked by the binaries' own rules, before anything
    cli       the command line and main()

The names below are the package's interface (tests/bench, lava/); a test
that replaces one for a call patches the module that makes the call.
"""
from .base import (GB, KB_1G, KB_2M, MB, ROOT, bracketed, read_text,
                   size_bytes)
from .profiles import (GENERIC_REACHES, GUEST_CPUS, REALPROG, REALPROG_POOL,
                       TLBREACH_BACKINGS, add_faultscale, arch_backings,
                       guest_mem, host_llc, model_reaches, override_sizes,
                       profile,
                       size_pools, streamk_profile, tlbreach_sizes)
from .plan import (backings_of, bench_args, bench_backings, binary,
                   invocations, native_binary, profile_args,
                   realprog_invocation, rotation)
from .host import (NODE_POOL, cpu_flags, git_rev, host_cpu, hypervisor,
                   loadavg, machine_state, mem_available, numa_nodes,
                   paging_state, pinned_node, qemu_version, ThpSettings)
from .pools import (fit_pool, HugePools, needs_pools, raise_pools, together,
                    wants_1g)
from .rows import (check_exits, new_run_id, report, Results, stream_lines)
from .guest import (GUEST_THP, guest_command, guest_ram_on_host_pool,
                    run_guest)
from .native import (AFTER, ORACLE_ATTEMPTS, ORACLES, chase_hop_rows,
                     check_chase_oracle, check_gups_oracle, minichase,
                     minigups, oracle_verdict, run_native)
from .walk import walk_cost
from .check import BadInput
from .cli import (ARM64_NO_REALPROG, ARM64_PRESET, RunPlan, first_meta, main,
                  parse_args, plan_run, set_arch, stop_signals)
