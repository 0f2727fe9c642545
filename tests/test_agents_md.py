"""``AGENTS.md`` project instructions: which files, in which order, in the system message
the scripted server receives; rebuilt every run; the 32 KB cap."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from mttui.graph.instructions import CAP, instruction_files, load_instructions
from tests.support.fake_openai import FakeOpenAI, text
from tests.support.resume import cli, json_events


def _tree(tmp_path: Path) -> tuple[Path, Path]:
    """``above/repo(.git)/sub`` with AGENTS.md at every level and a global one."""
    repo = tmp_path / "above" / "repo"
    project = repo / "sub"
    project.mkdir(parents=True)
    (repo / ".git").mkdir()
    (tmp_path / "above" / "AGENTS.md").write_text("ABOVE-ROOT-RULE\n")
    (repo / "AGENTS.md").write_text("OUTER-RULE\n")
    (project / "AGENTS.md").write_text("INNER-RULE\n")
    conf = tmp_path / "conf"
    conf.mkdir()
    (conf / "AGENTS.md").write_text("GLOBAL-RULE\n")
    return project, conf


def _system(request: dict[str, Any]) -> str:
    first = request["messages"][0]
    assert first["role"] == "system"
    return str(first["content"])


def test_files_outer_first_global_first_stop_at_git_root(tmp_path: Path) -> None:
    project, conf = _tree(tmp_path)
    env = {"MTTUI_CONFIG": str(conf / "config.toml")}
    files = instruction_files(project, env)
    assert files == [conf / "AGENTS.md", project.parent / "AGENTS.md", project / "AGENTS.md"]


def test_without_git_only_the_project_directory(tmp_path: Path) -> None:
    project = tmp_path / "a" / "b"
    project.mkdir(parents=True)
    (tmp_path / "a" / "AGENTS.md").write_text("PARENT\n")
    (project / "AGENTS.md").write_text("HERE\n")
    env = {"MTTUI_CONFIG": str(tmp_path / "none" / "config.toml")}
    assert instruction_files(project, env) == [project / "AGENTS.md"]


def test_cap_keeps_beginnings_outer_first_with_a_note(tmp_path: Path) -> None:
    project, conf = _tree(tmp_path)
    (conf / "AGENTS.md").write_text("G" * (CAP - 100) + "TAIL-OF-GLOBAL")
    (project.parent / "AGENTS.md").write_text("OUTER-START" + "o" * 500)
    loaded = load_instructions(project, {"MTTUI_CONFIG": str(conf / "config.toml")})
    assert "TAIL-OF-GLOBAL" in loaded.section and "OUTER-START" in loaded.section
    assert "o" * 500 not in loaded.section and "cut after 86 of 511 bytes" in loaded.section
    assert "G" * 1000 in loaded.section
    assert "INNER-RULE" not in loaded.section  # no budget left for the innermost file
    assert "[note: the instructions are over 32 KB" in loaded.section
    assert "AGENTS.md left out" in loaded.section
    body = loaded.section.split("## ", 1)[1]
    assert len(body.encode()) < CAP + 2000
    assert "(cut at 32 KB)" in loaded.loaded_line(project)


def test_the_server_receives_instructions_and_edits_apply_next_run(
    tmp_path: Path, fake_openai: FakeOpenAI
) -> None:
    project, conf = _tree(tmp_path)
    home = tmp_path / "home"
    fake_openai.add(text("one"), text("two"))
    env = {"OPENAI_BASE_URL": fake_openai.url, "OPENAI_API_KEY": "sk-test",
           "MTTUI_CONFIG": str(conf / "config.toml")}  # fmt: skip
    r = cli(home, project, "exec", "--json", "hello", **env)
    assert r.returncode == 0, r.stderr
    assert "instructions loaded: ~/" in r.stderr or "instructions loaded: " in r.stderr
    assert "AGENTS.md" in r.stderr
    system = _system(fake_openai.requests[0])
    order = [system.index(t) for t in ("GLOBAL-RULE", "OUTER-RULE", "INNER-RULE")]
    assert order == sorted(order)
    assert "ABOVE-ROOT-RULE" not in system
    session_id = json_events(r.stdout)[0]["session_id"]

    (project / "AGENTS.md").write_text("EDITED-INNER\n")
    r = cli(home, project, "exec", "--session", session_id, "again", **env)
    assert r.returncode == 0, r.stderr
    system = _system(fake_openai.requests[1])
    assert "EDITED-INNER" in system and "INNER-RULE" not in system
