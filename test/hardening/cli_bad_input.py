"""Runs `nodesmith` on hostile input and asserts each run fails (or warns) with a message that says what, where and
why, and that nothing ran: no instance launched, no simulated time spent.

Usage: cli_bad_input.py NODESMITH FIXTURE_DIR EXAMPLES_DIR
"""
import json
import os
import subprocess
import sys
import tempfile

NODESMITH, FIXTURES, EXAMPLES = sys.argv[1:4]
BAD = os.path.join(FIXTURES, "bad")
failures = []


def run(*args, timeout=60):
    return subprocess.run([NODESMITH, *args], capture_output=True, text=True, timeout=timeout)


def messages(proc):
    """stderr without the JSON log lines."""
    return "\n".join(l for l in proc.stderr.splitlines() if not l.startswith("{"))


def expect_failure(name, proc, *parts):
    text = messages(proc)
    if proc.returncode == 0:
        failures.append(f"{name}: exited 0\n{proc.stderr}")
        return
    for part in parts:
        if part not in text:
            failures.append(f"{name}: {part!r} not in the message:\n{text}")


nginx = os.path.join(EXAMPLES, "nginx.yaml")
# Simulated time: a timeline of 876000h is refused before any engine step; so is an hour in ticks of 1ms when
# stepping every tick (event-driven, that hour runs).
expect_failure("876000h", run("simulate", "-f", nginx, "--timeline", os.path.join(BAD, "timeline-876000h.yaml")),
               "timeline-876000h.yaml: the timeline lasts 876000h in ticks of 1s, 3153600001 ticks; at most "
               "100000000 are allowed (make engine.tick longer or the timeline shorter)")
expect_failure("tick 1ms", run("simulate", "-f", nginx, "--timeline", os.path.join(BAD, "timeline-tick-1ms.yaml"),
                               "--every-tick"),
               "the timeline lasts 1h in ticks of 1ms, 3600001 engine steps; at most 1000000 are allowed when "
               "stepping every tick")
# An option duration that would wrap when turned into milliseconds.
expect_failure("launch_latency", run("offerings", "--provider", "sim", "--set", "launch_latency=18446744073709553"),
               "option 'launch_latency' of provider sim: invalid duration \"18446744073709553\": 18446744073709553 "
               "seconds is longer than Go's largest duration")
# A 10 KB option value keeps the reason in the message.
expect_failure("long value", run("offerings", "--provider", "sim", "--set", "launch_latency=" + "9" * 10240 + "x"),
               "... (10241 bytes)", "longer than Go's largest duration")
# A directory given as a catalog file says so (it read as 9223372036854775807 bytes).
expect_failure("catalog directory", run("offerings", "--provider", "sim", "--set", "catalog=" + BAD),
               "catalog file " + BAD + ": is a directory, not a file")
# A catalog or price file that is not JSON names the line and column of the syntax error, where Python's own JSON
# parser (an independent implementation) says it is.
for option, name in (("catalog", "catalog-syntax.json"), ("prices", "prices-syntax.json")):
    path = os.path.join(BAD, name)
    try:
        with open(path, encoding="utf-8") as f:
            json.load(f)
        failures.append(f"{name}: Python reads it as JSON; the fixture must not be")
        continue
    except json.JSONDecodeError as e:
        where = f"line {e.lineno}, column {e.colno}"
    expect_failure(name, run("offerings", "--provider", "sim", "--set", f"{option}={path}"),
                   f"{option} file {path}: not valid JSON: syntax error at {where}")
# An empty file, and a directory with no manifests, load nothing: a warning says so.
for what, path in (("empty file", os.path.join(BAD, "empty.yaml")), ("empty directory", tempfile.mkdtemp())):
    proc = run("simulate", "-f", path)
    want = "the manifest file holds no objects" if what == "empty file" else "no manifest files"
    if proc.returncode != 0 or want not in proc.stdout + proc.stderr:
        failures.append(f"{what}: exit {proc.returncode}, no warning {want!r}:\n{proc.stderr}")
if failures:
    sys.exit("\n\n".join(failures))
print("ok")
