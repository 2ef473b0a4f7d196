"""Start a project: the starter definitions (``toolc init``) and an OpenClaw config turned
into definitions (``toolc import-openclaw``)."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from ..importers.openclaw import ConfigError, ImportRefused, ImportResult, import_openclaw
from ..importers.openclaw_load import load_config
from ..importers.openclaw_secrets import Secrets
from ..importers.starter import init_files, write_new_files
from ..targets import NEWEST_KEY


@dataclass(frozen=True, slots=True, kw_only=True)
class InitResult:
    """What ``init`` wrote below its directory, and which of those files existed before."""

    written: tuple[str, ...]
    replaced: tuple[str, ...]


def init(definitions: Path = Path("definitions"), *, force: bool = False,
         openclaw: str = NEWEST_KEY) -> InitResult:
    """Write the starter definitions of the OpenClaw release ``openclaw`` (core catalog,
    profiles, dialects, an example policy naming the release, the editor schema) into
    ``definitions``; other files there are kept. ProjectWriteError when a file init writes
    exists (unless ``force``: then only those are overwritten)."""
    files = init_files(openclaw)
    replaced = tuple(sorted(rel for rel in files if (definitions / rel).exists()))
    write_new_files(files, definitions, force=force, refuse_non_empty=False)
    return InitResult(written=tuple(sorted(files)), replaced=replaced)


def import_openclaw_config(config: Path, out: Path = Path("definitions"), *,
                           force: bool = False, allow_partial: bool = False,
                           openclaw: str | None = None) -> ImportResult:
    """Write definitions meaning what the OpenClaw config file ``config`` (JSON or JSON5, its
    ``$include`` files read as OpenClaw reads them) means into ``out`` (new or empty unless
    ``force``), and return the report. ImportRefused (several messages) when a key that could
    change tool access is left out (unless ``allow_partial``) or a secret would be kept;
    ConfigError when the config cannot be read; ProjectWriteError when ``out`` is refused.
    ``openclaw`` names the release to follow (None: the config's meta.lastTouchedVersion,
    else the newest; ``ImportResult.openclaw`` says which and why).
    Messages are redacted: secrets are never written nor printed. ``validate(out)`` checks
    the result as ``toolc import-openclaw`` does."""
    try:
        loaded = load_config(config, config.as_posix())
        result = import_openclaw(loaded.config, config.name, allow_partial=allow_partial,
                                 included=loaded.included, openclaw=openclaw)
    except ImportRefused:
        raise
    except ConfigError as exc:  # before the config is known: redact by shape
        raise ConfigError(Secrets().redact(str(exc))) from None
    write_new_files(result.files, out, force=force, refuse_non_empty=True)
    return result
