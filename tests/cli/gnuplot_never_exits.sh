#!/bin/sh
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# A gnuplot that never finishes (hung on a font server, a full pipe): tprimat must stop it.
exec sleep 600
