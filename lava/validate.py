#!/usr/bin/python3
# SPDX-License-Identifier: GPL-2.0
"""Checks LAVA job definitions against LAVA's own schema (lava_common, as
lava-server does on submission), inline test definitions included.

    /usr/bin/python3 lava/validate.py JOB.yaml...

Debian installs lava_common for /usr/bin/python3 (make deps), which need
not be the python3 first on PATH.  Exit 0: all valid; 1: one is not (each
printed with LAVA's message); 2: lava_common is missing.
"""
import sys

import yaml

try:
    from lava_common.schemas import validate
    from lava_common.schemas.test.testdef import validate as validate_testdef
except ImportError:
    print("lava-validate: no lava_common for %s: run 'make deps' "
          "(Debian package lava-common)" % sys.executable, file=sys.stderr)
    sys.exit(2)


def check(path):
    with open(path) as f:
        data = yaml.safe_load(f)
    validate(data, strict=True)
    for action in data["actions"]:
        for d in action.get("test", {}).get("definitions", []):
            if d["from"] == "inline":
                validate_testdef(d["repository"])


def main(paths):
    bad = 0
    for path in paths:
        try:
            check(path)
        except Exception as e:  # voluptuous.Invalid and YAML errors alike
            print("lava-validate: %s: %s" % (path, e), file=sys.stderr)
            bad += 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
