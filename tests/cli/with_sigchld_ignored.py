#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Runs a command with SIGCHLD ignored, as some job runners and `nohup`-like wrappers leave it: the
# kernel then reaps children itself, and a waitpid loop that retries ECHILD spins forever.
# usage: with_sigchld_ignored.py COMMAND [ARG...]
import os
import signal
import sys

signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # kept across exec
os.execvp(sys.argv[1], sys.argv[1:])
