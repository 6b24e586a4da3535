#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Writes a gzip Chrome trace that is small on disk and large once inflated: MIB mebibytes of
# instant events (kept by no summary), as a hostile or runaway profiler might write.
# usage: make_trace_bomb.py OUT.json.gz MIB
import gzip
import sys

out, mib = sys.argv[1], int(sys.argv[2])
event = b'{"ph": "i", "name": "tick", "pid": 0, "tid": 0, "ts": 1},\n'
chunk = event * (1024 * 1024 // len(event))
with gzip.open(out, "wb", compresslevel=1) as f:
    f.write(b'{"traceEvents": [\n')
    for _ in range(mib):
        f.write(chunk)
    f.write(b'{"ph": "X", "cat": "kernel", "name": "k", "pid": 0, "tid": 7, "ts": 2, "dur": 1}]}\n')
