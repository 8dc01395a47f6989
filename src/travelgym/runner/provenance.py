"""Where a run's code came from, for its manifest: the harness's git commit when it runs from a
checkout (and whether the checkout had uncommitted changes), the Python version and the versions
of the installed packages that shape results.

Every part is optional: a value that cannot be found is ``None`` (a package that is not
installed is left out), and nothing here ever fails a run. None of it is part of a run's
identity: resuming a run on another commit continues the same run (its manifest then records
the commit of the latest session).
"""

from __future__ import annotations

import importlib.metadata
import os
import platform
import re
import shutil
import subprocess
from pathlib import Path
from typing import Any

# the packages whose versions can change a run's results (model clients, local inference,
# training); recorded where installed
RESULT_PACKAGES = ("openai", "litellm", "transformers", "torch", "trl", "vllm",
                   "llama-cpp-python")  # fmt: skip
GIT_TIMEOUT_S = 10.0
# the package's own file, found without importing the package root (no import cycle)
PACKAGE_INIT = Path(__file__).resolve().parent.parent / "__init__.py"
_SHA = re.compile(r"^[0-9a-f]{40}([0-9a-f]{24})?$")


def provenance() -> dict[str, Any]:
    """The manifest's ``provenance`` entry: ``git_commit`` and ``git_dirty`` (``None`` when
    not run from a checkout or unknown), ``python`` and ``packages`` (name -> version)."""
    checkout = source_checkout(PACKAGE_INIT)
    commit = git_commit(checkout) if checkout is not None else None
    return {
        "git_commit": commit,
        "git_dirty": git_dirty(checkout) if commit is not None else None,
        "python": f"{platform.python_implementation()} {platform.python_version()}",
        "packages": package_versions(RESULT_PACKAGES),
    }


def package_versions(names: tuple[str, ...]) -> dict[str, str]:
    """Name -> installed version of each of ``names`` that is installed."""
    found = {}
    for name in names:
        try:
            found[name] = importlib.metadata.version(name)
        except (importlib.metadata.PackageNotFoundError, ValueError):
            continue
    return found


def source_checkout(module_file: Path) -> Path | None:
    """The work tree of the git checkout ``module_file`` lives in (an editable install or a
    source tree on the path), or ``None``: a package installed into ``site-packages`` is not
    the code of any checkout above it (say, a virtual environment inside a repository)."""
    path = module_file.resolve()
    if {"site-packages", "dist-packages"} & set(path.parts):
        return None
    for parent in path.parents:
        if (parent / ".git").exists():
            return parent
    return None


def git_commit(checkout: Path) -> str | None:
    """The commit ``HEAD`` of ``checkout`` names, read from the repository's files (no ``git``
    binary needed): a detached head, a loose ref or a packed ref; ``None`` if unreadable."""
    try:
        git_dir = _git_dir(checkout)
        head = (git_dir / "HEAD").read_text(encoding="utf-8").strip()
        if _SHA.match(head):
            return head
        if not head.startswith("ref:"):
            return None
        ref = head[4:].strip()
        common = _common_dir(git_dir)
        for base in dict.fromkeys((git_dir, common)):
            loose = base / ref
            if loose.is_file():
                value = loose.read_text(encoding="utf-8").strip()
                return value if _SHA.match(value) else None
        return _packed_ref(common / "packed-refs", ref)
    except (OSError, UnicodeDecodeError):
        return None


def _git_dir(checkout: Path) -> Path:
    """The repository directory of ``checkout``: ``.git`` itself, or where a ``.git`` file
    (a linked work tree, a submodule) points."""
    dot_git = checkout / ".git"
    if dot_git.is_dir():
        return dot_git
    text = dot_git.read_text(encoding="utf-8").strip()
    if not text.startswith("gitdir:"):
        raise OSError(f"{dot_git}: not a gitdir file")
    return (checkout / text[len("gitdir:") :].strip()).resolve()


def _common_dir(git_dir: Path) -> Path:
    """Where the shared refs live (a linked work tree's ``commondir``; else ``git_dir``)."""
    pointer = git_dir / "commondir"
    if pointer.is_file():
        return (git_dir / pointer.read_text(encoding="utf-8").strip()).resolve()
    return git_dir


def _packed_ref(path: Path, ref: str) -> str | None:
    """The commit of ``ref`` in a ``packed-refs`` file, or ``None``."""
    if not path.is_file():
        return None
    for line in path.read_text(encoding="utf-8").splitlines():
        value, _, name = line.partition(" ")
        if name.strip() == ref and _SHA.match(value):
            return value
    return None


def git_dirty(checkout: Path) -> bool | None:
    """Whether tracked files of ``checkout`` differ from its commit (``git status``; files git
    does not track are not counted), or ``None`` without a working ``git`` in time."""
    git = shutil.which("git")
    if git is None:
        return None
    # no optional locks: the check must not take the index lock another git command may need
    env = {**os.environ, "GIT_OPTIONAL_LOCKS": "0"}
    try:
        done = subprocess.run(
            [git, "-C", str(checkout), "status", "--porcelain", "--untracked-files=no"],
            capture_output=True, timeout=GIT_TIMEOUT_S, env=env, check=False,
        )  # fmt: skip
    except (OSError, subprocess.SubprocessError):
        return None
    if done.returncode != 0:
        return None
    return bool(done.stdout.strip())
