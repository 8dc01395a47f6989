"""Shared fixtures: the test data, built once per machine.

The COMPASS database and ground truth and the Behavior2Trip database and instance files are a
pure function of the generators' versions and seeds, so they live in one content-addressed data
directory shared by every test session: ``$TRAVELGYM_TEST_CACHE/<key>/`` when that variable is
set, else ``<pytest cache dir>/d/travelgym-data/<key>/`` (``.pytest_cache`` beside
``pyproject.toml``; with ``-p no:cacheprovider``, the user's cache directory,
``~/.cache/travelgym/test-data/<key>/`` on Linux).
``<key>`` hashes :func:`data_key`: a version bump lands in a fresh directory, never over data
another checkout still uses. The fixtures only call the public ``ensure_*`` functions (which
skip whatever their manifests say is current), each under an exclusive ``flock`` of its own
in the directory so that concurrent sessions build once and wait for each other, and log what a build
changed to ``builds.jsonl`` there (``tests/test_data_cache.py`` checks a second session builds
nothing).

The shared directory is read-only to tests: a test that damages, deletes or rewrites data files
works on a private copy (:func:`private_data_dir`). At the end of the session every data file
(:func:`guarded`) the fixtures saw after their builds must be unchanged (same inode, size and
mtime), or the session fails naming them.
"""

from __future__ import annotations

import contextlib
import fcntl
import hashlib
import json
import os
import shutil
import time
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path

import pytest

CACHE_ENV = "TRAVELGYM_TEST_CACHE"
CACHE_LAYOUT = "1"  # this file's layout of the cache directory
BUILD_LOG = "builds.jsonl"


def data_key() -> dict[str, object]:
    """Everything the cached files are a function of: generator and format versions, seeds."""
    from travelgym.suites.behavior2trip import generate as b2t_generate
    from travelgym.suites.behavior2trip import instances as b2t_instances
    from travelgym.suites.behavior2trip import quality as b2t_quality
    from travelgym.suites.behavior2trip import schema as b2t_schema
    from travelgym.suites.compass import generate as compass_generate
    from travelgym.suites.compass import schema as compass_schema
    from travelgym.suites.compass import task_sets as compass_task_sets
    from travelgym.suites.compass import taskgen as compass_taskgen
    from travelgym.suites.compass import tasks as compass_tasks

    return {
        "layout": CACHE_LAYOUT,
        "compass": {
            "generator_version": compass_generate.GENERATOR_VERSION,
            "schema_version": compass_schema.SCHEMA_VERSION,
            "task_generator_version": compass_taskgen.TASK_GENERATOR_VERSION,
            "task_format_version": compass_tasks.TASK_FORMAT_VERSION,
            "ground_truth_format_version": compass_tasks.GROUND_TRUTH_FORMAT_VERSION,
            "task_set_identity_version": compass_task_sets.TASK_SET_IDENTITY_VERSION,
            "tasks_sha256": hashlib.sha256(compass_tasks.PACKAGE_TASKS.read_bytes()).hexdigest(),
            "seed": 0,
        },
        "behavior2trip": {
            "generator_version": b2t_generate.GENERATOR_VERSION,
            "schema_version": b2t_schema.SCHEMA_VERSION,
            "scale": "small",
            "seed": 0,
            "instance_format_version": b2t_instances.INSTANCE_FORMAT_VERSION,
            "instance_generator_version": b2t_instances.INSTANCE_GENERATOR_VERSION,
            "instance_seed": b2t_instances.DEFAULT_INSTANCE_SEED,
            "qc_rules_version": b2t_quality.RULES_VERSION,
            "qc_format_version": b2t_quality.QC_FORMAT_VERSION,
        },
    }


def data_key_hash() -> str:
    text = json.dumps(data_key(), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:16]


def cache_root(config: pytest.Config) -> Path:
    """Where content-addressed test data directories live (see the module docstring)."""
    if os.environ.get(CACHE_ENV):
        root = Path(os.environ[CACHE_ENV]).expanduser()
        root.mkdir(parents=True, exist_ok=True)
        return root.resolve()
    cache = getattr(config, "cache", None)
    if cache is not None:
        return Path(cache.mkdir("travelgym-data")).resolve()
    from platformdirs import user_cache_dir  # -p no:cacheprovider: still one build per machine

    root = Path(user_cache_dir("travelgym", appauthor=False)) / "test-data"
    root.mkdir(parents=True, exist_ok=True)
    return root.resolve()


@contextlib.contextmanager
def exclusive(directory: Path, what: str) -> Iterator[None]:
    """An exclusive ``flock`` on ``directory/.lock-WHAT`` (released when the process dies): one
    lock per build, so a session that needs only the COMPASS data never waits for a
    Behavior2Trip build, nor one that needs the test split for the train split's."""
    with open(directory / f".lock-{what}", "a+") as fh:
        fcntl.flock(fh, fcntl.LOCK_EX)
        try:
            yield
        finally:
            fcntl.flock(fh, fcntl.LOCK_UN)


SIDE_FILES = ("-wal", "-shm", "-journal", ".tmp")  # SQLite's (a reader may touch them), temporaries


def snapshot(directory: Path, under: str = "") -> dict[str, tuple[int, int, int]]:
    """relative path -> (inode, size, mtime_ns) of every file under ``directory`` (the locks,
    the build log, SQLite's -wal/-shm/-journal files and temporaries left out); ``under``: only
    those in that sub-directory."""
    out = {}
    for path in (directory / under).rglob("*"):
        if path.name.startswith(".lock") or path.name == BUILD_LOG:
            continue
        if path.name.endswith(SIDE_FILES):
            continue
        if not path.is_file():
            continue
        st = path.stat()
        out[str(path.relative_to(directory))] = (st.st_ino, st.st_size, st.st_mtime_ns)
    return out


def guarded(name: str) -> bool:
    """Files no test may change once built: the data files tests read (JSONL files, their
    manifests and reports, the databases). Not the suites' own caches of lazily built parts
    (such as a store of instances), which may legitimately grow during a session."""
    return name.endswith((".jsonl", ".json")) or name.endswith(
        ("compass-seed0.sqlite", "compass-seed1.sqlite", "behavior2trip-small-seed0.sqlite")
    )


class TestData:
    """The session's view of the shared data directory: builds under the lock, logged."""

    __test__ = False  # not a test class

    def __init__(self, directory: Path) -> None:
        self.directory = directory
        self.seen: dict[str, tuple[int, int, int]] = {}

    def build(self, what: str, suite: str, make: Callable[[], object]) -> object:
        """``make()`` under the lock of ``what``; what it changed in the ``suite`` sub-directory
        goes to ``builds.jsonl``."""
        (self.directory / suite).mkdir(exist_ok=True)
        with exclusive(self.directory, what):
            before = snapshot(self.directory, suite)
            start = time.perf_counter()
            result = make()
            after = snapshot(self.directory, suite)
            changed = sorted(k for k, v in after.items() if before.get(k) != v)
            entry = {"pid": os.getpid(), "what": what, "changed": changed,
                     "seconds": round(time.perf_counter() - start, 3)}  # fmt: skip
            with open(self.directory / BUILD_LOG, "a", encoding="utf-8") as fh:
                fh.write(json.dumps(entry, sort_keys=True) + "\n")
            self.seen.update(after)
        return result


@pytest.fixture(scope="session")
def test_data(request) -> Iterator[TestData]:
    """The content-addressed shared data directory of this checkout's generator versions."""
    directory = cache_root(request.config) / data_key_hash()
    directory.mkdir(parents=True, exist_ok=True)
    key_file = directory / "key.json"
    if not key_file.exists():
        tmp = directory / f"key.json.{os.getpid()}.tmp"
        tmp.write_text(json.dumps(data_key(), indent=2, sort_keys=True) + "\n")
        tmp.replace(key_file)
    data = TestData(directory)
    yield data
    now = snapshot(directory)
    damaged = sorted(k for k, v in data.seen.items() if now.get(k) != v and guarded(k))
    if damaged:
        pytest.fail(f"tests changed or deleted shared test data in {directory} (work on a "
                    f"private_data_dir copy instead): {damaged}", pytrace=False)  # fmt: skip


@pytest.fixture(scope="session")
def compass_db(test_data) -> Path:
    """Path to the full COMPASS database built with the default seed, its ground truth beside
    it (``<data dir>/compass/``)."""
    from travelgym.suites.compass.build import ensure_database
    from travelgym.suites.compass.ground_truth import ensure_ground_truth

    def make():
        db = ensure_database(seed=0, data_dir=test_data.directory)
        ensure_ground_truth(seed=0, data_dir=test_data.directory)
        return db.path

    return test_data.build("compass", "compass", make)


@pytest.fixture(scope="session")
def compass_seed1_tasks(test_data, compass_db) -> Path:
    """The seed-1 COMPASS database and the task file generated for it (about a minute on a
    cold cache), built once per machine: the modules that need it share one build."""
    from travelgym.suites.compass.task_sets import task_file_for

    return test_data.build("compass-seed1", "compass",
                           lambda: task_file_for(1, test_data.directory))  # fmt: skip


@pytest.fixture(scope="session")
def trips_database(test_data):
    """The default (small, seed 0) Behavior2Trip database as ``ensure_database`` returns it,
    with the test split's instance files (filtered and unfiltered) beside it."""
    from travelgym.suites.behavior2trip.build import ensure_database
    from travelgym.suites.behavior2trip.instances import ensure_instances

    def make():
        db = ensure_database(data_dir=test_data.directory)
        ensure_instances(db, test_data.directory, splits=("test",))
        return db

    return test_data.build("behavior2trip", "behavior2trip", make)


@pytest.fixture(scope="session")
def trips_db(trips_database) -> Path:
    """Path to the default (small, seed 0) Behavior2Trip database."""
    return trips_database.path


@pytest.fixture(scope="session")
def trips_instances(test_data, trips_database) -> dict[str, Path]:
    """The train split's default instance files in the shared data directory (the test split's
    come with ``trips_database``): ``{"train": path}``."""
    from travelgym.suites.behavior2trip.instances import ensure_instances

    def make():
        return ensure_instances(trips_database, test_data.directory, splits=("train",))

    return test_data.build("behavior2trip-train", "behavior2trip", make)


def private_data_dir(target: Path, source: Path, suites: Sequence[str] = ("compass",
                     "behavior2trip"), link: Callable[[Path], bool] = lambda p: False) -> Path:  # fmt: skip
    """Copy the shared data directory's ``suites`` sub-directories into ``target`` (a data
    directory a test may damage); files for which ``link(path)`` is true are hard-linked
    instead (only for files the test never writes)."""
    for suite in suites:
        if not (source / suite).is_dir():
            continue
        (target / suite).mkdir(parents=True, exist_ok=True)
        for path in (source / suite).iterdir():
            if path.is_file():
                dest = target / suite / path.name
                if link(path):
                    os.link(path, dest)
                else:
                    shutil.copy2(path, dest)
    return target


@pytest.fixture()
def no_bwrap(tmp_path, monkeypatch):
    """A PATH without bwrap: the sandbox cannot start (a fresh availability check before and
    after)."""
    from travelgym import sandbox
    from travelgym.sandbox import boundary

    empty = tmp_path / "bin"
    empty.mkdir()
    monkeypatch.setenv("PATH", str(empty))
    boundary._bubblewrap.cache_clear()
    yield
    sandbox.allow_unsafe(False)
    monkeypatch.undo()
    boundary._bubblewrap.cache_clear()


@pytest.fixture
def applied(monkeypatch) -> list[str]:
    """The environment class of every message applied through the episode loop's one body
    (:class:`~travelgym.runner.loop.Conversation`), in order."""
    from travelgym.runner.loop import Conversation

    seen: list[str] = []
    body = Conversation._applied

    def spy(self, message, moved):
        seen.append(type(self.env).__name__)
        return body(self, message, moved)

    monkeypatch.setattr(Conversation, "_applied", spy)
    return seen
