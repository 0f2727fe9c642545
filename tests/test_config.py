"""Settings precedence: flag > environment > config.toml > default."""

from __future__ import annotations

from pathlib import Path

import pytest

from mttui.config import ConfigError, load_settings


def _toml(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "config.toml"
    path.write_text(text)
    return path


def test_defaults_without_anything(tmp_path: Path) -> None:
    s = load_settings(environ={}, config_path=tmp_path / "missing.toml")
    assert (s.provider, s.model, s.approval) == ("offline", "offline", "ask")
    assert (s.token_limit, s.compression_threshold, s.auto_compress) == (128000, 0.5, True)
    assert s.max_steps_per_run == 50 and s.keys == {} and s.api_key is None


def test_openai_is_default_when_a_key_or_url_is_set(tmp_path: Path) -> None:
    cfg = tmp_path / "none.toml"
    assert load_settings(environ={"OPENAI_API_KEY": "k"}, config_path=cfg).provider == "openai"
    assert load_settings(environ={"OPENAI_BASE_URL": "http://x/v1"}, config_path=cfg).provider == (
        "openai"
    )


def test_precedence_flag_env_file_default(tmp_path: Path) -> None:
    cfg = _toml(
        tmp_path,
        'provider = "openai"\nmodel = "from-file"\napproval = "yolo"\ntoken_limit = 1000\n'
        'max_steps_per_run = 7\nauto_compress = false\n[keys]\nstop = "ctrl+c"\n',
    )
    env = {"MTTUI_MODEL": "from-env", "MTTUI_APPROVAL": "deny", "MTTUI_TOKEN_LIMIT": "2000"}
    s = load_settings({"approval": "auto-edit", "model": None}, environ=env, config_path=cfg)
    assert s.provider == "openai"  # file
    assert s.model == "from-env"  # env over file (the flag was not given)
    assert s.approval == "auto-edit"  # flag over env
    assert s.token_limit == 2000 and s.max_steps_per_run == 7 and s.auto_compress is False
    assert s.keys == {"stop": "ctrl+c"}


@pytest.mark.parametrize(
    ("env", "needle"),
    [
        ({"MTTUI_APPROVAL": "sometimes"}, "MTTUI_APPROVAL"),
        ({"MTTUI_PROVIDER": "anthropic"}, "MTTUI_PROVIDER"),
        ({"MTTUI_TOKEN_LIMIT": "lots"}, "MTTUI_TOKEN_LIMIT"),
        ({"MTTUI_COMPRESSION_THRESHOLD": "1.5"}, "between 0 and 1"),
        ({"MTTUI_AUTO_COMPRESS": "maybe"}, "true or false"),
        ({"MTTUI_MAX_STEPS": "0"}, "positive"),
    ],
)
def test_invalid_values_give_one_line_errors(
    tmp_path: Path, env: dict[str, str], needle: str
) -> None:
    with pytest.raises(ConfigError) as err:
        load_settings(environ=env, config_path=tmp_path / "none.toml")
    assert needle in str(err.value) and "\n" not in str(err.value)


def test_bad_toml_and_bad_keys_table(tmp_path: Path) -> None:
    with pytest.raises(ConfigError, match="cannot read"):
        load_settings(environ={}, config_path=_toml(tmp_path, "provider = \n"))
    with pytest.raises(ConfigError, match=r"\[keys\]"):
        load_settings(environ={}, config_path=_toml(tmp_path, "[keys]\nstop = 3\n"))


def test_api_key_is_never_shown(tmp_path: Path) -> None:
    s = load_settings(environ={"OPENAI_API_KEY": "sk-secret-xyz"}, config_path=tmp_path / "n")
    assert s.api_key == "sk-secret-xyz"
    assert "sk-secret-xyz" not in repr(s) and "sk-secret-xyz" not in str(s.public())
    assert s.public()["api_key_set"] is True
