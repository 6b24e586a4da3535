#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Stops a real `tprimat bench` with a signal once it has measured two steps, then checks what it
# left: exit code 128 + signo, a schema-valid result marked incomplete that names the signal and
# holds the steps measured, and the whole log under its final name.
# usage: interrupt_run.py TPRIMAT SCHEMA WORKDIR SIGINT|SIGTERM [LAUNCHER ARG...]
# With a launcher (mpirun -np 2 ...), the signal goes to the launcher, which passes it on to the
# ranks as it sees fit (Open MPI sends them SIGTERM): every rank must stop, none may hang, and
# rank 0 writes the result of two DP ranks; the launcher's own exit code only has to be non-zero.
import json
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

STEPS = 1000  # far more than can run before the signal: the run must be cut short
WAIT_S = 60   # for two measured steps on a loaded 2-core machine


def fail(message: str, out: str = "", err: str = "") -> int:
    print(f"FAIL: {message}\n--- stdout (tail)\n{out[-3000:]}\n--- stderr\n{err}")
    return 1


def main() -> int:
    tprimat, schema, work, name = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4]
    launcher = sys.argv[5:]
    tprimat = str(pathlib.Path(tprimat).resolve())  # the run's cwd is WORKDIR
    signo = getattr(signal, name)
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    ranks = 2 if launcher else 1
    cmd = launcher + [tprimat, "bench", "--model", "tiny", "--seq", "128", "--steps", str(STEPS),
                      "--warmup-steps", "1", "--gbs", str(ranks), "--output-dir", "out"]
    proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                            text=True)
    lines: list[str] = []
    two_measured = threading.Event()

    def read_stdout() -> None:  # drains stdout so the run never blocks on a full pipe
        for line in proc.stdout:
            lines.append(line)
            if f"step 2/{STEPS} " in line:  # under mpirun, after a terminal's \033[K
                two_measured.set()

    reader = threading.Thread(target=read_stdout)
    reader.start()
    if not two_measured.wait(WAIT_S):
        proc.kill()
        reader.join()
        return fail(f"no 'step 2/{STEPS}' line within {WAIT_S} s", "".join(lines),
                    proc.stderr.read())
    sent = time.monotonic()
    proc.send_signal(signo)
    try:
        rc = proc.wait(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        reader.join()
        return fail(f"still running {WAIT_S} s after {name}", "".join(lines), proc.stderr.read())
    reader.join()
    out, err = "".join(lines), proc.stderr.read()
    print(f"{name} sent after step 2; tprimat exited {rc} after {time.monotonic() - sent:.2f} s")

    # What the ranks saw: the signal itself, or what the launcher made of it.
    seen = [name] if not launcher else ["SIGINT", "SIGTERM"]
    if not launcher and rc != 128 + signo:
        return fail(f"exit code {rc}, expected {128 + signo} (128 + {name})", out, err)
    if launcher and rc == 0:
        return fail(f"{launcher[0]} exited 0 after {name}", out, err)
    if not any(f"interrupted by {s}" in err for s in seen):
        return fail(f"stderr does not name {' or '.join(seen)}", out, err)
    result = work / "out" / "benchmark_cpu_tiny.json"
    if not result.exists():
        return fail(f"{result} was not written", out, err)
    doc = json.loads(result.read_text())
    checks = [
        (doc.get("complete") is False, "complete is not false"),
        (doc.get("error") in [f"interrupted by {s}" for s in seen],
         f"error is {doc.get('error')!r}"),
        (doc["parallelism_config"]["data_parallel_size"] == ranks, "not the asked DP"),
        (len(doc.get("raw_step_times", [])) >= 2, "fewer than the 2 measured steps seen"),
        (len(doc.get("raw_step_times", [])) < STEPS, "the run was not cut short"),
        (len(doc.get("raw_loss_values", [])) == len(doc.get("raw_step_times", [])),
         "losses and step times differ in length"),
        (doc["training_config"]["measured_steps"] == STEPS, "measured_steps is not the asked count"),
    ]
    for ok, what in checks:
        if not ok:
            return fail(what, out, err)
    log = work / "out" / "training_tiny.log"
    if not log.exists() or "interrupted by SIG" not in log.read_text():
        return fail(f"{log} missing or without the interruption", out, err)
    leftovers = [p.name for p in (work / "out").iterdir()
                 if p.name not in ("benchmark_cpu_tiny.json", "training_tiny.log")]
    if leftovers:
        return fail(f"files left behind: {leftovers}", out, err)
    validate = pathlib.Path(__file__).with_name("validate_results.py")
    if subprocess.run([sys.executable, str(validate), schema, str(work), "1"]).returncode != 0:
        return fail("the result does not validate against the schema", out, err)
    print(f"ok: {len(doc['raw_step_times'])} measured steps kept, error {doc['error']!r}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
