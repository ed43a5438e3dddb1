"""Runs a command with io_uring refused, as a container's seccomp profile refuses it (Docker's default since 25.0).

    python3 deny_io_uring.py PROGRAM [ARGS...]

Installs a seccomp filter that answers `io_uring_setup(2)` with EPERM and allows every other system call, then
executes PROGRAM in place of this process (the filter stays with it). Used by test_event_loop.py to check that the
server falls back to one `send(2)` per write, and says so, when the kernel refuses io_uring.
"""
from __future__ import annotations

import ctypes
import errno
import os
import platform
import sys

PR_SET_NO_NEW_PRIVS = 38
PR_SET_SECCOMP = 22
SECCOMP_MODE_FILTER = 2
SECCOMP_RET_ALLOW = 0x7FFF0000
SECCOMP_RET_ERRNO = 0x00050000
# The architecture seccomp reports (`seccomp_data.arch`, <linux/audit.h>); a call from another ABI is allowed.
AUDIT_ARCH = {"x86_64": 0xC000003E, "aarch64": 0xC00000B7}
# io_uring_setup has the same number on every architecture (the common syscall table since Linux 5.1).
NR_IO_URING_SETUP = 425
# Classic BPF opcodes: load a word of `seccomp_data` (nr at offset 0, arch at 4), jump if equal, return.
LD_W_ABS, JEQ_K, RET_K = 0x20, 0x15, 0x06


class SockFilter(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint16), ("jt", ctypes.c_uint8), ("jf", ctypes.c_uint8), ("k", ctypes.c_uint32)]


class SockFprog(ctypes.Structure):
    _fields_ = [("len", ctypes.c_uint16), ("filter", ctypes.POINTER(SockFilter))]


def deny_io_uring() -> None:
    """Installs the filter on this process (and what it executes), or raises OSError."""
    arch = AUDIT_ARCH[platform.machine()]
    program = [
        SockFilter(LD_W_ABS, 0, 0, 4),                        # arch
        SockFilter(JEQ_K, 0, 3, arch),                        # another ABI: allow
        SockFilter(LD_W_ABS, 0, 0, 0),                        # nr
        SockFilter(JEQ_K, 0, 1, NR_IO_URING_SETUP),           # not io_uring_setup: allow
        SockFilter(RET_K, 0, 0, SECCOMP_RET_ERRNO | errno.EPERM),
        SockFilter(RET_K, 0, 0, SECCOMP_RET_ALLOW),
    ]
    filters = (SockFilter * len(program))(*program)
    fprog = SockFprog(len(program), filters)
    libc = ctypes.CDLL(None, use_errno=True)
    if libc.prctl(PR_SET_NO_NEW_PRIVS, 1, 0, 0, 0) != 0 or \
            libc.prctl(PR_SET_SECCOMP, SECCOMP_MODE_FILTER, ctypes.byref(fprog), 0, 0) != 0:
        code = ctypes.get_errno()
        raise OSError(code, os.strerror(code))


if __name__ == "__main__":
    if len(sys.argv) < 2:
        sys.exit("usage: deny_io_uring.py PROGRAM [ARGS...]")
    deny_io_uring()
    os.execv(sys.argv[1], sys.argv[1:])
