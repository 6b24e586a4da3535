#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Where `tprimat bench` redraws its progress line in place (\r and an erase-line code): with
# --progress-redraw on a terminal only. By default a terminal gets a line a step (its history
# kept); output to a file, and a rank's output under mpirun (which gives the rank a
# pseudo-terminal whatever mpirun's own stdout is), are plain lines even with the flag.
# usage: console_run.py TPRIMAT WORKDIR [LAUNCHER ARG...]
# Without a launcher: stdout a file (plain), a terminal (plain), a terminal with the flag
# (redrawn: the check's positive control), and a terminal as a rank of mpirun sees it (plain).
# With one: `LAUNCHER tprimat ... > file`.
import os
import pathlib
import pty
import shutil
import subprocess
import sys

REDRAW = ("\r", "\x1b")


def bench(tprimat: str, out_dir: str, ranks: int, redraw: bool = True) -> list[str]:
    return [tprimat, "bench", "--model", "tiny", "--seq", "32", "--steps", "3", "--warmup-steps",
            "1", "--gbs", str(ranks), "--output-dir", out_dir] + (
                ["--progress-redraw"] if redraw else [])


def to_file(cmd: list[str], work: pathlib.Path, name: str) -> str:
    path = work / f"{name}.txt"
    with open(path, "w") as f:
        rc = subprocess.run(cmd, cwd=work, stdout=f, stderr=subprocess.PIPE, text=True).returncode
    text = path.read_text()
    if rc != 0:
        raise SystemExit(f"FAIL: {name}: exit {rc}\n{text}")
    return text


def on_terminal(cmd: list[str], work: pathlib.Path, env: dict[str, str]) -> str:
    """stdout on a pseudo-terminal; returns what the terminal received."""
    master, slave = pty.openpty()
    proc = subprocess.Popen(cmd, cwd=work, stdout=slave, stderr=subprocess.DEVNULL,
                            env={**os.environ, **env})
    os.close(slave)
    chunks = []
    while True:
        try:
            data = os.read(master, 65536)
        except OSError:  # EIO: the process closed its side
            break
        if not data:
            break
        chunks.append(data)
    os.close(master)
    if proc.wait() != 0:
        raise SystemExit(f"FAIL: {cmd} on a terminal exited {proc.returncode}")
    # A terminal turns \n into \r\n: what counts is a \r that is not before a \n.
    return b"".join(chunks).decode(errors="replace").replace("\r\n", "\n")


def check(name: str, text: str, redrawn: bool) -> bool:
    has = [c for c in REDRAW if c in text]
    if bool(has) != redrawn:
        print(f"FAIL: {name}: {'no' if redrawn else repr(has)} redraw codes, expected "
              f"{'some' if redrawn else 'none'}\n{text[-2000:]!r}")
        return False
    if "step 3/3 " not in text:
        print(f"FAIL: {name}: no 'step 3/3' line\n{text[-2000:]!r}")
        return False
    print(f"ok: {name}: {'redrawn' if redrawn else 'plain lines'}")
    return True


def main() -> int:
    tprimat, work, launcher = sys.argv[1], pathlib.Path(sys.argv[2]), sys.argv[3:]
    tprimat = str(pathlib.Path(tprimat).resolve())
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if launcher:
        text = to_file(launcher + bench(tprimat, "mpi", 2), work, "mpirun")
        return 0 if check("mpirun ... > file", text, redrawn=False) else 1
    ok = check("stdout a file", to_file(bench(tprimat, "file", 1), work, "file"), redrawn=False)
    terminal = {"TERM": "xterm"}
    ok &= check("a terminal", on_terminal(bench(tprimat, "lines", 1, redraw=False), work, terminal),
                redrawn=False)
    ok &= check("a terminal with --progress-redraw",
                on_terminal(bench(tprimat, "tty", 1), work, terminal), redrawn=True)
    # What a rank of Open MPI's mpirun sees: a pseudo-terminal, and its launcher's variables.
    rank = {**terminal, "OMPI_COMM_WORLD_SIZE": "1", "OMPI_COMM_WORLD_RANK": "0"}
    ok &= check("a rank's terminal under mpirun",
                on_terminal(bench(tprimat, "rank", 1), work, rank), redrawn=False)
    ok &= check("a dumb terminal",
                on_terminal(bench(tprimat, "dumb", 1), work, {"TERM": "dumb"}), redrawn=False)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
