"""Where mttui keeps its data, and the permissions it keeps them with."""

from __future__ import annotations

import os
from collections.abc import Mapping
from pathlib import Path

from .plain import Plain

DIR_MODE = 0o700
FILE_MODE = 0o600


def data_home(environ: Mapping[str, str] | None = None) -> Path:
    """The data directory: ``MTTUI_HOME`` or platformdirs' user data dir."""
    env = os.environ if environ is None else environ
    if env.get("MTTUI_HOME"):
        return Path(env["MTTUI_HOME"]).expanduser().resolve()
    import platformdirs

    return Path(platformdirs.user_data_dir("mttui"))


def config_file(environ: Mapping[str, str] | None = None) -> Path:
    """``config.toml`` in platformdirs' user config dir (``MTTUI_CONFIG`` overrides)."""
    env = os.environ if environ is None else environ
    if env.get("MTTUI_CONFIG"):
        return Path(env["MTTUI_CONFIG"]).expanduser()
    import platformdirs

    return Path(platformdirs.user_config_dir("mttui")) / "config.toml"


def project_hash(project: Path) -> str:
    """First 16 hex digits of sha256 of the resolved absolute project directory."""
    resolved = str(Path(project).expanduser().resolve())
    try:  # the interpreter's own sha256: hashlib loads OpenSSL first (~2 ms of every start)
        from _sha256 import sha256
    except ImportError:  # Python 3.12 and later name the module _sha2
        from hashlib import sha256
    return str(sha256(resolved.encode("utf-8")).hexdigest()[:16])


def ensure_dir(path: Path) -> Path:
    """Create ``path`` (and parents) with mode 0700; tighten it if it exists."""
    path.mkdir(parents=True, exist_ok=True, mode=DIR_MODE)
    if path.stat().st_mode & 0o777 != DIR_MODE:
        os.chmod(path, DIR_MODE)
    return path


def secure_file(path: Path) -> None:
    """Give an existing file mode 0600."""
    if path.exists() and path.stat().st_mode & 0o777 != FILE_MODE:
        os.chmod(path, FILE_MODE)


class Layout(Plain):
    """The on-disk layout under one data home (storage.md)."""

    home: Path

    @property
    def index_path(self) -> Path:
        return self.home / "index.sqlite"

    @property
    def history_root(self) -> Path:
        return self.home / "history"

    def project_dir(self, phash: str) -> Path:
        return self.history_root / phash

    def checkpoints_path(self, phash: str) -> Path:
        return self.project_dir(phash) / "checkpoints.sqlite"

    def ensure(self) -> None:
        ensure_dir(self.home)
        ensure_dir(self.history_root)
