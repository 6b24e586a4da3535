#!/usr/bin/env python3
# SPDX-License-Identifier: Apache-2.0
# SPDX-FileCopyrightText: 2026 tprimat authors
# Checks a documentation page: every relative link resolves and every command it shows runs.
"""Checks README.md and the docs/ pages: links resolve, commands run.

Usage: check_docs.py --tprimat BUILD/apps/tprimat/tprimat [--repo DIR] [--work-dir DIR] PAGE...

The convention the pages follow (docs/development.md tells writers the same):

Links. Every relative link or image, `[text](path)`, `[text](path#anchor)`, `[text](#anchor)`
and `[label]: path`, must name a file or folder of the repository; an anchor must be a heading of
the markdown file it points into, spelled as GitHub spells it (lower case, punctuation dropped,
spaces to hyphens, `-1`, `-2` for repeats). Web addresses are not fetched. README.md and
docs/README.md must each link every page of docs/, and README.md stays a front page (at most
FRONT_PAGE_MAX_LINES lines).

Commands. Only fenced blocks hold commands; inline code is prose. A block's info string says
what the checker does with it:

  sh           Each line (a trailing backslash joins the next) runs as shown, with bash, and must
               exit 0, or the code its comment names: `tprimat plan --model qwen --tp 7  # exit 2`.
               `tprimat` and `build/apps/tprimat/tprimat` are the binary under test; `mpirun`
               runs (as root, and with more ranks than cores). Lines without tprimat
               (`printf ... > docs.jsonl`) run too: they make a command's input.
  console      The same, for the lines that start with `$ `; the other lines are output, not
               compared (they hold timings and machine names).
  sh gpu,      What this CPU machine cannot run: a GPU, several GPUs or nodes, a downloaded
  console gpu  checkpoint. A `tprimat bench` or `tprimat plan` line is checked as `tprimat plan`
               with the flags plan takes, for the GPU NVIDIA_DEVICE names (`--backend hip`:
               AMD_DEVICE), with `--num-gpus N` from an `mpirun -np N` or `srun` prefix: every
               input check, nothing run. The flags plan does not take, and `--backend`, which the
               planned device replaces, are dropped and named in the output; they must still be
               flags of `tprimat bench`. Another subcommand is checked by its name and flags
               against its `--help`. Lines without tprimat run as in `sh`.
  sh skip      Shown, never run: builds, installs, scripts that take minutes. It may not hold a
               tprimat command: those are always checked.

Any other fence (text, json, cpp, cmake, none) is never run and may not hold a tprimat command
either; `bash`, `shell` and `zsh` fences are refused: say which of the above is meant.

Each block runs in a fresh scratch folder, its commands in order, so a block can make a file and
read it back. Relative paths a block names that exist in the repository (`docs/results/...`,
`tests/report/fixtures/...`) are copied into the scratch folder first, so commands read the
committed files and write where they like without touching the tree.

Exit status: 0 when the pages are fine, 1 with one `FAIL page:line: what` line per problem.
"""
import argparse
import html
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.parse

# The front page stays a front page (issue 34): the rest belongs in docs/.
FRONT_PAGE_MAX_LINES = 200
# A command shown in the docs is a quick one; a run past this is a failure, not a wait.
COMMAND_TIMEOUT_S = 180
# The planned GPUs of `sh gpu` blocks: what the docs' GPU commands were measured or built for.
NVIDIA_DEVICE = ("NVIDIA H100 80GB HBM3", "79.1")
AMD_DEVICE = ("AMD Instinct MI300X", "191.5")
# Programs a `sh` block must not run: they build, install or take minutes (use `sh skip`).
NOT_RUN_HERE = {"cmake", "ctest", "ninja", "make", "apt", "apt-get", "sudo", "git", "pip",
                "pip3", "nvcc", "hipcc", "docker", "gnuplot"}
# Programs a line may put before tprimat. Those that run here run in a `sh` block (mpirun on the
# CPU backend's ranks); the others need a GPU or a cluster (`sh gpu`, where mpirun's and srun's
# rank counts become --num-gpus).
RUN_HERE = {"mpirun", "mpiexec", "nohup", "env", "time"}
LAUNCHERS = RUN_HERE | {"srun", "nsys", "compute-sanitizer"}
# Repository paths that are build products, never committed inputs.
UNTRACKED_ROOTS = re.compile(r"^(build|output|install)")


class Page:
    """One markdown file: its lines, fenced blocks, headings' anchors and links."""

    def __init__(self, path, repo):
        self.path = path
        self.rel = os.path.relpath(path, repo)
        with open(path, encoding="utf-8") as f:
            self.lines = f.read().split("\n")
        if self.lines and self.lines[-1] == "":
            self.lines.pop()
        self.blocks = []   # (first line number, info words, [(line number, text)])
        self.links = []    # (line number, target)
        self.anchors = set()
        self._parse()

    def _parse(self):
        fence = None
        seen = {}
        for number, line in enumerate(self.lines, start=1):
            stripped = line.lstrip()
            indent = len(line) - len(stripped)
            if fence is None:
                m = re.match(r"(`{3,}|~{3,})(.*)$", stripped) if indent <= 3 else None
                if m:
                    fence = m.group(1)
                    self.blocks.append((number, m.group(2).strip().split(), []))
                    continue
                heading = re.match(r"#{1,6}\s+(.*?)\s*#*\s*$", stripped) if indent <= 3 else None
                if heading:
                    slug = github_slug(heading.group(1))
                    count = seen.get(slug, 0)
                    seen[slug] = count + 1
                    self.anchors.add(slug if count == 0 else f"{slug}-{count}")
                for m in re.finditer(r"""<a\s[^>]*(?:name|id)\s*=\s*["']([^"']+)["']""", line):
                    self.anchors.add(m.group(1))
                for target in links_in(line):
                    self.links.append((number, target))
            elif stripped.startswith(fence[0] * len(fence)) and stripped.strip(fence[0]) == "":
                fence = None
            else:
                self.blocks[-1][2].append((number, line))
        if fence is not None:
            self.blocks[-1] = (self.blocks[-1][0], ["unclosed"], self.blocks[-1][2])


def github_slug(heading):
    """The anchor GitHub gives a heading: its text, lower case, punctuation out, spaces to '-'."""
    text = re.sub(r"!?\[([^\]]*)\]\([^)]*\)", r"\1", heading)  # a link's text stays
    text = re.sub(r"<[^>]+>", "", text)
    text = html.unescape(text).replace("`", "").lower()
    text = re.sub(r"[^\w\- ]", "", text)
    return text.replace(" ", "-")


def links_in(line):
    """Link targets of one line of prose, leaving out what inline code spans hold."""
    prose = re.sub(r"(`+)(.+?)\1", "", line)
    inline = r"\]\(\s*<?([^)\s>]+)>?(?:\s+\"[^\"]*\")?\s*\)"  # ](target "title")
    targets = [m.group(1) for m in re.finditer(inline, prose)]
    ref = re.match(r"\s{0,3}\[[^\]]+\]:\s+<?(\S+?)>?(\s|$)", prose)
    if ref:
        targets.append(ref.group(1))
    return targets


class Checker:
    def __init__(self, args):
        self.repo = os.path.realpath(args.repo)
        self.tprimat = os.path.abspath(args.tprimat)
        self.work = args.work_dir
        self.keep = args.keep
        self.built = {}
        for entry in args.built:
            path, _, built = entry.partition("=")
            if not path.startswith("build/") or not built:
                raise SystemExit(f"--built takes build/PATH=FILE, got {entry!r}")
            self.built[path] = os.path.abspath(built)
        self.failures = []
        self.help_cache = {}
        self.mpirun = shutil.which("mpirun")
        env = dict(os.environ)
        # Env-backed flags would change what a command shown on the page means.
        for name in ("PARALLEL", "OUTPUT_DIR"):
            env.pop(name, None)
        # mpirun as root (CI) and with more ranks than this machine has cores.
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT", "1")
        env.setdefault("OMPI_ALLOW_RUN_AS_ROOT_CONFIRM", "1")
        env.setdefault("OMPI_MCA_rmaps_base_oversubscribe", "1")
        env["TERM"] = "dumb"
        self.env = env

    # ---- reporting ------------------------------------------------------------------------------
    def fail(self, page, number, what):
        self.failures.append(f"{page.rel}:{number}: {what}")
        print(f"FAIL {page.rel}:{number}: {what}", flush=True)

    @staticmethod
    def ok(page, number, what):
        print(f"ok   {page.rel}:{number}: {what}", flush=True)

    # ---- links ----------------------------------------------------------------------------------
    def check_links(self, page):
        pages = {}
        for number, target in page.links:
            if re.match(r"^[a-z][a-z0-9+.-]*:", target, re.I):  # https:, mailto:: not fetched
                continue
            path, _, fragment = target.partition("#")
            path = urllib.parse.unquote(path)
            full = os.path.normpath(os.path.join(os.path.dirname(page.path), path)) if path \
                else page.path
            if not os.path.realpath(full).startswith(self.repo + os.sep) and full != self.repo:
                self.fail(page, number, f"link {target} leaves the repository")
                continue
            if not os.path.exists(full):
                self.fail(page, number, f"link {target}: {os.path.relpath(full, self.repo)} "
                                        "does not exist")
                continue
            if not fragment:
                continue
            if not full.endswith(".md"):
                self.fail(page, number, f"link {target}: an anchor into a file that is not "
                                        "markdown cannot be checked; link the file")
                continue
            if full not in pages:
                pages[full] = page if full == page.path else Page(full, self.repo)
            if urllib.parse.unquote(fragment) not in pages[full].anchors:
                near = sorted(a for a in pages[full].anchors
                              if a.split("-")[0] == fragment.split("-")[0])
                self.fail(page, number, f"link {target}: no heading #{fragment} in "
                                        f"{os.path.relpath(full, self.repo)}"
                                        + (f" (near: {', '.join(near[:5])})" if near else ""))
        print(f"ok   {page.rel}: {len(page.links)} links checked", flush=True)

    def check_index(self, page):
        """README.md and docs/README.md lead to every page of docs/."""
        docs = os.path.join(self.repo, "docs")
        linked = set()
        for _, target in page.links:
            path = urllib.parse.unquote(target.partition("#")[0])
            if path:
                linked.add(os.path.normpath(os.path.join(os.path.dirname(page.path), path)))
        for name in sorted(os.listdir(docs)):
            full = os.path.join(docs, name)
            if name.endswith(".md") and full != page.path and full not in linked:
                self.fail(page, 1, f"docs/{name} is not linked from this page: add it to the list "
                                   "of pages")

    # ---- commands -------------------------------------------------------------------------------
    def check_blocks(self, page):
        for first, info, lines in page.blocks:
            lang = info[0] if info else ""
            mode = info[1] if len(info) > 1 else ""
            shell = lang in ("sh", "console")
            if info == ["unclosed"]:
                self.fail(page, first, "a fenced block is never closed")
            elif lang in ("bash", "shell", "zsh"):
                self.fail(page, first, f"fence '{' '.join(info) or '(none)'}': say ```sh (runs "
                                       "here), ```sh gpu (checked with tprimat plan) or ```sh skip")
            elif shell and mode not in ("", "gpu", "skip"):
                self.fail(page, first, f"fence '{' '.join(info)}': the second word is gpu, skip "
                                       "or nothing")
            elif not shell or mode == "skip":
                for number, text in self.commands(lines, lang == "console"):
                    if self.tprimat_at(self.words(text)) is not None:
                        self.fail(page, number, "a tprimat command in a block that is not checked "
                                                f"(```{' '.join(info)}): put it in ```sh or ```sh "
                                                f"gpu: {text}")
            else:
                self.run_block(page, lang == "console", mode == "gpu", lines)

    @staticmethod
    def commands(lines, console):
        """(line number, command) of a block: `\\` joins lines, comments and output are left out."""
        out = []
        pending = None
        for number, text in lines:
            if pending is None:
                if console:
                    if not text.startswith("$ "):
                        continue
                    text = text[2:]
                if not text.strip() or text.lstrip().startswith("#"):
                    continue
                pending = (number, "")
            body = text.strip() if pending[1] else text.rstrip()
            if body.endswith("\\"):
                pending = (pending[0], pending[1] + body[:-1].rstrip() + " ")
                continue
            out.append((pending[0], (pending[1] + body).strip()))
            pending = None
        if pending is not None:
            out.append(pending)
        return out

    @staticmethod
    def split_comment(command):
        """The command and its comment: the first '#' outside quotes that starts a word."""
        quote = None
        for i, c in enumerate(command):
            if quote:
                if c == quote:
                    quote = None
            elif c in "'\"":
                quote = c
            elif c == "#" and (i == 0 or command[i - 1].isspace()):
                return command[:i].rstrip(), command[i + 1:]
        return command, ""

    def words(self, command):
        try:
            return shlex.split(self.split_comment(command)[0])
        except ValueError:
            return command.split()

    @staticmethod
    def tprimat_at(words):
        """Where tprimat is the program a command runs: its first word after `NAME=value`
        assignments, or the first such word after a launcher (`mpirun -np 2 tprimat ...`). A path
        or an argument that merely ends in tprimat (`--prefix /opt/tprimat`) is not."""
        def is_tprimat(word):
            return word == "tprimat" or word.endswith("/tprimat")
        first = 0
        while first < len(words) and re.match(r"^[A-Za-z_][A-Za-z0-9_]*=", words[first]):
            first += 1
        if first < len(words) and is_tprimat(words[first]):
            return first
        if first < len(words) and words[first] in LAUNCHERS:
            for i in range(first + 1, len(words)):
                if is_tprimat(words[i]):
                    return i
        return None

    def expected_rc(self, command):
        m = re.search(r"\bexit\s+(\d+)\b", self.split_comment(command)[1])
        return int(m.group(1)) if m else 0

    def scratch(self):
        base = self.work or None
        if base:
            os.makedirs(base, exist_ok=True)
        folder = tempfile.mkdtemp(prefix="block-", dir=base)
        # `build/apps/tprimat/tprimat` as the pages spell it, from the repository root.
        shown = os.path.join(folder, "build", "apps", "tprimat")
        os.makedirs(shown)
        os.symlink(self.tprimat, os.path.join(shown, "tprimat"))
        # Other build products the pages run at their build-tree paths (--built PATH=FILE).
        for path, built in self.built.items():
            os.makedirs(os.path.dirname(os.path.join(folder, path)), exist_ok=True)
            os.symlink(built, os.path.join(folder, path))
        return folder

    def copy_inputs(self, folder, commands):
        """Copies the repository paths the commands name into the scratch folder."""
        for _, command in commands:
            for word in self.words(command):
                for candidate in (word, word.partition("=")[2]):
                    path = os.path.normpath(candidate) if candidate else ""
                    # Only paths below the root that git would hold: never the whole tree (`.`),
                    # a flag, or a build product.
                    if (not path or path == "." or path.startswith(("-", "..")) or
                            os.path.isabs(path) or UNTRACKED_ROOTS.match(path)):
                        continue
                    source = os.path.join(self.repo, path)
                    target = os.path.join(folder, path)
                    if not os.path.exists(source) or os.path.exists(target):
                        continue
                    os.makedirs(os.path.dirname(target) or folder, exist_ok=True)
                    if os.path.isdir(source):
                        shutil.copytree(source, target)
                    else:
                        shutil.copy2(source, target)

    def run_block(self, page, console, gpu, lines):
        commands = self.commands(lines, console)
        if not commands:
            return
        folder = self.scratch()
        self.copy_inputs(folder, commands)
        env = dict(self.env)
        env["PATH"] = os.path.dirname(os.path.join(folder, "build/apps/tprimat/tprimat")) + \
            os.pathsep + env.get("PATH", "")
        failed_before = len(self.failures)
        for number, command in commands:
            words = self.words(command)
            at = self.tprimat_at(words)
            first = words[0] if words else ""
            if at is None:
                if first.startswith("build/") and first not in self.built:
                    # A build product this build did not make (examples off): named, not run.
                    print(f"  skip {page.rel}:{number}: {first} is not built here", flush=True)
                elif first in NOT_RUN_HERE or first.startswith("scripts/"):
                    self.fail(page, number, f"{first} does not run in a checked block: put it in "
                                            f"```sh skip: {command}")
                else:
                    self.run(page, number, command, folder, env, "shell")
                continue
            launcher = next((w for w in words[:at] if w in LAUNCHERS), "")
            mpi = launcher in ("mpirun", "mpiexec")
            if gpu:
                self.check_gpu(page, number, command, words, at, folder, env)
            elif launcher and launcher not in RUN_HERE:
                self.fail(page, number, f"{launcher} cannot run here: put the command in a "
                                        f"```sh gpu block: {command}")
            elif mpi and not self.mpirun:
                self.check_gpu(page, number, command, words, at, folder, env,
                               note="no mpirun here: ")
            else:
                self.run(page, number, command, folder, env, "ran")
        if self.keep or len(self.failures) > failed_before:
            print(f"     scratch folder kept: {folder}", flush=True)
        else:
            shutil.rmtree(folder, ignore_errors=True)

    def run(self, page, number, command, folder, env, how, shown=None):
        expected = self.expected_rc(shown or command)
        start = time.monotonic()
        try:
            done = subprocess.run(["bash", "-c", command], cwd=folder, env=env,
                                  stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                                  stdin=subprocess.DEVNULL, timeout=COMMAND_TIMEOUT_S)
        except subprocess.TimeoutExpired:
            self.fail(page, number, f"ran past {COMMAND_TIMEOUT_S} s: {command}")
            return
        seconds = time.monotonic() - start
        if done.returncode != expected:
            tail = done.stdout.decode(errors="replace").strip().split("\n")[-15:]
            self.fail(page, number, f"exited {done.returncode}, the page says {expected}"
                                    f" ({'# exit N' if expected else 'no # exit N comment'}): "
                                    f"{shown or command}"
                                    + (f"\n       {how}: {command}" if shown else "")
                                    + "\n       " + "\n       ".join(tail))
        else:
            self.ok(page, number,
                    f"[{how} {seconds:.1f}s, exit {done.returncode}] {shown or command}")

    # ---- sh gpu ---------------------------------------------------------------------------------
    def help_of(self, *subcommand):
        """{flag: takes a value} of `tprimat SUBCOMMAND --help`, and its subcommands."""
        if subcommand not in self.help_cache:
            text = subprocess.run([self.tprimat, *subcommand, "--help"], stdout=subprocess.PIPE,
                                  stderr=subprocess.STDOUT, env=self.env).stdout.decode()
            flags, subs, section = {}, set(), ""
            for line in text.split("\n"):
                if re.match(r"^\S.*:$", line):
                    section = line
                    continue
                m = re.match(r"^\s+((?:-{1,2}[\w-]+,?)+)(\s+(\S+))?", line)
                if m and section.startswith("Options"):
                    takes = bool(m.group(3)) and re.match(r"(TEXT|INT|UINT|FLOAT)", m.group(3))
                    for name in m.group(1).split(","):
                        flags[name] = bool(takes)
                elif section.startswith("Subcommands"):
                    s = re.match(r"^\s+(\S+)", line)
                    if s:
                        subs.add(s.group(1))
            self.help_cache[subcommand] = (flags, subs)
        return self.help_cache[subcommand]

    @staticmethod
    def ranks(prefix):
        """GPUs a launcher asks for: mpirun -np N, srun -n N, or --nodes A --ntasks-per-node B."""
        opts = {}
        for i, w in enumerate(prefix):
            key, eq, value = w.partition("=")
            if not eq and i + 1 < len(prefix):
                value = prefix[i + 1]
            opts.setdefault(key, value)
        for key in ("-np", "-n", "--np", "--ntasks"):
            if key in opts and opts[key].isdigit():
                return int(opts[key])
        if opts.get("--nodes", "").isdigit() and opts.get("--ntasks-per-node", "").isdigit():
            return int(opts["--nodes"]) * int(opts["--ntasks-per-node"])
        return 1

    def check_gpu(self, page, number, command, words, at, folder, env, note=""):
        prefix = words[:at]  # NAME=value and a launcher with its options (tprimat_at)
        args = words[at + 1:]
        if not args:
            self.fail(page, number, f"no subcommand: {command}")
            return
        sub = args[0]
        if sub in ("bench", "plan"):
            self.plan_for(page, number, command, sub, args[1:], self.ranks(prefix), folder, env,
                          note)
            return
        # Another subcommand: its name, its flags against its --help.
        _, subs = self.help_of()
        path = [sub]
        if sub not in subs:
            self.fail(page, number, f"tprimat has no subcommand {sub}: {command}")
            return
        rest = args[1:]
        flags, subsubs = self.help_of(*path)
        if subsubs and rest and rest[0] in subsubs:
            path.append(rest[0])
            rest = rest[1:]
            flags, _ = self.help_of(*path)
        bad = [w.partition("=")[0] for w in rest
               if w.startswith("-") and w.partition("=")[0] not in flags]
        if bad:
            self.fail(page, number, f"tprimat {' '.join(path)} has no flag {', '.join(bad)}: "
                                    f"{command}")
        else:
            self.ok(page, number, f"[{note}flags of tprimat {' '.join(path)} checked, not run] "
                                  f"{command}")

    def plan_for(self, page, number, command, sub, args, ranks, folder, env, note):
        plan_flags, _ = self.help_of("plan")
        bench_flags, _ = self.help_of("bench")
        shown_flags = plan_flags if sub == "plan" else bench_flags
        kept, dropped, hip = [], [], False
        i = 0
        while i < len(args):
            word = args[i]
            name, eq, _ = word.partition("=")
            if not word.startswith("-"):
                self.fail(page, number, f"tprimat {sub} takes no argument {word}: {command}")
                return
            if name not in shown_flags:
                self.fail(page, number, f"tprimat {sub} has no flag {name}: {command}")
                return
            values = []
            if shown_flags[name] and not eq:
                i += 1
                # --data takes a blend of several words: up to the next flag.
                while i < len(args) and (not args[i].startswith("-") or not values):
                    values.append(args[i])
                    i += 1
                    if name != "--data":
                        break
            else:
                i += 1
            if name == "--backend":
                hip = hip or "hip" in values or word.endswith("=hip")
                dropped.append(name)
            elif name in plan_flags:
                kept += [word] + values
            else:
                dropped.append(name)
        if "--device" not in kept:
            device = AMD_DEVICE if hip else NVIDIA_DEVICE
            kept += ["--device", device[0], "--device-memory", device[1]]
        if ranks > 1 and "--num-gpus" not in kept:
            kept += ["--num-gpus", str(ranks)]
        plan = shlex.join([self.tprimat_word(command), "plan"] + kept)
        how = f"{note}checked as plan" + (f", dropped {' '.join(dropped)}" if dropped else "")
        comment = self.split_comment(command)[1]
        self.run(page, number, plan + (f"  #{comment}" if comment else ""), folder, env, how,
                 shown=command)

    def tprimat_word(self, command):
        words = self.words(command)
        return words[self.tprimat_at(words)]


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--tprimat", required=True, help="the tprimat binary under test")
    parser.add_argument("--repo", default=os.path.join(os.path.dirname(__file__), "..", ".."),
                        help="repository root (default: two folders up from this script)")
    parser.add_argument("--work-dir", help="where scratch folders go (default: the system's)")
    parser.add_argument("--keep", action="store_true", help="keep every scratch folder")
    parser.add_argument("--built", action="append", default=[], metavar="PATH=FILE",
                        help="a build product the pages run as build/PATH (e.g. an example)")
    parser.add_argument("pages", nargs="+", help="markdown files to check")
    args = parser.parse_args()
    if not os.access(args.tprimat, os.X_OK):
        sys.exit(f"check_docs: {args.tprimat} is not an executable: build tprimat_cli first")
    checker = Checker(args)
    start = time.monotonic()
    for name in args.pages:
        page = Page(os.path.realpath(name), checker.repo)
        if page.rel == "README.md" and len(page.lines) > FRONT_PAGE_MAX_LINES:
            checker.fail(page, len(page.lines), f"README.md has {len(page.lines)} lines, more than "
                                                f"the front page's {FRONT_PAGE_MAX_LINES}: move "
                                                "the detail into a page of docs/")
        checker.check_links(page)
        if page.rel in ("README.md", os.path.join("docs", "README.md")):
            checker.check_index(page)
        checker.check_blocks(page)
    seconds = time.monotonic() - start
    if checker.failures:
        print(f"\ncheck_docs: {len(checker.failures)} problem(s) in {seconds:.0f} s:")
        for failure in checker.failures:
            print("  " + failure.split("\n")[0])
        return 1
    print(f"check_docs: {', '.join(args.pages)}: links and commands fine ({seconds:.0f} s)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
