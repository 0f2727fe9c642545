"""``python guard.py PARENT_PID COMMAND [ARG…]``: runs an MCP server so that it cannot
outlive mttui.

Started by mttui in a new session (its own process group). It asks the kernel for
SIGTERM when its parent dies (``PR_SET_PDEATHSIG``: a SIGKILLed mttui gets no chance
to clean up), starts the server in the same group with the guard's stdin/stdout/stderr,
and on that signal — or SIGHUP/SIGINT — kills the whole group (the server and anything
it started). Otherwise it exits with the server's status. Run by path with the standard
library only: no mttui import, a short start.
"""

import ctypes
import os
import signal
import sys

PR_SET_PDEATHSIG = 1


def _kill_group(signum: int, frame: object) -> None:
    os.killpg(0, signal.SIGKILL)  # the guard is in the group too: it ends here


def main(argv: list[str]) -> int:
    parent, command = int(argv[1]), argv[2:]
    if sys.platform.startswith("linux"):
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM, 0, 0, 0)
    for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
        signal.signal(sig, _kill_group)
    if os.getppid() != parent:  # mttui died before the prctl took effect
        _kill_group(signal.SIGTERM, None)
    try:
        child = os.fork()
    except OSError as exc:
        print(f"cannot start {command[0]}: {exc.strerror}", file=sys.stderr)
        return 127
    if child == 0:
        for sig in (signal.SIGTERM, signal.SIGHUP, signal.SIGINT):
            signal.signal(sig, signal.SIG_DFL)
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            print(f"cannot run {command[0]}: {exc.strerror}", file=sys.stderr, flush=True)
        os._exit(127)
    # the guard keeps no pipe end it does not need: the server alone answers on stdout
    devnull = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1):
        os.dup2(devnull, fd)
    while True:
        try:
            _, status = os.waitpid(child, 0)
            break
        except ChildProcessError:
            return 0
        except InterruptedError:
            continue
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    os.killpg(0, signal.SIGTERM)  # what the server left behind in its group
    return os.waitstatus_to_exitcode(status)  # -N: killed by signal N


if __name__ == "__main__":
    code = main(sys.argv)
    sys.exit(code if code >= 0 else 128 - code)
