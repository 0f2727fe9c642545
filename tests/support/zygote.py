"""A warm parent for the ``mttui`` processes of the tests.

Most process tests start ``mttui`` many times (a kill at every boundary, then a
resume, then a check), and each start spends ~1.5 s of CPU importing LangGraph and
LangChain before it does anything. This module, run as a script, imports them once
and then forks a child per request: the child is a real, separate process (its own
pid and session, killed by a real SIGKILL at its crash point), it only skips the
imports. Tests about start-up itself (what a fresh process imports, how long it
takes) keep using plain subprocesses.

Requests come over a Unix socket, one per connection: a JSON line with the entry
(``cli``, ``fault`` or ``crash_loop``: the same entry points as the scripts), the
arguments, the working directory, the environment and the files for stdout/stderr.
The answer is the child's pid, then its wait status once it has ended.
"""

from __future__ import annotations

import atexit
import contextlib
import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent


# -- the client (in the test process) --------------------------------------------------
class Zygote:
    """A running warm parent; ``run`` is ``subprocess.run(..., capture_output=True)``."""

    def __init__(self) -> None:
        self.dir = Path(tempfile.mkdtemp(prefix="mttui-zygote-"))
        self.sock = str(self.dir / "s")
        self.proc = subprocess.Popen([sys.executable, __file__, self.sock],
                                     stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
                                     start_new_session=True)  # fmt: skip
        assert self.proc.stdout is not None
        if self.proc.stdout.readline().strip() != b"ready":
            raise RuntimeError("the test zygote did not start")

    def run(self, entry: str, args: list[str], *, cwd: Path | str, env: dict[str, str],
            timeout: float = 60) -> subprocess.CompletedProcess[str]:
        out, err = (_empty_file(self.dir) for _ in "oe")
        request = {"entry": entry, "args": args, "cwd": str(cwd), "env": env,
                   "out": out, "err": err}
        with socket.socket(socket.AF_UNIX) as conn:
            conn.connect(self.sock)
            conn.sendall(json.dumps(request).encode() + b"\n")
            conn.settimeout(timeout)
            reader = conn.makefile("rb")
            pid = int(json.loads(reader.readline())["pid"])
            try:
                answer = reader.readline()
            except TimeoutError:
                os.killpg(pid, signal.SIGKILL)
                raise subprocess.TimeoutExpired(args, timeout) from None
        code = os.waitstatus_to_exitcode(int(json.loads(answer)["status"]))
        texts = [Path(f).read_text(encoding="utf-8", errors="replace") for f in (out, err)]
        for f in (out, err):
            os.unlink(f)
        return subprocess.CompletedProcess(args, code, texts[0], texts[1])

    def close(self) -> None:
        self.proc.kill()
        self.proc.wait()


def _empty_file(folder: Path) -> str:
    fd, path = tempfile.mkstemp(dir=folder)
    os.close(fd)
    return path


_shared: list[Zygote] = []


def shared() -> Zygote:
    """The test session's zygote, started on first use and stopped at exit."""
    if not _shared or _shared[0].proc.poll() is not None:
        _shared[:] = [Zygote()]
        atexit.register(_shared[0].close)
    return _shared[0]


SCRIPTS = {"cli": ["-m", "mttui.cli"], "fault": [str(HERE / "fault_entry.py")],
           "crash_loop": [str(HERE / "crash_loop.py")]}


def _same_interpreter(env: dict[str, str]) -> bool:
    """Whether a fresh interpreter with ``env`` would start like the zygote did (the
    same Python flags, import path, locale and stream encodings)."""
    def shaping(e: dict[str, str] | os._Environ[str]) -> dict[str, str]:
        return {k: v for k, v in e.items()
                if k.startswith(("PYTHON", "LC_")) or k in ("LANG", "LANGUAGE")}
    return shaping(env) == shaping(os.environ)


def run(entry: str, args: list[str], *, cwd: Path | str, env: dict[str, str],
        timeout: float = 60) -> subprocess.CompletedProcess[str]:
    """``mttui ARGS`` through the entry point ``entry`` (``cli``, ``fault``,
    ``crash_loop``), as ``subprocess.run(capture_output=True, text=True)`` does; a
    plain fresh process when ``env`` would change how Python itself starts."""
    if not _same_interpreter(env):
        return subprocess.run([sys.executable, *SCRIPTS[entry], *args], cwd=cwd, env=env,
                              capture_output=True, text=True, timeout=timeout)  # fmt: skip
    return shared().run(entry, args, cwd=cwd, env=env, timeout=timeout)


# -- the server (this file run as a script) --------------------------------------------
def _entry(name: str, env: dict[str, str]) -> Any:
    from mttui.cli.main import main

    if name in ("fault", "crash_loop"):
        import fault_entry

        fault_entry.arm(env.get("MTTUI_FAULT", ""))
    if name == "crash_loop":
        import crash_loop

        crash_loop.arm(env.get("MTTUI_FAULT", ""), int(env.get("MTTUI_CRASH_AT") or 0),
                       env.get("MTTUI_CRASH_TRACE", ""))  # fmt: skip
    return main


def _child(request: dict[str, Any]) -> None:
    """In the forked child: become the requested ``mttui`` process; never returns."""
    code = 1
    try:
        os.setsid()
        os.chdir(request["cwd"])
        os.environ.clear()
        os.environ.update(request["env"])
        null = os.open(os.devnull, os.O_RDONLY)
        os.dup2(null, 0)
        for fd, path in ((1, request["out"]), (2, request["err"])):
            target = os.open(path, os.O_WRONLY | os.O_TRUNC)
            os.dup2(target, fd)
        sys.argv = ["mttui", *request["args"]]
        main = _entry(request["entry"], request["env"])
        try:
            code = main(request["args"])
        except SystemExit as exc:
            code = exc.code if isinstance(exc.code, int) else (0 if exc.code is None else 1)
            if not isinstance(exc.code, int | None):
                print(exc.code, file=sys.stderr)
        atexit._run_exitfuncs()
    except BaseException:  # noqa: BLE001 - reported like an uncaught error of a script
        import traceback

        traceback.print_exc()
        code = 1
    finally:
        for stream in (sys.stdout, sys.stderr):
            with contextlib.suppress(Exception):  # a closed stream: nothing to flush
                stream.flush()
        os._exit(code)


def _serve(path: str) -> None:
    import warnings

    # forking beside the reaper thread is safe here: the child only runs its request
    warnings.filterwarnings("ignore", category=DeprecationWarning)
    sys.path.insert(0, str(HERE))
    import crash_loop  # noqa: F401 - warm: LangGraph's saver
    import fault_entry  # noqa: F401
    import langchain_openai  # noqa: F401
    import langgraph.graph  # noqa: F401

    import mttui.cli.main  # noqa: F401
    import mttui.graph.agent  # noqa: F401

    waiting: dict[int, socket.socket] = {}
    lock = threading.Condition()

    def reap() -> None:
        while True:
            with lock:
                while not waiting:
                    lock.wait()
            try:
                pid, status = os.waitpid(-1, 0)
            except ChildProcessError:
                continue
            with lock:
                conn = waiting.pop(pid, None)
            if conn is not None:
                with contextlib.suppress(OSError):  # the test gave up on it (timeout)
                    conn.sendall(json.dumps({"status": status}).encode() + b"\n")
                conn.close()

    def orphaned() -> None:  # the test run was killed (no atexit): do not linger
        parent = os.getppid()
        while os.getppid() == parent:
            time.sleep(0.5)
        os._exit(0)

    threading.Thread(target=reap, daemon=True).start()
    threading.Thread(target=orphaned, daemon=True).start()
    server = socket.socket(socket.AF_UNIX)
    server.bind(path)
    server.listen(16)
    sys.stdout.write("ready\n")
    sys.stdout.flush()
    while True:
        conn, _ = server.accept()
        request = json.loads(conn.makefile("rb").readline())
        with lock:  # the reaper must not answer before the pid is sent
            pid = os.fork()
            if pid == 0:
                server.close()
                conn.close()
                _child(request)
            with contextlib.suppress(OSError):  # the test is gone; the child is still reaped
                conn.sendall(json.dumps({"pid": pid}).encode() + b"\n")
            waiting[pid] = conn
            lock.notify()


if __name__ == "__main__":
    _serve(sys.argv[1])
