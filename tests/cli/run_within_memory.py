#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Runs COMMAND and fails (exit 3, after the command's own output) when its peak resident memory
# passed MIB mebibytes: a reader's cost checked against what its input should cost. Resident
# memory, not an address-space limit (ulimit -v), so that sanitizer builds, which reserve
# terabytes of address space, are judged alike.
# usage: run_within_memory.py MIB COMMAND [ARG...]
import resource
import subprocess
import sys

limit_mib, command = int(sys.argv[1]), sys.argv[2:]
rc = subprocess.call(command)
peak_mib = resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024
if peak_mib > limit_mib:
    print(f"tprimat test: {command[0]} peaked at {peak_mib:.0f} MiB resident, over {limit_mib} MiB",
          file=sys.stderr)
    sys.exit(3)
sys.exit(rc)
