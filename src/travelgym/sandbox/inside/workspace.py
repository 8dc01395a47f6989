"""The working directory as bytes: packed after each call, unpacked before the next.

The sandbox's working directory is a fresh size-capped tmpfs for every call; its files survive
from one call of an episode to the next as this archive, which the benchmark keeps as opaque
bytes and never unpacks on its own file system. Regular files and directories only (links and
special files are not kept). Standalone: runs inside the sandbox.
"""

from __future__ import annotations

import os
import stat
import struct

ENTRY = struct.Struct(">BHHQ")  # kind, mode, path length, data length
DIRECTORY, FILE = 0, 1


class ArchiveError(ValueError):
    """An archive that cannot be unpacked safely."""


def pack(root: str, limit: int) -> bytes:
    """Every directory and regular file under ``root`` (at most ``limit`` bytes in all)."""
    out, total = bytearray(), 0
    for top, dirs, files in os.walk(root):
        dirs.sort()
        for name in sorted(dirs) + sorted(files):
            path = os.path.join(top, name)
            info = os.lstat(path)
            rel = os.path.relpath(path, root).encode("utf-8", "surrogateescape")
            if stat.S_ISDIR(info.st_mode):
                out += ENTRY.pack(DIRECTORY, info.st_mode & 0o777, len(rel), 0) + rel
            elif stat.S_ISREG(info.st_mode):
                with open(path, "rb") as fh:
                    data = fh.read(limit - total + 1)
                total += len(data)
                if total > limit:
                    raise ArchiveError(f"the working directory holds more than {limit} bytes")
                out += ENTRY.pack(FILE, info.st_mode & 0o777, len(rel), len(data)) + rel + data
    return bytes(out)


def _safe_relative(raw: bytes) -> str:
    rel = raw.decode("utf-8", "surrogateescape")
    parts = rel.split("/")
    if not rel or rel.startswith("/") or any(p in ("", ".", "..") for p in parts):
        raise ArchiveError(f"unsafe path in the archive: {rel!r}")
    return rel


def unpack(data: bytes, root: str) -> int:
    """Recreate the archive's entries under ``root``; returns the number of entries."""
    offset, count = 0, 0
    while offset < len(data):
        if offset + ENTRY.size > len(data):
            raise ArchiveError("truncated archive")
        kind, mode, path_len, size = ENTRY.unpack_from(data, offset)
        offset += ENTRY.size
        rel = _safe_relative(data[offset : offset + path_len])
        offset += path_len
        path = os.path.join(root, rel)
        if kind == DIRECTORY:
            os.makedirs(path, mode=0o700, exist_ok=True)
            os.chmod(path, mode | 0o700)
        elif kind == FILE:
            if offset + size > len(data):
                raise ArchiveError("truncated archive")
            flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0)
            fd = os.open(path, flags, 0o600)
            try:
                view = memoryview(data)[offset : offset + size]
                while view:
                    view = view[os.write(fd, view) :]
            finally:
                os.close(fd)
            os.chmod(path, mode)
            offset += size
        else:
            raise ArchiveError(f"unknown archive entry kind {kind}")
        count += 1
    return count
