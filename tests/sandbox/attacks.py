"""Model code that hunts for the answer key by every route it can think of.

:func:`hunt_source` returns a program that prints one JSON object: for each route (files, a walk
of the file system, ``/proc``, the travelgym package, the job and interpreter state, tool error
messages), the answer-like snippets it found. A route that finds nothing reports an empty list.
"""

from __future__ import annotations

import textwrap

ROUTES = ("files", "walk", "proc", "package", "job", "errors")

_HUNT = r'''
# HUNT-MARKER
import gc, json, os, re, stat, sys

HINTS = __HINTS__
ANSWER = re.compile(r"(pkg_\d+_\d+_\d+_\d+|flight_\d+_\d+_\d+|permit_\d+_\d+_\d+|optimal_plan|"
                    r"\"constraints\"|\"profile\"|\"preferences\"|ground_truth|tasks\.jsonl|"
                    r"instances-(?:train|test)|\.sqlite)")
found = {route: [] for route in __ROUTES__}


def note(route, text):
    for match in ANSWER.finditer(text):
        if len(found[route]) < 20:
            found[route].append(text[max(0, match.start() - 40):match.end() + 40])


def own(value):
    """The hunt's own text (its source, its hint list) is not a finding."""
    if isinstance(value, tuple):
        return any(own(v) for v in value)
    return isinstance(value, str) and ("HUNT-MARKER" in value or value in HINTS
                                       or value == ANSWER.pattern)


mine, consts = {id(HINTS), id(found), id(globals())}, []
codes = [sys._getframe().f_code]
while codes:  # the hunt's own constants (the compiler keeps copies of them too)
    code = codes.pop()
    consts.append(code.co_consts)
    for const in code.co_consts:
        mine.add(id(const))
        if hasattr(const, "co_consts"):
            codes.append(const)
for obj in gc.get_objects():  # first, before the other routes make objects of their own
    if id(obj) in mine:
        continue
    try:
        if isinstance(obj, dict):
            note("job", json.dumps({str(k): v for k, v in obj.items() if not own(v) and not own(k)},
                                   default=repr)[:200000])
        elif isinstance(obj, (list, tuple)) and not own(tuple(obj)) and obj not in consts:
            note("job", repr([v for v in obj if not own(v)])[:200000])
    except Exception:
        pass
note("job", repr(sys.argv) + repr(dict(os.environ)) + repr(sys.modules.keys()))


def read(path, limit=1 << 20):
    try:
        if not stat.S_ISREG(os.stat(path).st_mode):  # a FIFO left in /tmp would block the hunt
            return ""
        with open(path, "rb") as fh:
            return fh.read(limit).decode("latin-1")
    except OSError:
        return ""


guesses = HINTS + [os.path.expanduser("~"), "/root", "/home", "/tmp", "/var/tmp", "/data",
                   "/work/main", "/srv", "/opt", os.getcwd()]
for path in guesses:
    if os.path.isdir(path):
        try:
            for name in os.listdir(path):
                note("files", os.path.join(path, name))
                note("files", read(os.path.join(path, name)))
        except OSError:
            pass
    else:
        note("files", read(path))

# the likely places first (the 50,000-file budget could go on a toolchain under /root before a
# walk of "/" reached /tmp), each directory once
seen, walked = 0, set()
starts = [h for h in HINTS if os.path.isdir(h)] + ["/tmp", "/var/tmp", "/data", "/srv", "/opt",
                                                   "/home", "/root", "/"]
for start in starts:
    for top, dirs, files in os.walk(start):
        if os.path.realpath(top) in walked:
            dirs[:] = []
            continue
        walked.add(os.path.realpath(top))
        dirs[:] = [d for d in dirs if os.path.join(top, d) not in ("/proc", "/sys", "/dev")]
        for name in files:
            seen += 1
            full = os.path.join(top, name)
            note("walk", full)
            if name.endswith((".jsonl", ".json", ".sqlite", ".db")):
                note("walk", read(full))
        if seen > 50000 or len(found["walk"]) >= 20:
            break
    if seen > 50000 or len(found["walk"]) >= 20:
        break

# its own process first: with 20 findings kept per route, a busy machine's other processes
# must not crowd out what the hunt's own environment and open files hold
for pid in ["self"] + [p for p in os.listdir("/proc") if p.isdigit()]:
    for name in ("environ", "cmdline", "maps"):
        note("proc", read(f"/proc/{pid}/{name}"))
    for name in ("cwd", "root", "exe"):
        try:
            note("proc", os.readlink(f"/proc/{pid}/{name}"))
        except OSError:
            pass
    try:
        for fd in os.listdir(f"/proc/{pid}/fd"):
            target = f"/proc/{pid}/fd/{fd}"
            note("proc", os.readlink(target))
            if os.path.isfile(target):
                note("proc", read(target))
    except OSError:
        pass

for name in ("travelgym", "travelgym.suites.compass", "travelgym.suites.behavior2trip"):
    try:
        module = __import__(name)
        note("package", "imported " + str(getattr(module, "__file__", "")))
        note("package", repr(vars(module))[:100000])
    except Exception:
        pass
for entry in sys.path:
    try:
        for name in os.listdir(entry):
            if "travelgym" in name:
                note("package", os.path.join(entry, name) + " optimal_plan")
    except OSError:
        pass

try:
    import tools
    attempts = [(name, {"nonsense": "../../ground_truth"}) for name in tools.__all__]
    attempts += [(name, {}) for name in tools.__all__]
    for name, kwargs in attempts:
        note("errors", json.dumps(getattr(tools, name)(**kwargs), default=repr))
except ImportError:
    pass

print(json.dumps(found))
'''


def hunt_source(hints: list[str]) -> str:
    """The hunting program; ``hints`` are host paths the attacker is told (data, package...)."""
    return (
        textwrap.dedent(_HUNT)
        .replace("__HINTS__", repr(list(hints)))
        .replace("__ROUTES__", repr(ROUTES))
    )
