"""Runs a command as a child subreaper and, when it ends, ends everything it left behind.

Daemons a test starts (gnome-keyring-daemon forks away and blocks SIGTERM; dbus-daemon is left by
dbus-run-session when its child dies) are reparented to this process rather than to init, because it is a child
subreaper (prctl PR_SET_CHILD_SUBREAPER). When the command exits, every process still below this one gets SIGKILL
and is reaped, so a test run leaves no process behind, passed or failed. Exits with the command's status.
    reap.py COMMAND [ARGS...]
"""
import ctypes
import os
import signal
import sys

PR_SET_CHILD_SUBREAPER = 36


def children(pid: int) -> list[int]:
    out = []
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        if int(fields[1]) == pid:
            out.append(int(name))
    return out


def end_left_behind() -> None:
    """Kills and reaps whatever is still below this process (a subreaper's orphans included)."""
    while True:
        left = children(os.getpid())
        if not left:
            break
        for p in left:
            try:
                os.kill(p, signal.SIGKILL)
            except ProcessLookupError:
                pass
        for p in left:
            try:
                os.waitpid(p, 0)
            except ChildProcessError:
                pass


def main() -> int:
    ctypes.CDLL(None, use_errno=True).prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)
    pid = os.fork()
    if pid == 0:
        os.execvp(sys.argv[1], sys.argv[1:])
    _, status = os.waitpid(pid, 0)
    end_left_behind()
    return os.waitstatus_to_exitcode(status) if os.WIFEXITED(status) else 128 + os.WTERMSIG(status)


if __name__ == "__main__":
    sys.exit(main())
