#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Runs COMMAND with FLAG 'caf\xe9' appended: a value in Latin-1, not UTF-8, which a CMake list
# cannot carry.
# usage: with_latin1_arg.py FLAG COMMAND [ARG...]
import os
import sys

flag, command = sys.argv[1], sys.argv[2:]
os.execvp(command[0], [os.fsencode(c) for c in command] + [os.fsencode(flag), b"caf\xe9"])
