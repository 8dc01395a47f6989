"""Manifests of data files: a damaged one is a one-line error naming it where a user gave the
file, and a cache built again where travelgym built it (``[]`` crashed with an AttributeError,
``{garbage`` stopped every command without naming the file)."""

from __future__ import annotations

import pytest

from travelgym.core.errors import UserError
from travelgym.datafiles import cached_manifest, manifest_path, read_manifest, write_manifest


@pytest.mark.parametrize("text", ["[]", '"str"', "{garbage", "\xff\xfe"])
def test_a_damaged_manifest_is_named_or_treated_as_missing(tmp_path, text):
    data = tmp_path / "x.jsonl"
    data.write_text("{}\n")
    manifest_path(data).write_bytes(text.encode("latin-1"))
    with pytest.raises(UserError, match=r"x\.manifest\.json: not a manifest") as caught:
        read_manifest(data)
    assert "\n" not in str(caught.value)
    assert cached_manifest(data) is None
    write_manifest(data, {"sha256": "a"})
    assert read_manifest(data) == cached_manifest(data) == {"sha256": "a"}
    data.unlink()
    assert cached_manifest(data) is None  # the data file itself is gone


def test_a_fifo_where_a_data_file_belongs_is_rebuilt_not_read(tmp_path):
    """A FIFO named like a cached data file (its manifest beside it) blocked the command that
    checked it (``solve`` hung reading ``tasks-seed1.partial.jsonl``)."""
    import os

    from travelgym.datafiles import cached_manifest, intact_manifest, manifest_path

    path = tmp_path / "tasks.jsonl"
    os.mkfifo(path)
    manifest_path(path).write_text('{"sha256": "0"}')
    assert cached_manifest(path) is None and intact_manifest(path, {}) is None
