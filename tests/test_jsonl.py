"""JSON Lines reading: every failure names the file, the line and the reason."""

from __future__ import annotations

import pytest

from travelgym.jsonl import JsonLinesError, iter_json_lines


def test_values_come_with_their_line_numbers_and_blank_lines_are_skipped(tmp_path):
    path = tmp_path / "a.jsonl"
    path.write_bytes(b'{"a": 1}\n\n  \n[2, "\xc3\xa9"]\n"last"')
    assert list(iter_json_lines(path)) == [(1, {"a": 1}), (4, [2, "\u00e9"]), (5, "last")]


def short_id(value: object) -> str | None:
    """Test ids of a readable length for long byte strings."""
    return repr(value)[:40] if isinstance(value, bytes) else None


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"ok": 1}\n{"task_id": \n', ":2: not valid JSON (Expecting value at column 13)"),
        (b'{"ok": 1}\n' + b"[" * 100_000 + b"]" * 100_000 + b"\n", ":2: JSON nested too deeply"),
        (b'{"n": ' + b"7" * 50_000 + b"}\n", ":1: not valid JSON (Exceeds the limit"),
        (b'{"ok": 1}\n{"t": "caf\xe9"}\n', ":2: not UTF-8 text (invalid continuation byte at byte"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", ":1: not UTF-8 text"),
        (b"\x00\x00\x00\n", ":1: not valid JSON"),
    ],
    ids=short_id,
)  # fmt: skip
def test_bad_lines_name_file_line_and_reason(tmp_path, content, reason):
    path = tmp_path / "bad.jsonl"
    path.write_bytes(content)
    with pytest.raises(JsonLinesError) as info:
        list(iter_json_lines(path))
    assert str(info.value).startswith(str(path) + ":") and reason in str(info.value)
    assert "\n" not in str(info.value)


def test_unreadable_files_are_json_lines_errors(tmp_path):
    with pytest.raises(JsonLinesError, match="cannot read"):
        list(iter_json_lines(tmp_path / "missing.jsonl"))
    with pytest.raises(JsonLinesError, match="cannot read"):
        list(iter_json_lines(tmp_path))  # a directory
