#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Drives a real `tprimat bench` from outside, the ways a result could be lost, and checks that
# none is: a signal once two steps are measured (exit 128 + signo, a schema-valid result marked
# incomplete that names the signal and holds the steps measured, the whole log under its final
# name), a second run into the same output directory, and the lock a killed run leaves behind.
# usage: interrupt_run.py TPRIMAT SCHEMA WORKDIR CASE [LAUNCHER ARG...]
# CASE: SIGINT | SIGTERM | SIGHUP    the signal, sent after step 2
#       SIGPIPE                      the reader of stdout closes the pipe after step 2 (| head)
#       nohup                        SIGHUP ignored from the start, as nohup does: the run goes on
#                                    past a SIGHUP, and a SIGINT stops it then
#       concurrent                   a second run (under LAUNCHER if given) into the same
#                                    --output-dir while the first is stopped (SIGSTOP): refused,
#                                    exit 2, naming the first; the first, continued, completes
#                                    with its result and its log
#       stale_lock                   a run killed by SIGKILL leaves its lock file: the next run
#                                    is not blocked by it
#       parallel_all_compare         SIGINT while --parallel all's closing comparison draws (a
#                                    slow gnuplot): exit 130 at once, that gnuplot stopped, the
#                                    strategies' results intact
# With a launcher and a signal (mpirun -np 2 ...), the signal goes to the launcher, which passes
# it on to the ranks as it sees fit (Open MPI sends them SIGTERM): every rank must stop, none may
# hang, and rank 0 writes the result of two DP ranks; the launcher's own exit code only has to be
# non-zero.
import json
import os
import pathlib
import shutil
import signal
import subprocess
import sys
import threading
import time

STEPS = 1000  # far more than can run before the signal: the run must be cut short
WAIT_S = 60   # for two measured steps on a loaded 2-core machine
RESULT = "benchmark_cpu_tiny.json"
LOG = "training_tiny.log"
LOCKS = [".benchmark_cpu_tiny.json.lock", ".training_tiny.log.lock"]


def fail(message: str, out: str = "", err: str = "") -> int:
    print(f"FAIL: {message}\n--- stdout (tail)\n{out[-3000:]}\n--- stderr\n{err}")
    return 1


class Bench:
    """A tprimat bench in WORKDIR, its stdout read by a thread until `stop_reading_at_step`."""

    def __init__(self, tprimat: str, work: pathlib.Path, launcher: list[str], args: list[str],
                 ignore_hup: bool = False, stop_reading_at_step: int | None = None):
        ranks = 2 if launcher else 1
        cmd = launcher + [tprimat, "bench", "--model", "tiny", "--seq", "128", "--warmup-steps",
                          "1", "--gbs", str(ranks), "--output-dir", "out"] + args
        self.steps = int(args[args.index("--steps") + 1])

        def dispositions() -> None:  # whatever the test driver left: a shell's defaults
            signal.signal(signal.SIGHUP, signal.SIG_IGN if ignore_hup else signal.SIG_DFL)
            for s in (signal.SIGINT, signal.SIGTERM, signal.SIGPIPE):
                signal.signal(s, signal.SIG_DFL)

        self.proc = subprocess.Popen(cmd, cwd=work, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                                     text=True, preexec_fn=dispositions)
        self.lines: list[str] = []
        self.two_measured = threading.Event()
        self.stop_at = stop_reading_at_step
        self.reader = threading.Thread(target=self._read)
        self.reader.start()

    def _read(self) -> None:  # drains stdout so the run never blocks on a full pipe
        for line in self.proc.stdout:
            self.lines.append(line)
            if f"step 2/{self.steps} " in line:
                self.two_measured.set()
                if self.stop_at is not None:
                    return

    def out(self) -> str:
        return "".join(self.lines)

    def kill(self) -> None:
        self.proc.kill()
        self.proc.wait()
        self.reader.join()

    def finish(self, timeout: float) -> tuple[int | None, str, str]:
        """(exit code or None when it was still running after `timeout`, stdout, stderr)."""
        try:
            rc = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.kill()
            return None, self.out(), self.proc.stderr.read()
        self.reader.join()
        return rc, self.out(), self.proc.stderr.read()


def check_interrupted(work: pathlib.Path, schema: str, seen: list[str], ranks: int, out: str,
                      err: str) -> int:
    """The result and log a signal left: incomplete, naming the signal, the steps measured."""
    if not any(f"interrupted by {s}" in err for s in seen):
        return fail(f"stderr does not name {' or '.join(seen)}", out, err)
    result = work / "out" / RESULT
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
    log = work / "out" / LOG
    if not log.exists() or "interrupted by SIG" not in log.read_text():
        return fail(f"{log} missing or without the interruption", out, err)
    leftovers = [p.name for p in (work / "out").iterdir() if p.name not in (RESULT, LOG)]
    if leftovers:
        return fail(f"files left behind: {leftovers}", out, err)
    validate = pathlib.Path(__file__).with_name("validate_results.py")
    if subprocess.run([sys.executable, str(validate), schema, str(work), "1"]).returncode != 0:
        return fail("the result does not validate against the schema", out, err)
    print(f"ok: {len(doc['raw_step_times'])} measured steps kept, error {doc['error']!r}")
    return 0


def stopped_by(tprimat: str, schema: str, work: pathlib.Path, case: str,
               launcher: list[str]) -> int:
    """A run that a signal (or a closed pipe on its stdout) stops after two measured steps."""
    ranks = 2 if launcher else 1
    pipe = case == "SIGPIPE"
    nohup = case == "nohup"
    bench = Bench(tprimat, work, launcher, ["--steps", str(STEPS)], ignore_hup=nohup,
                  stop_reading_at_step=2 if pipe else None)
    if not bench.two_measured.wait(WAIT_S):
        bench.kill()
        return fail(f"no 'step 2/{STEPS}' line within {WAIT_S} s", bench.out(),
                    bench.proc.stderr.read())
    sent = time.monotonic()
    if pipe:
        bench.reader.join()
        bench.proc.stdout.close()  # the next progress line meets a pipe nobody reads
        name, signo = "SIGPIPE", signal.SIGPIPE
    elif nohup:
        bench.proc.send_signal(signal.SIGHUP)
        time.sleep(1.0)
        if bench.proc.poll() is not None:
            return fail(f"an ignored SIGHUP stopped the run (exit {bench.proc.returncode})",
                        bench.out(), bench.proc.stderr.read())
        name, signo = "SIGINT", signal.SIGINT
        bench.proc.send_signal(signo)
    else:
        name, signo = case, getattr(signal, case)
        bench.proc.send_signal(signo)
    rc, out, err = bench.finish(WAIT_S)
    if rc is None:
        return fail(f"still running {WAIT_S} s after {case}", out, err)
    print(f"{case} after step 2; tprimat exited {rc} after {time.monotonic() - sent:.2f} s")

    # What the ranks saw: the signal itself, or what the launcher made of it.
    seen = [name] if not launcher else ["SIGINT", "SIGTERM"]
    if not launcher and rc != 128 + signo:
        return fail(f"exit code {rc}, expected {128 + signo} (128 + {name})", out, err)
    if launcher and rc == 0:
        return fail(f"{launcher[0]} exited 0 after {case}", out, err)
    return check_interrupted(work, schema, seen, ranks, out, err)


def concurrent(tprimat: str, work: pathlib.Path, launcher: list[str]) -> int:
    """A second run into the output directory of a running one is refused, and harms nothing."""
    steps = 12
    first = Bench(tprimat, work, [], ["--steps", str(steps), "--seed", "1"])
    if not first.two_measured.wait(WAIT_S):
        first.kill()
        return fail(f"no 'step 2/{steps}' line within {WAIT_S} s", first.out())
    # Stopped, the first run is alive and holds its output, but runs no step until SIGCONT: the
    # second starts while it runs however fast either is, and the first need not be long.
    first.proc.send_signal(signal.SIGSTOP)
    try:
        second = Bench(tprimat, work, launcher, ["--steps", "3", "--seed", "2"])
        rc2, out2, err2 = second.finish(WAIT_S)
    finally:
        first.proc.send_signal(signal.SIGCONT)
    if first.proc.poll() is not None:
        return fail("the first run ended before the second was refused: make it longer",
                    first.out())
    print(f"second run exited {rc2}: {err2.strip()}")
    if rc2 is None:
        first.kill()
        return fail(f"the second run still ran {WAIT_S} s later (a rank waiting?)", out2, err2)
    held = str(pathlib.Path("out") / RESULT)
    if (rc2 != 2 if not launcher else rc2 == 0):
        first.kill()
        return fail(f"the second run exited {rc2}, expected 2", out2, err2)
    if (f"{held} is being written by another tprimat run (pid {first.proc.pid} " not in err2
            or "--seed 1" not in err2):
        first.kill()
        return fail("the refusal does not name the path held, the first run's pid and command",
                    out2, err2)
    if "step 1/" in out2:
        first.kill()
        return fail("the second run ran steps", out2, err2)
    rc1, out1, err1 = first.finish(4 * WAIT_S)
    if rc1 != 0:
        return fail(f"the first run exited {rc1}", out1, err1)
    doc = json.loads((work / "out" / RESULT).read_text())
    if doc.get("complete") is not True or doc["training_config"]["seed"] != 1:
        return fail("the result is not the first run's, complete", out1, err1)
    if len(doc["raw_step_times"]) != steps:
        return fail(f"{len(doc['raw_step_times'])} measured steps, expected {steps}", out1, err1)
    log = (work / "out" / LOG).read_text()
    if f"step {steps}/{steps} " not in log or "--seed 2" in log:
        return fail("the log is not the first run's whole log", out1, err1)
    leftovers = sorted(p.name for p in (work / "out").iterdir() if p.name not in (RESULT, LOG))
    if leftovers:
        return fail(f"files left behind: {leftovers}", out1, err1)
    print("ok: second run refused, first run's result and log intact")
    return 0


def stale_lock(tprimat: str, work: pathlib.Path) -> int:
    """The lock file of a run killed by SIGKILL blocks nobody: only a live holder counts."""
    killed = Bench(tprimat, work, [], ["--steps", str(STEPS)])
    if not killed.two_measured.wait(WAIT_S):
        killed.kill()
        return fail(f"no 'step 2/{STEPS}' line within {WAIT_S} s", killed.out())
    pid = killed.proc.pid
    killed.kill()
    lock = work / "out" / LOCKS[0]
    if not lock.exists() or f"pid {pid} " not in lock.read_text():
        return fail(f"the killed run left no lock file naming it: nothing tested ({lock})")
    rc, out, err = Bench(tprimat, work, [], ["--steps", "3"]).finish(WAIT_S)
    if rc != 0:
        return fail(f"the next run exited {rc}", out, err)
    doc = json.loads((work / "out" / RESULT).read_text())
    if doc.get("complete") is not True:
        return fail("the next run's result is not complete", out, err)
    leftovers = sorted(p.name for p in (work / "out").iterdir() if p.name not in (RESULT, LOG))
    if leftovers:
        return fail(f"files left behind: {leftovers}", out, err)
    print(f"ok: the lock file of killed pid {pid} did not block the next run")
    return 0


def parallel_all_compare(tprimat: str, work: pathlib.Path) -> int:
    """SIGINT while --parallel all's closing comparison draws: exit 130 without waiting for the
    gnuplot, which is stopped; the results intact."""
    marker = work / "drawing"
    fake = work / "slow_gnuplot"
    fake.write_text(f"#!/bin/sh\necho $$ > '{marker}.tmp'\nmv '{marker}.tmp' '{marker}'\n"
                    "exec sleep 120\n")
    fake.chmod(0o755)
    env = dict(os.environ, TPRIMAT_GNUPLOT=str(fake), TPRIMAT_GNUPLOT_TIMEOUT="300")
    proc = subprocess.Popen([tprimat, "bench", "--model", "tiny", "--parallel", "all", "--steps",
                             "2", "--seq", "32", "--output-dir", "res"], cwd=work, env=env,
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL))
    start = time.monotonic()
    while not marker.exists() and proc.poll() is None and time.monotonic() - start < 4 * WAIT_S:
        time.sleep(0.05)
    if not marker.exists():
        proc.kill()
        out, err = proc.communicate()
        return fail("the closing comparison never started drawing", out, err)
    gnuplot = int(marker.read_text())
    proc.send_signal(signal.SIGINT)
    signalled = time.monotonic()
    try:
        out, err = proc.communicate(timeout=WAIT_S)
    except subprocess.TimeoutExpired:
        proc.kill()
        out, err = proc.communicate()
        return fail("still running after SIGINT", out, err)
    if proc.returncode != 130:
        return fail(f"exited {proc.returncode}, expected 130 (128 + SIGINT)", out, err)
    if time.monotonic() - signalled > 20:
        return fail("waited for the drawing gnuplot (120 s) instead of stopping it", out, err)
    try:
        os.kill(gnuplot, 0)
        os.kill(gnuplot, signal.SIGKILL)
        return fail(f"the drawing gnuplot (pid {gnuplot}) still runs after tprimat exited", out, err)
    except ProcessLookupError:
        pass
    doc = json.loads((work / "res-03" / RESULT).read_text())
    if doc.get("complete") is not True:
        return fail("the strategy's result is not complete", out, err)
    print("ok: SIGINT during the closing comparison stops its gnuplot and ends the command with "
          "130, results intact")
    return 0


def main() -> int:
    tprimat, schema, work, case = sys.argv[1], sys.argv[2], pathlib.Path(sys.argv[3]), sys.argv[4]
    launcher = sys.argv[5:]
    tprimat = str(pathlib.Path(tprimat).resolve())  # the run's cwd is WORKDIR
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    if case == "concurrent":
        return concurrent(tprimat, work, launcher)
    if case == "stale_lock":
        return stale_lock(tprimat, work)
    if case == "parallel_all_compare":
        return parallel_all_compare(tprimat, work)
    if case in ("SIGINT", "SIGTERM", "SIGHUP", "SIGPIPE", "nohup"):
        return stopped_by(tprimat, schema, work, case, launcher)
    return fail(f"unknown case {case}")


if __name__ == "__main__":
    sys.exit(main())
