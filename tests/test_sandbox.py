"""The bubblewrap sandbox, with the real ``bwrap``: the project is writable and
nothing else is; /tmp is private; the agent's environment cannot be read through
/proc; no network; a forked child dies with the sandbox on stop; an unusable bwrap
fails closed in one line; auto-edit runs sandboxed shell commands without asking."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from mttui.config import load_settings
from mttui.graph.tools.policy import decide_call
from mttui.graph.tools.sandbox import Sandbox
from mttui.graph.tools.shell import run_shell

ON = Sandbox("workspace")


def test_writing_inside_the_project_works(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    res = run_shell(project, "echo hi > inside.txt && mkdir -p d && touch d/x && cat inside.txt",
                    sandbox=ON)
    assert res.status == "success", res.output
    assert (project / "inside.txt").read_text() == "hi\n" and (project / "d" / "x").exists()


def test_writing_outside_the_project_fails(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    outside = tmp_path / "outside.txt"  # under /tmp: lands in the private /tmp at most
    run_shell(project, f"echo x > {outside}", sandbox=ON)
    assert not outside.exists()
    home_file = Path.home() / f".mttui-sandbox-probe-{os.getpid()}"
    res = run_shell(project, f"touch {home_file}", sandbox=ON)
    assert res.status == "error" and "Read-only file system" in res.output
    assert not home_file.exists()
    plain = run_shell(project, f"touch {home_file}", sandbox=None)  # the test can fail
    assert plain.status == "success" and home_file.exists()
    home_file.unlink()


def test_tmp_is_private(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    name = f"mttui-private-{os.getpid()}"
    res = run_shell(project, f"echo x > /tmp/{name} && cat /tmp/{name}", sandbox=ON)
    assert res.status == "success", res.output
    assert not Path("/tmp", name).exists()


AGENT = """
import os, sys
from pathlib import Path
from mttui.graph.tools.sandbox import Sandbox
from mttui.graph.tools.shell import run_shell
script = ("cat /proc/%d/environ; cat /proc/$PPID/environ; "
          "cat /proc/*/environ 2>/dev/null; ls /proc" % os.getpid())
mode = Sandbox("workspace") if sys.argv[1] == "on" else None
print(run_shell(Path(sys.argv[2]), script, sandbox=mode).output)
"""


def test_the_agents_environment_is_not_readable(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    marker = "agent-env-marker-51c2e9"
    env = dict(os.environ, MTTUI_SANDBOX_PROBE_TOKEN=marker)  # never in the shell's env
    for mode, found in (("on", False), ("off", True)):  # unsandboxed it is: the test can fail
        out = subprocess.run([sys.executable, "-c", AGENT, mode, str(project)], env=env,
                             capture_output=True, text=True, timeout=60)
        assert out.returncode == 0, out.stderr
        assert (marker in out.stdout) is found


def test_no_network_unless_allowed(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(5)
    port = server.getsockname()[1]
    accepted: list[socket.socket] = []

    def accept() -> None:
        server.settimeout(20)
        while True:
            try:
                conn, _ = server.accept()
            except OSError:
                return
            accepted.append(conn)

    threading.Thread(target=accept, daemon=True).start()
    probe = f"exec 3<>/dev/tcp/127.0.0.1/{port} && echo connected"
    try:
        res = run_shell(project, probe, sandbox=ON)
        assert res.status == "error" and "connected" not in res.output
        assert accepted == []
        open_net = run_shell(project, probe, sandbox=Sandbox("workspace", network=True))
        assert open_net.status == "success" and "connected" in open_net.output
    finally:
        server.close()


def _alive(marker: str) -> bool:
    for pid in os.listdir("/proc"):
        if not pid.isdigit():
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if marker.encode() in fh.read():
                    return True
        except OSError:
            continue
    return False


def test_a_forked_child_dies_with_the_sandbox_on_stop(tmp_path: Path) -> None:
    project = tmp_path / "p"
    project.mkdir()
    marker = f"orphan{os.getpid()}x"
    stop = threading.Event()
    command = (f"setsid bash -c 'exec -a {marker} sleep 300' < /dev/null > /dev/null 2>&1 & "
               "echo started; sleep 300")
    result: list[object] = []
    worker = threading.Thread(target=lambda: result.append(
        run_shell(project, command, stop=stop, grace=0.2, sandbox=ON)))
    worker.start()
    deadline = time.monotonic() + 20
    while not _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _alive(marker)
    stop.set()
    worker.join(30)
    assert result and result[0].status == "interrupted"  # type: ignore[attr-defined]
    deadline = time.monotonic() + 10
    while _alive(marker) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert not _alive(marker)


def test_unusable_bwrap_fails_closed_in_one_line(tmp_path: Path,
                                                 monkeypatch: pytest.MonkeyPatch) -> None:
    project = tmp_path / "p"
    project.mkdir()
    monkeypatch.setenv("PATH", str(tmp_path / "nothing"))
    res = run_shell(project, "touch ran.txt", sandbox=Sandbox("workspace"))
    assert res.status == "error" and not (project / "ran.txt").exists()
    assert len(res.output.splitlines()) == 1
    assert "bubblewrap" in res.output and "--sandbox off" in res.output
    unset = Sandbox(None)  # not set: off, with a notice
    assert not unset.active and "sandbox off" in (unset.notice() or "")


def test_default_is_workspace_when_bwrap_works() -> None:
    assert Sandbox(None).active and Sandbox(None).notice() is None
    assert not Sandbox("off").active


def test_setting_sources(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    config = tmp_path / "c.toml"
    config.write_text('sandbox = "off"\nsandbox_network = true\n')
    s = load_settings({}, {}, config)
    assert (s.sandbox, s.sandbox_network) == ("off", True)
    assert load_settings({}, {"MTTUI_SANDBOX": "workspace"}, config).sandbox == "workspace"
    assert load_settings({"sandbox": "off"}, {"MTTUI_SANDBOX": "workspace"}).sandbox == "off"
    from mttui.config import ConfigError

    with pytest.raises(ConfigError, match="MTTUI_SANDBOX"):
        load_settings({}, {"MTTUI_SANDBOX": "strict"})


def test_auto_edit_runs_sandboxed_shell_without_asking() -> None:
    args = {"command": "make"}
    assert decide_call("shell", args, "auto-edit", sandboxed=True) == ("guarded", None)
    assert decide_call("shell", args, "auto-edit", sandboxed=True,
                       guardable=lambda: False) == ("ask", None)
    assert decide_call("shell", args, "auto-edit", sandboxed=False) == ("ask", None)
    assert decide_call("shell", args, "ask", sandboxed=True) == ("ask", None)


def test_the_watch_counts_a_sandbox_without_a_cgroup(tmp_path: Path) -> None:
    """Where no pids cgroup can be made (root in most containers: the kernel does not
    apply RLIMIT_NPROC to uid 0), the watch alone ends the call: counted through the
    sandbox's own /proc, which stays cheap while thousands of processes fork."""
    import signal

    from mttui.graph.tools.pids import Watch, processes_in
    from mttui.graph.tools.shell import spawn

    prefix = Sandbox("workspace").prefix(tmp_path)
    proc = spawn("for i in $(seq 80); do sleep 30 & done; wait", tmp_path, os.environ, prefix)
    watch = Watch(proc.pid, 64, None)
    try:
        deadline = time.monotonic() + 30
        while not watch.over():
            assert time.monotonic() < deadline, "the watch never saw 64 tasks"
            time.sleep(0.05)
        assert watch.procfs is not None and processes_in(watch.procfs) >= 62
    finally:
        os.killpg(proc.pid, signal.SIGKILL)  # bwrap; the namespace dies with it
        proc.wait(30)
        if proc.stdout is not None:
            proc.stdout.close()


def test_a_git_repository_a_command_creates_is_named(tmp_path: Path) -> None:
    """A new ``.git`` cannot be bound read-only before it exists: the result says so."""
    project = tmp_path / "p"
    project.mkdir()
    res = run_shell(project, "git init -q vendor/lib && echo made", sandbox=ON)
    assert res.status == "success", res.output
    assert "created vendor/lib/.git" in res.output and "review" in res.output
    quiet = run_shell(project, "touch vendor/lib/x", sandbox=ON)  # nothing new: no note
    assert "created" not in quiet.output
