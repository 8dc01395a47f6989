"""The manifest's provenance: the harness's git commit (read from the checkout's files, a dirty
flag from ``git status``) when installed from a checkout, the Python version and the installed
result-shaping packages; never part of a run's identity; shown in the report's run facts."""

from __future__ import annotations

import importlib.metadata
import json
import platform
import shutil
import subprocess
from pathlib import Path

from click.testing import CliRunner

import travelgym
from travelgym.cli import main
from travelgym.runner import batch
from travelgym.runner.provenance import (
    RESULT_PACKAGES,
    git_commit,
    git_dirty,
    package_versions,
    provenance,
    source_checkout,
)

ROOT = Path(__file__).resolve().parents[2]
SHA_A, SHA_B, SHA_C = "a" * 40, "b" * 40, "c" * 40


def _git(repo: Path, *args: str) -> str:
    env = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
           "GIT_COMMITTER_EMAIL": "t@t", "HOME": str(repo), "PATH": "/usr/bin:/bin"}  # fmt: skip
    git = shutil.which("git")
    assert git is not None, "these tests need git"
    done = subprocess.run([git, "-C", str(repo), *args], capture_output=True, text=True,
                          env=env, check=True)  # fmt: skip
    return done.stdout.strip()


def test_the_commit_is_read_from_the_checkouts_files_as_git_reads_it(tmp_path):
    repo = tmp_path / "repo"
    (repo / "src" / "pkg").mkdir(parents=True)
    (repo / "src" / "pkg" / "mod.py").write_text("x = 1\n")
    _git(repo, "init", "-q", "-b", "main")
    _git(repo, "add", "src")
    _git(repo, "commit", "-q", "-m", "one")
    assert source_checkout(repo / "src" / "pkg" / "mod.py") == repo.resolve()
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD")  # a loose ref
    assert git_dirty(repo) is False
    (repo / "untracked.txt").write_text("not counted\n")
    assert git_dirty(repo) is False
    (repo / "src" / "pkg" / "mod.py").write_text("x = 2\n")
    assert git_dirty(repo) is True
    _git(repo, "commit", "-q", "-am", "two")
    _git(repo, "pack-refs", "--all")
    assert not (repo / ".git" / "refs" / "heads" / "main").exists()
    assert git_commit(repo) == _git(repo, "rev-parse", "HEAD")  # a packed ref
    first = _git(repo, "rev-parse", "HEAD~1")
    _git(repo, "checkout", "-q", "--detach", first)
    assert git_commit(repo) == first  # a detached head
    linked = tmp_path / "linked"
    _git(repo, "worktree", "add", "-q", "-b", "side", str(linked), "main")
    assert (linked / ".git").is_file()
    assert git_commit(linked) == _git(linked, "rev-parse", "HEAD")


def test_a_package_in_site_packages_or_without_a_checkout_has_no_commit(tmp_path):
    venv = tmp_path / "repo" / ".venv" / "lib" / "python3" / "site-packages" / "travelgym"
    venv.mkdir(parents=True)
    (tmp_path / "repo" / ".git").mkdir()
    assert source_checkout(venv / "__init__.py") is None
    plain = tmp_path / "plain" / "x.py"
    plain.parent.mkdir()
    plain.write_text("")
    assert source_checkout(plain) is None  # pytest's temporary directory is in no checkout
    broken = tmp_path / "broken"
    (broken / ".git").mkdir(parents=True)
    (broken / ".git" / "HEAD").write_text("ref: refs/heads/none\n")
    assert git_commit(broken) is None  # an unborn branch: no commit, no error
    (broken / ".git" / "HEAD").write_text("garbage\n")
    assert git_commit(broken) is None


def test_package_versions_are_the_installed_ones_only():
    found = package_versions(("openai", "no-such-package-travelgym-test"))
    assert found == {"openai": importlib.metadata.version("openai")}


def _run(tmp_path: Path, compass_db: Path, *extra: str) -> dict:
    args = ["run", "compass", "--agent", "scripted:greedy", "--limit", "1", "--no-progress",
            "--out", str(tmp_path / "out"), "--data-dir", str(compass_db.parent.parent), *extra]  # fmt: skip
    done = CliRunner().invoke(main, args)
    assert done.exit_code == 0, done.output
    (manifest,) = (tmp_path / "out").rglob("manifest.json")
    return json.loads(manifest.read_text())


def test_the_manifest_records_the_checkouts_commit_and_package_versions(tmp_path, compass_db):
    """travelgym is installed from this checkout (editable) in the tests: its run manifests
    carry the checkout's HEAD and whether it was dirty, Python's version and the packages."""
    assert source_checkout(Path(travelgym.__file__)) == ROOT
    heads = {_git(ROOT, "rev-parse", "HEAD")}
    found = _run(tmp_path, compass_db)["provenance"]
    heads.add(_git(ROOT, "rev-parse", "HEAD"))  # others may commit meanwhile
    assert found["git_commit"] in heads
    assert found["git_dirty"] in (True, False)
    assert found["python"] == f"{platform.python_implementation()} {platform.python_version()}"
    installed = package_versions(RESULT_PACKAGES)
    assert found["packages"] == installed and installed["openai"]


def test_provenance_is_recorded_but_no_part_of_the_identity(tmp_path, compass_db, monkeypatch):
    """A run resumed on another commit is the same run; the manifest records the new commit."""
    monkeypatch.setattr(batch, "provenance", lambda: {**provenance(), "git_commit": SHA_A})
    assert _run(tmp_path, compass_db)["provenance"]["git_commit"] == SHA_A
    other = {**provenance(), "git_commit": SHA_B, "git_dirty": True, "packages": {}}
    monkeypatch.setattr(batch, "provenance", lambda: other)
    assert _run(tmp_path, compass_db, "--resume")["provenance"] == other


def test_the_report_shows_the_commit_and_the_package_versions(tmp_path, compass_db, monkeypatch):
    recorded = {"git_commit": SHA_C, "git_dirty": True, "python": "CPython 3.99.1",
                "packages": {"openai": "9.8.7", "torch": "6.5.4"}}  # fmt: skip
    monkeypatch.setattr(batch, "provenance", lambda: recorded)
    _run(tmp_path, compass_db)
    (run_dir,) = (p.parent for p in (tmp_path / "out").rglob("manifest.json"))
    page = tmp_path / "report.html"
    done = CliRunner().invoke(main, ["report", str(run_dir), "--out", str(page)])
    assert done.exit_code == 0, done.output
    html = page.read_text()
    assert f"@ {SHA_C[:12]}+dirty, CPython 3.99.1, openai 9.8.7, torch 6.5.4" in html
