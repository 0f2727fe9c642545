"""Permission rules in real ``mttui exec`` runs: an allow rule lets ``--approve ask``
run without exiting 3, a deny rule refuses without asking (naming the rule), and a
compound command still asks."""

from __future__ import annotations

from pathlib import Path

from mttui.session.rules import add_rule, rules_path
from tests.support.logs import records
from tests.support.resume import cli, json_events


def _config(home: Path, text: str) -> Path:
    path = home.parent / "config.toml"
    path.write_text(text)
    return path


def _exec(home: Path, project: Path, prompt: str, config: Path | None = None):  # noqa: ANN202
    extra = {"MTTUI_CONFIG": str(config)} if config else {}
    return cli(home, project, "exec", "--json", "--approve", "ask", prompt, **extra)


def _outcomes(stdout: str) -> list[str]:
    return [e["status"] for e in json_events(stdout) if e["event"] == "tool_outcome"]


def test_config_allow_rule_runs_without_asking(home: Path, project: Path) -> None:
    config = _config(home, '[permissions]\nallow = ["shell(echo hi*)"]\n')
    done = _exec(home, project, "!echo hi there > /dev/null; echo hi again", config)
    assert done.returncode == 3  # a redirection: never matched by an allow rule
    ok = _exec(home, project, "!echo hi there && echo hi again", config)
    assert ok.returncode == 0, ok.stderr
    assert _outcomes(ok.stdout) == ["success"]
    assert "approval_request" not in [e["event"] for e in json_events(ok.stdout)]


def test_saved_project_rule_runs_without_asking(home: Path, project: Path) -> None:
    add_rule(rules_path(home, project), project, "shell(touch made*)")
    ok = _exec(home, project, "!touch made.txt")
    assert ok.returncode == 0, ok.stderr
    assert (project / "made.txt").exists()
    asks = _exec(home, project, "!touch made2.txt && rm made.txt")
    assert asks.returncode == 3 and (project / "made.txt").exists()


def test_deny_rule_beats_allow_and_names_itself(home: Path, project: Path) -> None:
    config = _config(home, '[permissions]\nallow = ["shell"]\ndeny = ["shell(rm *)"]\n')
    (project / "keep.txt").write_text("x")
    r = cli(home, project, "exec", "--json", "--approve", "all", "!rm keep.txt",
            MTTUI_CONFIG=str(config))
    assert r.returncode == 0, r.stderr
    assert _outcomes(r.stdout) == ["denied"] and (project / "keep.txt").exists()
    sid = json_events(r.stdout)[0]["session_id"]
    from mttui.session.service import SessionService

    log = records(SessionService(home, project).resolve(sid).path)
    results = [r for r in log if r["type"] == "transcript_message"
               and r["message"]["role"] == "tool"]
    assert "denied by rule `shell(rm *)`" in results[0]["message"]["content"]
    assert not [r for r in log if r["type"] == "approval_request"]


def test_bad_rule_in_config_is_one_line_error(home: Path, project: Path) -> None:
    config = _config(home, '[permissions]\nallow = ["shell(npm"]\n')
    r = _exec(home, project, "hi", config)
    assert r.returncode == 1 and len(r.stderr.strip().splitlines()) == 1
    assert "[permissions] allow" in r.stderr
