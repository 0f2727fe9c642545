"""``mttui permissions [--json] | revoke RULE``: rules of both sources and session
grants listed; a saved rule revoked; config rules and unknown rules refused in one line."""

from __future__ import annotations

import json
from pathlib import Path

from mttui.session.rules import add_rule, load_rules, rules_path
from tests.support.resume import cli, json_events


def test_lists_rules_and_grants_and_revokes(home: Path, project: Path) -> None:
    config = home.parent / "config.toml"
    config.write_text('[permissions]\nallow = ["read_file"]\ndeny = ["shell(rm *)"]\n')
    path = rules_path(home, project)
    add_rule(path, project, "shell(npm test*)")
    env = {"MTTUI_CONFIG": str(config)}
    # a session grant: approve `shell` for the rest of a session (through exec's ask)
    first = cli(home, project, "exec", "--json", "!echo one", **env)
    assert first.returncode == 3
    sid = json_events(first.stdout)[0]["session_id"]
    from mttui.config import load_settings
    from mttui.core.drive import drive
    from mttui.core.handle import ApprovalAnswer, SessionHandle
    from mttui.session.service import SessionService

    service = SessionService(home, project)
    handle = SessionHandle.open(service, load_settings({"provider": "offline"}), sid)
    try:
        handle.resume()
        request = handle.waiting_approval()
        assert request is not None
        answer = ApprovalAnswer({c["call_id"]: "approve" for c in request.tool_calls},
                                remember=("shell",))
        drive(handle, handle.answer(request, answer), emit=lambda e: None,
              ask=lambda r: None)
    finally:
        handle.close()
    listed = cli(home, project, "permissions", "--json", **env)
    assert listed.returncode == 0, listed.stderr
    assert json.loads(listed.stdout) == {
        "rules": [
            {"rule": "shell(rm *)", "effect": "deny", "source": "config"},
            {"rule": "read_file", "effect": "allow", "source": "config"},
            {"rule": "shell(npm test*)", "effect": "allow", "source": "project"},
        ],
        "grants": [{"tool": "shell", "session_id": sid}],
    }
    human = cli(home, project, "permissions", **env)
    assert "shell(npm test*)" in human.stdout and sid in human.stdout
    gone = cli(home, project, "permissions", "revoke", "shell(npm test*)", **env)
    assert gone.returncode == 0, gone.stderr
    assert load_rules(path).allow == ()
    again = cli(home, project, "permissions", "revoke", "shell(npm test*)", **env)
    assert again.returncode == 1 and len(again.stderr.splitlines()) == 1
    fixed = cli(home, project, "permissions", "revoke", "read_file", **env)
    assert fixed.returncode == 1 and "config.toml" in fixed.stderr
    grant = cli(home, project, "permissions", "revoke", "shell", "--session", sid, **env)
    assert grant.returncode == 0, grant.stderr
    after = json.loads(cli(home, project, "permissions", "--json", **env).stdout)
    assert after["grants"] == []
