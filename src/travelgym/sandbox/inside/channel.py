"""Length-prefixed frames over one socket: the only link between sandboxed code and the benchmark.

A frame is a one-byte kind, a 4-byte big-endian length and that many bytes. The parent sends the
job and the workspace archive; the code side sends tool calls (answered by replies), then its
status and the new workspace archive. What the trusted parent sends is ``marshal`` data (no
import cost inside); what the code side sends is JSON, which the parent parses as untrusted
input. Standalone: imported inside the sandbox and by the parent.
"""

from __future__ import annotations

import os
import struct
from _json import encode_basestring_ascii

HEADER = struct.Struct(">cI")
JOB, ARCHIVE, CALL, REPLY, STATUS = b"J", b"A", b"C", b"R", b"S"
KINDS = frozenset({JOB, ARCHIVE, CALL, REPLY, STATUS})


def encode_json(value: object) -> bytes:
    """ASCII JSON of dicts, lists, tuples, strings, numbers, booleans and None (other values as
    their ``repr``; non-finite floats as null), without importing the json package."""
    parts: list[str] = []
    _encode(value, parts, 0)
    return "".join(parts).encode("ascii")


def _encode(value: object, out: list[str], depth: int) -> None:
    if depth > 200:
        raise ValueError("nested too deeply to encode")
    if value is None or value is True or value is False:
        out.append({None: "null", True: "true", False: "false"}[value])
    elif isinstance(value, str):
        out.append(encode_basestring_ascii(value))
    elif isinstance(value, int):
        out.append(int.__repr__(value))
    elif isinstance(value, float):
        out.append(float.__repr__(value) if value - value == 0 else "null")
    elif isinstance(value, dict):
        out.append("{")
        for i, (key, item) in enumerate(value.items()):
            out.append(("," if i else "") + encode_basestring_ascii(str(key)) + ":")
            _encode(item, out, depth + 1)
        out.append("}")
    elif isinstance(value, (list, tuple, set, frozenset)):
        out.append("[")
        for i, item in enumerate(value):
            if i:
                out.append(",")
            _encode(item, out, depth + 1)
        out.append("]")
    else:
        out.append(encode_basestring_ascii(repr(value)))


class ChannelError(Exception):
    """The other side closed the channel or sent something that is not a frame."""


def pack(kind: bytes, payload: bytes) -> bytes:
    """One frame as bytes."""
    return HEADER.pack(kind, len(payload)) + payload


def write_frame(fd: int, kind: bytes, payload: bytes) -> None:
    """Write a whole frame to ``fd`` (short writes are continued)."""
    view = memoryview(pack(kind, payload))
    while view:
        view = view[os.write(fd, view) :]


def _read_exact(fd: int, size: int) -> bytes:
    chunks, left = [], size
    while left:
        chunk = os.read(fd, min(left, 1 << 20))
        if not chunk:
            raise ChannelError("the channel closed mid-frame")
        chunks.append(chunk)
        left -= len(chunk)
    return b"".join(chunks)


def read_frame(fd: int, expect: bytes, limit: int) -> bytes:
    """Read one frame of kind ``expect`` and at most ``limit`` bytes from ``fd``."""
    kind, size = HEADER.unpack(_read_exact(fd, HEADER.size))
    if kind != expect or size > limit:
        raise ChannelError(f"expected a {expect!r} frame of at most {limit} bytes")
    return _read_exact(fd, size)


class FrameReader:
    """Incremental parser for the parent: feed received bytes, take whole frames.

    ``limits`` maps each accepted kind to its largest payload; anything else is an error.
    """

    def __init__(self, limits: dict[bytes, int]) -> None:
        self.limits = limits
        self.buffer = bytearray()

    def feed(self, data: bytes) -> list[tuple[bytes, bytes]]:
        """Add bytes; return the frames now complete (raises :class:`ChannelError`)."""
        self.buffer += data
        frames = []
        while len(self.buffer) >= HEADER.size:
            kind, size = HEADER.unpack_from(self.buffer)
            if kind not in self.limits or size > self.limits[kind]:
                raise ChannelError(f"unexpected frame {kind!r} of {size} bytes")
            end = HEADER.size + size
            if len(self.buffer) < end:
                break
            frames.append((kind, bytes(self.buffer[HEADER.size : end])))
            del self.buffer[:end]
        return frames
