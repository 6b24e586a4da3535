#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Validates every benchmark_*.json below a directory against schema/result.schema.json.
import json
import pathlib
import sys

import jsonschema


def main() -> int:
    schema_path, root, least = sys.argv[1], pathlib.Path(sys.argv[2]), int(sys.argv[3])
    schema = json.loads(pathlib.Path(schema_path).read_text())
    jsonschema.Draft202012Validator.check_schema(schema)
    validator = jsonschema.Draft202012Validator(schema)
    files = sorted(root.rglob("benchmark_*.json"))
    bad = 0
    for f in files:
        errors = list(validator.iter_errors(json.loads(f.read_text())))
        for e in errors:
            print(f"{f}: {'/'.join(map(str, e.absolute_path))}: {e.message}")
        bad += bool(errors)
        if not errors:
            print(f"{f}: valid")
    if len(files) < least:
        print(f"only {len(files)} result files under {root}, expected at least {least}")
        return 1
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
