"""Children that die with mttui: ``PR_SET_PDEATHSIG`` set through ``setpriv``.

The sandbox has ``--die-with-parent``; an unsandboxed command (or any child we
start) gets the same through ``setpriv --pdeathsig KILL`` (util-linux), which sets
the signal and then execs the command, so no code runs between fork and exec here.
The signal fires when the thread that started the child ends or mttui dies (even
by SIGKILL). Without a ``setpriv`` that knows the option, nothing is added.
"""

from __future__ import annotations

import functools
import shutil
import subprocess


@functools.cache
def deathsig_prefix() -> tuple[str, ...]:
    """Argv to put before a command so that it is killed when its parent dies."""
    setpriv = shutil.which("setpriv")
    if setpriv is None:
        return ()
    try:
        done = subprocess.run([setpriv, "--pdeathsig", "KILL", "--", "true"],
                              capture_output=True, timeout=10, stdin=subprocess.DEVNULL)
    except (OSError, subprocess.TimeoutExpired):
        return ()
    return (setpriv, "--pdeathsig", "KILL", "--") if done.returncode == 0 else ()
