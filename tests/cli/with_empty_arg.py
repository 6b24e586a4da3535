#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Runs COMMAND with FLAG '' appended: an empty argument, which a CMake list cannot carry.
# usage: with_empty_arg.py FLAG COMMAND [ARG...]
import os
import sys

flag, command = sys.argv[1], sys.argv[2:]
os.execvp(command[0], command + [flag, ""])
