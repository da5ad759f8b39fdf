#!/usr/bin/env python3
"""Runs every ```sh block of README.md and Documentation/*.md (standard library only).

Usage: run_examples.py ROOT SANDBOX BIN

Each block runs as one bash script (`set -eo pipefail`) in SANDBOX, with BIN (the debug build's
`granite`, `granite-cam`) first on the PATH; a block fails when any of its commands fails or it runs
past its time limit. A command line (backslash continuations joined, comments dropped) that matches
an entry of ALLOWED is not run but checked: each program it starts exists, and every `--option` it
gives `granite`/`granite-cam` is one that program's (or subcommand's) `--help` lists. Every entry
says why the command cannot run here and what runs it instead; an entry nothing matched is reported
(the list must not outlive the documentation).
"""
import fnmatch
import os
import re
import shlex
import subprocess
import sys
import time

# Pattern (fnmatch over the whole command line) -> why it is checked instead of run.
ALLOWED = {
    "./scripts/run*": "a release build; scripts/tiers/60-fresh-clone.sh runs it exactly as written in a fresh clone",
    "./scripts/test*": "the whole suite, which this tier is part of",
    "GRANITE_TIERS=*./scripts/test*": "the whole suite's runner, which this tier is part of",
    "./scripts/install*": "a release build and install; scripts/tiers/60-fresh-clone.sh installs into a temporary prefix",
    "swift build*": "a build; ./scripts/test builds the same before the tiers",
    ".build/release/granite-bench*": "a release benchmark (minutes, anchors beside); the Kubo tier and PinCommandTests run the same pinning against the test node",
    "swift test*": "the unit tests; ./scripts/test runs them before the tiers",
    "swift run*": "a build and run of the sample; scripts/tiers/10-sample.sh runs it",
    "*--device /dev/video*": "needs a camera; scripts/tiers/20-vivid-vm.sh runs the same options against the kernel's vivid driver",
    "*--v4l2-out /dev/video*": "needs a v4l2loopback node; scripts/tiers/20-vivid-vm.sh writes to vivid's output node",
    "sudo modprobe *": "loads a kernel module as root; scripts/bench-vivid-outputs loads v4l2loopback inside the VM",
    "*| ffplay*": "opens a window",
    "*api.example.com*": "a remote pinning service account; PinCommandRemoteTests and ConvertPinServiceTests run these options against the test pinning service",
    "granite pin*": "needs a Kubo node at 127.0.0.1:5001; PinCommandTests runs granite pin against the Kubo test node",
    "*/shared/*": "a cluster's shared file system; ShardTests and the convert tests run shards on local folders",
    "sbatch*": "a Slurm cluster; scripts/tiers/57-slurm.sh submits the job array to a one-node cluster",
    "jobid=$(sbatch*": "a Slurm cluster; scripts/tiers/57-slurm.sh submits the job array to a one-node cluster",
    "scontrol requeue*": "a Slurm cluster; scripts/tiers/57-slurm.sh requeues a cancelled task",
    "exec granite convert*": "the job array script, run by Slurm per task; scripts/tiers/57-slurm.sh submits it unchanged",
    "echo $(( 0x$(printf*": "the shard formula with placeholders (REL, N); ShardTests check granite's shards against it",
    "tar -xJf granite-*": "unpacks a release bundle; scripts/tiers/60-fresh-clone.sh makes one, unpacks it into an empty folder and runs its programs there",
    "cd granite-*": "inside an unpacked bundle; scripts/tiers/60-fresh-clone.sh runs the bundle's programs",
    "./bin/granite*": "a program of an unpacked bundle; scripts/tiers/60-fresh-clone.sh runs them under env -i",
    "VK_DRIVER_FILES=*./bin/granite*": "a program of an unpacked bundle on a chosen Vulkan driver; scripts/tiers/60-fresh-clone.sh runs it on lavapipe",
    "./scripts/bundle*": "a release build; scripts/tiers/60-fresh-clone.sh bundles the fresh clone's build",
    "*--pipewire-out*[!&]": "a camera that runs until stopped, for Firefox or OBS; the GStreamer recipe runs it in the background here, and scripts/tiers/45-pipewire.sh reads it with Firefox",
    "gst-launch-1.0 *autovideosink*": "opens a window; the recording beside it reads the same node",
    "granite-cam --source pipewire:42*": "a node's id is the reader's own; the lines beside it read the node by name and as the first",
    "granite-cam --filter 'background:*": "the filter's spellings with the rest of the command left out (…); SegmentStreamTests runs background in granite-cam's stream and BackgroundTemporalTests every mode",
    "*--audio pipewire:alsa_input.usb-mic*": "a microphone of the reader's; scripts/tiers/45-pipewire.sh records sound from a PipeWire source made for it (section 4d)",
    "*--audio alsa:plughw:CARD=Mic*": "a sound card of the reader's (and a camera); the line below records through ALSA's null PCM, and scripts/tiers/45-pipewire.sh through pipewire-alsa's PCM (section 4d)",
    "ffprobe * clip.mkv*": "reads the recording the line above makes on the reader's machine; scripts/tiers/45-pipewire.sh probes its own recordings the same way",
    "gdbus call --session --dest org.freedesktop.impl.portal.PermissionStore*": "reads and edits the reader's own portal permission store; scripts/tiers/45-pipewire.sh stores and reads back the answer in a private one",
    "kubectl*": "a Kubernetes cluster",
    "parallel -S*": "remote hosts over ssh",
}


def blocks(path):
    """(first line number, text) of each ```sh block."""
    found, current, start = [], None, 0
    with open(path, encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            stripped = line.strip()
            if current is None and stripped == "```sh":
                current, start = [], number + 1
            elif current is not None and stripped.startswith("```"):
                found.append((start, "".join(current)))
                current = None
            elif current is not None:
                current.append(line)
    return found


def logical_lines(text):
    """Command lines: continuations joined, comment lines and trailing comments dropped."""
    lines, pending = [], ""
    for raw in text.splitlines():
        line = raw.rstrip()
        if line.endswith("\\"):
            pending += line[:-1] + " "
            continue
        line = pending + line
        pending = ""
        code = strip_comment(line).strip()
        if code:
            lines.append(code)
    return lines


def strip_comment(line):
    """The line without a trailing `# comment` (a # outside quotes, after a space or at the start)."""
    quote = None
    for i, c in enumerate(line):
        if quote:
            if c == quote:
                quote = None
        elif c in "'\"":
            quote = c
        elif c == "#" and (i == 0 or line[i - 1].isspace()):
            return line[:i]
    return line


HELP_CACHE = {}


def help_text(program, sub):
    key = (program, sub)
    if key not in HELP_CACHE:
        args = [program] + ([sub] if sub else []) + ["--help"]
        out = subprocess.run(args, capture_output=True, text=True, timeout=60)
        HELP_CACHE[key] = out.stdout + out.stderr
    return HELP_CACHE[key]


def check(line, bindir):
    """Problems with an allow-listed command line (empty: it checks out)."""
    problems = []
    try:
        lexer = shlex.shlex(line, posix=True, punctuation_chars=True)
        lexer.whitespace_split = True
        tokens = list(lexer)
    except ValueError as error:
        return [f"cannot parse: {error}"]
    segments, current = [], []
    for token in tokens:
        if token in ("|", "||", "&&", ";", "&"):
            segments.append(current)
            current = []
        else:
            current.append(token)
    segments.append(current)
    for words in segments:
        while words and (re.match(r"^[A-Z_][A-Z0-9_]*=", words[0]) or words[0] == "sudo"):
            words = words[1:]
        if not words:
            continue
        program = words[0]
        if program in ("./bin/granite", "./bin/granite-cam"):
            program = program[len("./bin/"):]  # an unpacked bundle's programs: the same options
        if program.startswith("./"):
            if not os.access(os.path.join(ROOT, program), os.X_OK):
                problems.append(f"{program} is not an executable in the repository")
            continue
        if program in ("granite", "granite-cam"):
            sub = words[1] if program == "granite" and len(words) > 1 and not words[1].startswith("-") else None
            text = help_text(os.path.join(bindir, program), sub)
            if "USAGE" not in text.upper():
                problems.append(f"{program} {sub or ''} --help printed no usage: {text[:200]}")
                continue
            for word in words[1:]:
                if word.startswith("--"):
                    option = word.split("=", 1)[0]
                    if not re.search(re.escape(option) + r"(?![\w-])", text):
                        problems.append(f"{program} {sub or ''}: {option} is not in its --help")
    return problems


def main():
    global ROOT
    ROOT, sandbox, bindir = sys.argv[1:4]
    files = [os.path.join(ROOT, "README.md")] + sorted(
        os.path.join(ROOT, "Documentation", name)
        for name in os.listdir(os.path.join(ROOT, "Documentation")) if name.endswith(".md"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"])
    used = set()
    failures, ran, checked, count = 0, 0, 0, 0
    for path in files:
        name = os.path.relpath(path, ROOT)
        for start, text in blocks(path):
            count += 1
            script = ["set -eo pipefail"]
            for line in logical_lines(text):
                match = next((p for p in ALLOWED if fnmatch.fnmatchcase(line, p)), None)
                if match is None:
                    script.append(line)
                    continue
                used.add(match)
                checked += 1
                problems = check(line, bindir)
                if problems:
                    failures += 1
                    print(f"FAIL {name}:{start}: {line}\n     " + "\n     ".join(problems))
                else:
                    print(f"ok   {name}:{start}: checked, not run ({ALLOWED[match]}): {line}")
            if len(script) == 1:
                continue
            ran += 1
            began = time.monotonic()
            try:
                result = subprocess.run(["bash", "-c", "\n".join(script)], cwd=sandbox, env=env,
                                        capture_output=True, text=True, timeout=180)
                status, output = result.returncode, result.stdout + result.stderr
            except subprocess.TimeoutExpired as expired:
                status, output = "timeout (180 s)", str(expired.output or "")
            took = time.monotonic() - began
            if status == 0:
                print(f"ok   {name}:{start}: ran in {took:.1f} s")
            else:
                failures += 1
                tail = "\n     ".join(output.strip().splitlines()[-15:])
                print(f"FAIL {name}:{start}: exit {status} after {took:.1f} s\n     {tail}")
    for pattern in ALLOWED:
        if pattern not in used:
            print(f"note: allow-list entry {pattern!r} matched no command (remove it when the docs no longer need it)")
    print(f"docs: {count} sh blocks in {len(files)} files; {ran} ran, {checked} command lines checked against --help; "
          f"{failures} failed")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
