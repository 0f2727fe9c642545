"""Settings: command-line flag > environment > ``config.toml`` > default.

No Textual, no LangGraph here: the CLI and the UI read settings before either
is imported. The API key is read (environment or ``config.toml``) but never
written anywhere by mttui.

``config.toml`` (path: :func:`mttui.session.paths.config_file`)::

    provider = "openai"            # or "offline"
    model = "gpt-4o-mini"
    base_url = "http://localhost:8000/v1"
    approval = "ask"               # ask | auto-edit | yolo | deny
    token_limit = 128000
    compression_threshold = 0.5
    auto_compress = true
    max_steps_per_run = 50

    [keys]                         # TUI binding overrides: action = "key"
    stop = "escape"

    sandbox = "workspace"          # off | workspace (default: workspace when bwrap works)
    sandbox_network = false

    [permissions]                  # rules: TOOL or TOOL(glob); deny beats allow
    allow = ["shell(npm test*)"]
    deny = ["shell(rm *)"]

    [mcp_servers.NAME]             # command + args (+ env) for stdio, or url for HTTP
    command = "python"
    args = ["server.py"]
    trust = "ask"                  # ask | read
"""

from __future__ import annotations

import os
import re
import tomllib
from collections.abc import Callable, Mapping
from dataclasses import dataclass, field, fields, replace
from pathlib import Path
from typing import Any

from mttui.session.errors import MttuiError
from mttui.session.paths import config_file

PROVIDERS = ("openai", "offline")
APPROVAL_MODES = ("ask", "auto-edit", "yolo", "deny")
DEFAULT_MODELS = {"openai": "gpt-4o-mini", "offline": "offline"}


class ConfigError(MttuiError):
    """An invalid setting; the message is one line naming the source."""


@dataclass(frozen=True)
class Settings:
    """Resolved settings of one process (see runtime.md for the meaning of each)."""

    provider: str = "offline"
    model: str = "offline"
    base_url: str | None = None
    api_key: str | None = field(default=None, repr=False)  # never logged, never stored
    approval: str = "ask"
    token_limit: int = 128_000
    compression_threshold: float = 0.5
    auto_compress: bool = True
    max_steps_per_run: int = 50
    max_retries: int = 2
    timeout: float = 120.0
    offline_delay: float = 0.0  # seconds between the offline model's chunks (demos, tests)
    debug: bool = False  # tracebacks of failed runs on stderr
    keys: dict[str, str] = field(default_factory=dict)
    # [pricing."MODEL"] input = …, output = … ($ per million tokens)
    pricing: dict[str, tuple[float, float]] = field(default_factory=dict)
    model_from_flag: bool = False  # --model given: it beats a session's /model choice
    # essentials: permission rules, sandbox, MCP servers (see essentials.md)
    permissions_allow: tuple[str, ...] = ()
    permissions_deny: tuple[str, ...] = ()
    sandbox: str | None = None  # off | workspace; None: workspace when bwrap works
    sandbox_network: bool = False
    mcp_servers: dict[str, dict[str, Any]] = field(default_factory=dict)

    def with_overrides(self, **changes: Any) -> Settings:
        return replace(self, **changes)

    def public(self) -> dict[str, Any]:
        """The settings without the API key (safe to print or log)."""
        out = {f.name: getattr(self, f.name) for f in fields(self) if f.name != "api_key"}
        out["api_key_set"] = bool(self.api_key)
        return out


def _to_bool(value: Any) -> bool:
    if isinstance(value, bool):
        return value
    text = str(value).strip().lower()
    if text in ("1", "true", "yes", "on"):
        return True
    if text in ("0", "false", "no", "off"):
        return False
    raise ValueError("expected true or false")


def _to_int(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer")
    number = int(value)
    if number <= 0:
        raise ValueError("must be positive")
    return number


def _to_float(value: Any) -> float:
    if isinstance(value, bool):
        raise ValueError("expected a number")
    return float(value)


def _threshold(value: Any) -> float:
    number = _to_float(value)
    if not 0 < number <= 1:
        raise ValueError("must be between 0 and 1")
    return number


def _timeout(value: Any) -> float:
    number = _to_float(value)
    if number <= 0:
        raise ValueError("must be positive")
    return number


def _delay(value: Any) -> float:
    number = _to_float(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number


def _debug(value: Any) -> bool:
    # only "1" turns it on (as documented); any other value leaves it off
    return value is True or str(value).strip() == "1"


def debug_enabled(environ: Mapping[str, str] | None = None) -> bool:
    """``MTTUI_DEBUG``, for the error path that runs before (or without) settings."""
    return _debug((os.environ if environ is None else environ).get("MTTUI_DEBUG", ""))


def _retries(value: Any) -> int:
    if isinstance(value, bool):
        raise ValueError("expected an integer")
    number = int(value)
    if not 0 <= number <= 10:
        raise ValueError("must be between 0 and 10")
    return number


def _choice(options: tuple[str, ...]) -> Callable[[Any], str]:
    def parse(value: Any) -> str:
        text = str(value).strip().lower()
        if text not in options:
            raise ValueError("expected one of " + ", ".join(options))
        return text

    return parse


def _text(value: Any) -> str:
    text = str(value).strip()
    if not text:
        raise ValueError("must not be empty")
    return text


# name -> (environment variable, parser)
_SPEC: dict[str, tuple[str, Callable[[Any], Any]]] = {
    "provider": ("MTTUI_PROVIDER", _choice(PROVIDERS)),
    "model": ("MTTUI_MODEL", _text),
    "base_url": ("OPENAI_BASE_URL", _text),
    "api_key": ("OPENAI_API_KEY", _text),
    "approval": ("MTTUI_APPROVAL", _choice(APPROVAL_MODES)),
    "token_limit": ("MTTUI_TOKEN_LIMIT", _to_int),
    "compression_threshold": ("MTTUI_COMPRESSION_THRESHOLD", _threshold),
    "auto_compress": ("MTTUI_AUTO_COMPRESS", _to_bool),
    "max_steps_per_run": ("MTTUI_MAX_STEPS", _to_int),
    "max_retries": ("MTTUI_MAX_RETRIES", _retries),
    "timeout": ("MTTUI_TIMEOUT", _timeout),
    "offline_delay": ("MTTUI_OFFLINE_DELAY", _delay),
    "debug": ("MTTUI_DEBUG", _debug),
}


def read_config_file(path: Path | None = None) -> dict[str, Any]:
    """The parsed ``config.toml`` (empty when it does not exist)."""
    path = path if path is not None else config_file()
    try:
        with open(path, "rb") as fh:
            data = tomllib.load(fh)
    except FileNotFoundError:
        return {}
    except (OSError, tomllib.TOMLDecodeError) as exc:
        raise ConfigError(f"cannot read {path}: {exc}") from None
    return data


def load_settings(
    flags: Mapping[str, Any] | None = None,
    environ: Mapping[str, str] | None = None,
    config_path: Path | None = None,
) -> Settings:
    """Resolve every setting; raises :class:`ConfigError` (one line) on a bad value.

    ``flags`` holds command-line values; ``None`` values count as "not given".
    """
    env = os.environ if environ is None else environ
    if config_path is None:
        config_path = config_file(env)
    toml = read_config_file(config_path)
    values: dict[str, Any] = {}
    given_by: dict[str, str] = {}
    for name, (var, parse) in _SPEC.items():
        raw: Any = None
        source = ""
        if flags and flags.get(name) is not None:
            raw, source = flags[name], f"--{name.replace('_', '-')}"
        elif env.get(var):
            raw, source = env[var], var
        elif toml.get(name) is not None:
            raw, source = toml[name], f"{config_path.name}: {name}"
        if raw is None:
            continue
        try:
            values[name] = parse(raw)
        except (TypeError, ValueError) as exc:
            shown = "(hidden)" if name == "api_key" else repr(raw)
            raise ConfigError(f"invalid {source} {shown}: {exc}") from None
        given_by[name] = source
    if "provider" not in values:
        values["provider"] = (
            "openai" if values.get("api_key") or values.get("base_url") else ("offline")
        )
    if "model" not in values:
        values["model"] = DEFAULT_MODELS[values["provider"]]
    values["keys"] = _keys(toml.get("keys"), config_path)
    values["pricing"] = _pricing(toml.get("pricing"), config_path)
    values["model_from_flag"] = given_by.get("model") == "--model"
    values.update(_essentials(toml, config_path, flags or {}, env))
    return Settings(**values)


def _keys(table: Any, path: Path) -> dict[str, str]:
    if table is None:
        return {}
    if not isinstance(table, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in table.items()
    ):
        raise ConfigError(f'invalid [keys] in {path.name}: expected action = "key" strings')
    return dict(table)


def price_of(settings: Settings, model: str | None = None) -> tuple[float, float] | None:
    """``(input, output)`` dollars per million tokens of ``model`` (default: the
    settings' model), or ``None`` when no price is configured."""
    return settings.pricing.get(model or settings.model)


def _pricing(table: Any, path: Path) -> dict[str, tuple[float, float]]:
    if table is None:
        return {}
    bad = ConfigError(f'invalid [pricing] in {path.name}: expected [pricing."MODEL"] '
                      "input = NUMBER, output = NUMBER (dollars per million tokens)")
    if not isinstance(table, dict):
        raise bad
    out: dict[str, tuple[float, float]] = {}
    for model, price in table.items():
        if not isinstance(price, dict):
            raise bad
        try:
            pair = (_price(price.get("input", 0)), _price(price.get("output", 0)))
        except (TypeError, ValueError):
            raise bad from None
        out[str(model)] = pair
    return out


def _price(value: Any) -> float:
    number = _to_float(value)
    if number < 0:
        raise ValueError("must not be negative")
    return number
# -- essentials: [permissions], sandbox, [mcp_servers.NAME] ---------------------------
SANDBOX_MODES = ("off", "workspace")
_RULE = re.compile(r"^[A-Za-z0-9_*?.\-]+(\(.+\))?$", re.S)


def _rule_list(value: Any, where: str) -> tuple[str, ...]:
    if value is None:
        return ()
    if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
        raise ConfigError(f"invalid {where}: expected a list of rule strings")
    for rule in value:
        if not _RULE.match(rule.strip()):
            raise ConfigError(f"invalid {where}: {rule!r} is not TOOL or TOOL(glob)")
    return tuple(v.strip() for v in value)


def _mcp_servers(table: Any, path: Path) -> dict[str, dict[str, Any]]:
    if table is None:
        return {}
    if not isinstance(table, dict):
        raise ConfigError(f"invalid [mcp_servers] in {path.name}: expected tables")
    out: dict[str, dict[str, Any]] = {}
    for name, server in table.items():
        where = f"[mcp_servers.{name}] in {path.name}"
        if not re.match(r"^[A-Za-z0-9_-]+$", name) or "__" in name:
            raise ConfigError(f"invalid {where}: use letters, digits, - and single _")
        if not isinstance(server, dict):
            raise ConfigError(f"invalid {where}: expected a table")
        has_cmd, has_url = isinstance(server.get("command"), str), isinstance(
            server.get("url"), str)
        if has_cmd == has_url:
            raise ConfigError(f"invalid {where}: give either command (stdio) or url (HTTP)")
        args = server.get("args", [])
        env = server.get("env", {})
        if not isinstance(args, list) or not all(isinstance(a, str) for a in args):
            raise ConfigError(f"invalid {where}: args must be a list of strings")
        if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
            raise ConfigError(f"invalid {where}: env must map names to strings")
        trust = server.get("trust", "ask")
        if trust not in ("ask", "read"):
            raise ConfigError(f"invalid {where}: trust must be ask or read")
        enabled = server.get("enabled", True)
        if not isinstance(enabled, bool):
            raise ConfigError(f"invalid {where}: enabled must be true or false")
        timeout = server.get("timeout", 120)
        if isinstance(timeout, bool) or not isinstance(timeout, (int, float)) or not (
                0 < timeout <= 86400):
            raise ConfigError(f"invalid {where}: timeout must be seconds (0 < timeout "
                              "<= 86400)")
        out[name] = {"command": server.get("command"), "args": list(args), "env": dict(env),
                     "url": server.get("url"), "trust": trust, "enabled": enabled,
                     "timeout": float(timeout)}
    return out


def _essentials(toml: Mapping[str, Any], path: Path, flags: Mapping[str, Any],
                env: Mapping[str, str]) -> dict[str, Any]:
    perms = toml.get("permissions")
    if perms is not None and not isinstance(perms, dict):
        raise ConfigError(f"invalid [permissions] in {path.name}: expected a table")
    perms = perms or {}
    out: dict[str, Any] = {
        "permissions_allow": _rule_list(perms.get("allow"), f"[permissions] allow in {path.name}"),
        "permissions_deny": _rule_list(perms.get("deny"), f"[permissions] deny in {path.name}"),
        "mcp_servers": _mcp_servers(toml.get("mcp_servers"), path),
    }
    for raw, source in ((flags.get("sandbox"), "--sandbox"),
                        (env.get("MTTUI_SANDBOX"), "MTTUI_SANDBOX"),
                        (toml.get("sandbox"), f"{path.name}: sandbox")):
        if raw is None or raw == "":
            continue
        try:
            out["sandbox"] = _choice(SANDBOX_MODES)(raw)
        except ValueError as exc:
            raise ConfigError(f"invalid {source} {raw!r}: {exc}") from None
        break
    network = toml.get("sandbox_network")
    if network is not None:
        try:
            out["sandbox_network"] = _to_bool(network)
        except ValueError as exc:
            raise ConfigError(f"invalid {path.name}: sandbox_network: {exc}") from None
    return out
