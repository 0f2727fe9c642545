"""``/rewind SEQ|undo`` and ``/fork [SEQ]`` as the PROMPT of ``mttui exec --session``:
the same use cases as ``mttui rewind`` / ``mttui fork``, on the session exec holds."""

from __future__ import annotations

import json
from pathlib import Path

from tests.support.resume import cli


def _session(home: Path, project: Path) -> str:
    r = cli(home, project, "exec", "--provider", "offline", "--approval", "yolo",
            "!echo hi > f.txt")
    assert r.returncode == 0, r.stderr
    listed = json.loads(cli(home, project, "sessions", "--json").stdout)
    return str(listed["sessions"][0]["id"])


def test_rewind_undo_and_fork_through_exec(home: Path, project: Path) -> None:
    import subprocess

    subprocess.run(["git", "init", "-q", str(project)], check=True)
    sid = _session(home, project)
    assert (project / "f.txt").exists()

    def slash(text: str) -> tuple[int, str, str]:
        r = cli(home, project, "exec", "--provider", "offline", "--session", sid, text)
        return r.returncode, r.stdout, r.stderr

    code, out, err = slash("/rewind 1")
    assert code == 0, err
    assert "rewound to just before message 1" in out and not (project / "f.txt").exists()
    code, out, err = slash("/rewind undo")
    assert code == 0, err
    assert (project / "f.txt").read_text() == "hi\n"
    code, out, err = slash("/rewind soon")
    assert code != 0 and "/rewind SEQ" in err
    code, out, err = slash("/fork")
    assert code == 0, err
    forked = out.split("forked into session ")[1].split()[0]
    listed = json.loads(cli(home, project, "sessions", "--json").stdout)["sessions"]
    fork = next(s for s in listed if s["id"] == forked)
    assert fork["forked_from"]["session_id"] == sid
