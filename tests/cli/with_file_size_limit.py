#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Runs COMMAND where no file may grow past BYTES (RLIMIT_FSIZE, SIGXFSZ ignored): a write past it
# fails with EFBIG, as one on a full disk fails with ENOSPC, at a point of the test's choosing.
# usage: with_file_size_limit.py BYTES COMMAND [ARG...]
import os
import resource
import signal
import sys

limit = int(sys.argv[1])
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # kept across exec: the write fails instead
os.execvp(sys.argv[2], sys.argv[2:])
