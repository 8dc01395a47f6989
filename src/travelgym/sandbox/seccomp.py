"""A seccomp filter that refuses memory the resource limits cannot see.

``RLIMIT_AS`` counts the address space of the sandbox's processes; pages of a ``memfd``, of a
System V shared-memory segment or of a ``memfd_secret`` area stay allocated after they are
unmapped, so code could hold any amount of memory under any limit. This machine offers no
writable cgroup v2 to charge them to, so the sandbox refuses the calls that create such memory
(``EPERM``); ``/dev/shm`` is already read-only there (POSIX ``shm_open`` fails), and the
working directory's tmpfs is size-capped. The filter is classic BPF, handed to ``bwrap
--seccomp``; syscalls of a foreign ABI (32-bit, x32) are refused whole.
"""

from __future__ import annotations

import errno
import os
import platform
import struct

# audit architecture and the numbers of memfd_create, memfd_secret and shmget, per machine
_TABLES = {
    "x86_64": (0xC000003E, (319, 447, 29)),
    "aarch64": (0xC00000B7, (279, 447, 194)),
}
_X32_BIT = 0x40000000
_LD_W_ABS, _JEQ, _JGE, _RET = 0x20, 0x15, 0x35, 0x06
_ALLOW, _ERRNO = 0x7FFF0000, 0x00050000
_NR, _ARCH = 0, 4  # offsets in struct seccomp_data


def _op(code: int, k: int, jt: int = 0, jf: int = 0) -> bytes:
    return struct.pack("=HBBI", code, jt, jf, k)


def program(machine: str | None = None) -> bytes | None:
    """The filter for ``machine`` (this one by default), or None where no table is known."""
    table = _TABLES.get(machine or platform.machine())
    if table is None:
        return None
    arch, refused = table
    body = [_op(_LD_W_ABS, _NR)]
    if arch == _TABLES["x86_64"][0]:
        body.append((_JGE, _X32_BIT))
    body += [(_JEQ, nr) for nr in refused]
    # each tuple jumps to the refusal when it holds (the architecture test: when it fails)
    ops = [_op(_LD_W_ABS, _ARCH), (_JEQ, arch, True), *body, _op(_RET, _ALLOW),
           _op(_RET, _ERRNO | errno.EPERM)]  # fmt: skip
    deny_at = len(ops) - 1
    out = []
    for i, op in enumerate(ops):
        if isinstance(op, bytes):
            out.append(op)
            continue
        code, k, *negate = op
        skip = deny_at - i - 1  # jump offsets count from the next instruction
        out.append(_op(code, k, 0, skip) if negate else _op(code, k, skip, 0))
    return b"".join(out)


def filter_fd() -> int | None:
    """A readable descriptor holding this machine's filter, for ``bwrap --seccomp`` (the caller
    closes it), or None where no filter is known for this machine."""
    code = program()
    if code is None:
        return None
    read, write = os.pipe()
    try:
        os.write(write, code)  # a few hundred bytes: well within a pipe's buffer
    finally:
        os.close(write)
    return read
