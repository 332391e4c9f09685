"""Whether a part of an outbox can hold only the user's own events, as ssh asks of its keys.

What an outbox holds is sent as the user's events through the user's transport, so a folder
or file of it that another user owns (root aside) or that group or others may write could
carry planted events: :func:`ensure_trusted` refuses it with :class:`UnsafeOutbox`, whose text
is one line naming the path, what is wrong and what to do.
"""

from __future__ import annotations

import errno
import os
import shlex
import stat
from pathlib import Path

from openlineage_subset import OpenLineageSubsetError


class UnsafeOutbox(OSError, OpenLineageSubsetError):
    """A part of the outbox another user wrote or could write: the outbox is refused.

    ``str()`` is one line naming the path, what is wrong and what to do.
    """

    def __init__(self, message: str) -> None:
        super().__init__(errno.EPERM, message)

    def __str__(self) -> str:
        return str(self.strerror)


def trust_problem(info: os.stat_result, uid: int) -> str | None:
    """Why a file or folder with status ``info`` cannot be trusted by the user ``uid`` to hold
    only their own events; None when it can (owned by ``uid`` or root, and writable by neither
    group nor others).

    >>> def folder(mode, uid):  # what os.stat gives: mode, ino, dev, nlink, uid, gid, ...
    ...     return os.stat_result((stat.S_IFDIR | mode, 0, 0, 2, uid, uid, 0, 0, 0, 0))
    >>> trust_problem(folder(0o700, 1000), 1000) is None, trust_problem(folder(0o755, 0), 1000)
    (True, None)
    >>> trust_problem(folder(0o1777, 1000), 1000)
    'writable by group and others (mode 1777)'
    >>> trust_problem(folder(0o700, 1001), 1000)
    'owned by uid 1001, neither you (uid 1000) nor root'
    """
    if info.st_uid not in (uid, 0):
        return f"owned by uid {info.st_uid}, neither you (uid {uid}) nor root"
    writers = [
        who
        for who, bit in (("group", stat.S_IWGRP), ("others", stat.S_IWOTH))
        if info.st_mode & bit
    ]
    if writers:
        return f"writable by {' and '.join(writers)} (mode {stat.S_IMODE(info.st_mode):04o})"
    return None


def ensure_trusted(fd: int, path: Path) -> None:
    """Raise :class:`UnsafeOutbox` when the open file or folder ``fd`` (at ``path``) cannot be
    trusted (see :func:`trust_problem`) by the user running this process.

    Example::

        fd = os.open(lane_path, os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW)
        ensure_trusted(fd, lane_path)
        # UnsafeOutbox: refused outbox part /tmp/o/lane-0: writable by group and others
        # (mode 0777), so another user could have put events in it; run `chmod 700 ...`
    """
    info = os.fstat(fd)
    problem = trust_problem(info, os.geteuid())
    if problem is None:
        return
    quoted = shlex.quote(str(path))
    if problem.startswith("owned"):
        fix = "remove it (its events are not yours to send), or choose another outbox"
    else:
        mode = "700" if stat.S_ISDIR(info.st_mode) else "600"
        fix = f"run `chmod {mode} {quoted}` if you made it, else remove it"
    raise UnsafeOutbox(
        f"refused outbox part {path}: {problem}, so another user could have put events in it; {fix}"
    )
