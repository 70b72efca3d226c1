"""Where the helper keeps its state, as paths: below the three roots of `roots` (which says where they are),
resolved when used (never at import) so that tests only set variables."""

from __future__ import annotations

from binascii import crc32
from pathlib import Path

from .names import NAME_CHARACTERS, folder_path, hub_id
from .roots import cache_root, config_root, state_root


def config_dir() -> Path:
    """Folder of `config.json`."""
    return Path(config_root())


def cache_dir() -> Path:
    """Root of the per-bucket caches (safe to delete: it is rebuilt from the bucket)."""
    return Path(cache_root())


def state_dir() -> Path:
    """Durable local state that must survive: pending uploads, the machine id, backups."""
    return Path(state_root())


def roots() -> tuple[Path, Path, Path]:
    """The config, cache and state roots: everything below them is the helper's own, and private."""
    return config_dir(), cache_dir(), state_dir()


def config_file() -> Path:
    """The machine's configuration: bucket, project mappings, installed core skill."""
    return config_dir() / "config.json"


def bucket_cache(uri: str) -> Path:
    """The cache folder of one bucket: `<cache>/<bucket key>`."""
    return cache_dir() / bucket_key(uri)


def bucket_key(uri: str) -> str:
    """A folder name that identifies a bucket (hub names cannot contain `--`, so this is unambiguous)."""
    if (ident := hub_id(uri)) is not None:
        return "hf--" + ident.replace("/", "--")
    folder = str(folder_path(uri))
    # readable (the last two folder names) and distinct (a checksum of the whole path)
    slug = "".join(c if c in NAME_CHARACTERS else "_" for c in "-".join(folder.strip("/").split("/")[-2:]))[:60]
    return f"file--{slug}--{crc32(folder.encode()):08x}"
