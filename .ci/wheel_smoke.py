"""Install mttui as a user does and start it: wheel → fresh venv → ``mttui demo`` in a pty.

Fails unless the browser shows the demo's sessions (so a file the app reads at run
time, such as its stylesheet, that the wheel leaves out is caught here, where an
editable install cannot see it). Usage: python .ci/wheel_smoke.py
"""

from __future__ import annotations

import contextlib
import os
import pty
import re
import select
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the browser's footer and a demo session's title (the one selected first is shown in full)
EXPECTED = ("All projects", "Clean the build and fix div()")
DEADLINE_S = 180


def run(*cmd: str, **kw: object) -> None:
    print("+", " ".join(cmd), flush=True)
    subprocess.run(cmd, check=True, **kw)  # type: ignore[call-overload]


def screen_text(raw: bytes) -> str:
    text = raw.decode("utf-8", "replace")
    return re.sub(r"\x1b\[[0-9;?]*[A-Za-z]|\x1b[()][A-Z0-9]|\x1b[=>]", "", text)


def main() -> int:
    with tempfile.TemporaryDirectory(prefix="wheel-smoke-") as tmp:
        work = Path(tmp)
        run(sys.executable, "-m", "pip", "wheel", "--quiet", "--no-deps", "-w", str(work / "dist"),
            str(ROOT))
        wheels = list((work / "dist").glob("mttui-*.whl"))
        assert len(wheels) == 1, wheels
        venv = work / "venv"
        run(sys.executable, "-m", "venv", str(venv))
        run(str(venv / "bin" / "python"), "-m", "pip", "install", "--quiet", str(wheels[0]))
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYTHON", "VIRTUAL_ENV"))}
        env.update(MTTUI_HOME=str(work / "home"), TERM="xterm-256color", COLUMNS="100",
                   LINES="30", PATH=f"{venv / 'bin'}:{env.get('PATH', '')}")
        project = work / "project"
        project.mkdir()
        pid, fd = pty.fork()
        if pid == 0:  # child: the user's command, from the venv, in a terminal
            os.chdir(project)
            os.execvpe(str(venv / "bin" / "mttui"), ["mttui", "demo"], env)
        import fcntl
        import struct
        import termios
        fcntl.ioctl(fd, termios.TIOCSWINSZ, struct.pack("HHHH", 30, 100, 0, 0))
        raw = b""
        started = time.monotonic()
        found = False
        while time.monotonic() - started < DEADLINE_S:
            ready, _, _ = select.select([fd], [], [], 0.5)
            if ready:
                try:
                    chunk = os.read(fd, 65536)
                except OSError:
                    break
                if not chunk:
                    break
                raw += chunk
                if all(mark in screen_text(raw) for mark in EXPECTED):
                    found = True
                    break
        if found:
            os.write(fd, b"\x11")  # ctrl+q
            time.sleep(1.0)
        with contextlib.suppress(ProcessLookupError):
            os.kill(pid, 9)
        os.waitpid(pid, 0)
        if not found:
            tail = screen_text(raw)[-3000:]
            print(f"mttui demo from the wheel never showed its sessions:\n{tail}", file=sys.stderr)
            return 1
        print(f"wheel smoke: mttui demo showed its sessions after "
              f"{time.monotonic() - started:.1f} s")
        return 0


if __name__ == "__main__":
    sys.exit(main())
