"""The sandbox holds for root and for an ordinary user alike (real bwrap, real git,
real Unix sockets): no capabilities and no remount, every ``.git`` read-only (a hook
written there never runs at the next ``git commit``), no host Unix socket reachable,
a fork bomb ends at the pids limit instead of the timeout."""

from __future__ import annotations

import os
import socket
import tempfile
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import pytest

from tests.support.identity import IDENTITIES, chown_tree, run_as, scratch, shell_as

pytestmark = pytest.mark.parametrize("who", IDENTITIES)


def test_no_capabilities_mounts_locked_sysctls_read_only(who: str) -> None:
    probe = Path(f"/mttui-remount-probe-{os.getpid()}")
    script = (f"grep CapEff /proc/self/status; mount -o remount,rw / && touch {probe}; "
              f"unshare -Urm sh -c 'mount -o remount,rw / && touch {probe}'; "
              "mount -t tmpfs none /mnt && echo MOUNTED; "
              "v=$(cat /proc/sys/vm/swappiness); echo $v > /proc/sys/vm/swappiness && "
              "echo SYSCTL-WRITTEN; echo end")
    with scratch(who) as base:
        project = base / "p"
        project.mkdir()
        chown_tree(project, who)
        try:
            res = shell_as(who, project, script)
            assert "end" in res["output"], res
            assert "CapEff:\t0000000000000000" in res["output"], res["output"]
            assert "MOUNTED" not in res["output"]
            assert "SYSCTL-WRITTEN" not in res["output"]  # uid 0 needs no capability there
            assert not probe.exists()
        finally:
            if probe.exists():
                probe.unlink()


HOOK = "#!/bin/sh\ntouch {mark}\n"


def _git(who: str, repo: Path, *args: str) -> None:
    done = run_as(who, ["git", "-c", "user.name=t", "-c", "user.email=t@t", *args], repo)
    assert done.returncode == 0, done.stderr


def test_every_git_dir_is_read_only_and_no_hook_runs_later(who: str) -> None:
    with scratch(who) as base:
        project, lib = base / "p", base / "p" / "lib"
        lib.mkdir(parents=True)
        chown_tree(project, who)
        for repo in (project, lib):
            _git(who, repo, "init", "-q")
        mark = base / "HOOK-RAN"
        attack = "; ".join(
            f"printf '{HOOK.format(mark=mark)}' > {d}/.git/hooks/pre-commit; "
            f"chmod +x {d}/.git/hooks/pre-commit; git -C {d} config mttui.probe yes"
            for d in (".", "lib")) + "; echo new > a.txt; echo new > lib/b.txt"
        res = shell_as(who, project, attack)
        for repo, name in ((project, "a.txt"), (lib, "b.txt")):  # the user's next commit
            _git(who, repo, "add", name)
            _git(who, repo, "commit", "-q", "-m", "after the sandboxed command")
        assert not mark.exists()
        assert "Read-only file system" in res["output"], res["output"]
        assert (project / "a.txt").read_text() == "new\n"  # the project stays writable
        assert (lib / "b.txt").read_text() == "new\n"
        for repo in (project, lib):
            assert not (repo / ".git" / "hooks" / "pre-commit").exists()
            assert "probe" not in (repo / ".git" / "config").read_text()


@contextmanager
def _listening(path: Path) -> Iterator[list[bytes]]:
    """A Unix socket server at ``path`` that anyone may connect to; what it got."""
    got: list[bytes] = []
    server = socket.socket(socket.AF_UNIX)
    server.bind(str(path))
    path.chmod(0o777)
    server.listen(8)
    server.settimeout(0.2)
    done = threading.Event()

    def serve() -> None:
        while not done.is_set():
            try:
                conn, _ = server.accept()
            except OSError:
                continue
            with conn:
                got.append(conn.recv(64))

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    try:
        yield got
    finally:
        done.set()
        thread.join(5)
        server.close()
        path.unlink(missing_ok=True)


# perl-base is everywhere bash is; any identity may run it (a venv's python may not be)
CONNECT = ("socket(my $s, PF_UNIX, SOCK_STREAM, 0) or die; if (connect($s, "
           "sockaddr_un($ARGV[0]))) { syswrite($s, 'RUN'); print qq(CONNECTED\\n) } "
           "else { print qq(REFUSED $!\\n) }")


def test_no_host_unix_socket_is_reachable(who: str) -> None:
    here = Path(__file__).resolve().parents[1]  # a world-traversable place outside /tmp
    runtime = Path(tempfile.mkdtemp(prefix=".mttui-xdg-", dir=here))
    agent = Path(tempfile.mkdtemp(prefix=".mttui-agent-", dir=here))  # like ~/.1password
    try:
        runtime.chmod(0o755)
        agent.chmod(0o755)
        places = [Path("/tmp"), Path("/var/tmp"), Path("/dev/shm"), runtime, agent]
        if os.access("/run", os.W_OK):  # as root: where docker's socket lives
            places.append(Path("/run"))
        with scratch(who) as base:
            project = base / "p"
            project.mkdir()
            chown_tree(project, who)
            env = dict(os.environ, XDG_RUNTIME_DIR=str(runtime), CONNECT=CONNECT,
                       SSH_AUTH_SOCK=str(agent / "agent.sock"))
            for place in places:
                sock = place / ("agent.sock" if place == agent else f"mttui-sock-{os.getpid()}")
                with _listening(sock) as got:
                    command = f"perl -MSocket -e \"$CONNECT\" {sock}"
                    inside = shell_as(who, project, command, env=env)
                    assert "REFUSED" in inside["output"], (place, inside)
                    outside = shell_as(who, project, command, pids="off", env=env)
                    assert "CONNECTED" in outside["output"], (place, outside)  # can fail
                assert got == [b"RUN"], place
    finally:
        for left in (runtime, agent):
            for item in left.iterdir():
                item.unlink()
            left.rmdir()


def test_a_fork_bomb_ends_at_the_pids_limit(who: str) -> None:
    # bounded even without a limit: 2^8 shells and their sleeps, for 20 s at most
    bomb = "b(){ if [ $1 -lt 7 ]; then b $(($1+1)) & b $(($1+1)) & fi; sleep 20; wait; }; b 0"
    with scratch(who) as base:
        project = base / "p"
        project.mkdir()
        chown_tree(project, who)
        res = shell_as(who, project, bomb, pids=64, timeout=100)
        assert res["status"] == "error", res
        assert "process limit (64 tasks) reached" in res["output"]
        assert "timed out" not in res["output"]

