"""``toolc build`` and ``toolc validate``: definitions in, a build (or its diagnostics) out."""

from __future__ import annotations

import sys
from pathlib import Path

import click

from .. import api
from ._app import DEFS_ARG, EXIT_INPUT, echo, fail, guard, main, message, print_diagnostics, warn


@main.command()
@DEFS_ARG
@click.option("-o", "--out", default="build", type=click.Path(path_type=Path),
              help="Output directory (replaced atomically).")
@click.option("--strict", is_flag=True, help="Treat warnings as errors.")
@click.option("--package-name", default=api.DEFAULT_PACKAGE,
              help="Name of the generated runtime package.")
@click.option("--check", is_flag=True,
              help="Write nothing; exit 1 when OUT differs from a fresh build (drift).")
@click.option("--force", is_flag=True,
              help="Rebuild even when inputs are unchanged (never overrides the OUT checks).")
@click.option("--lock-timeout", type=click.FloatRange(min=0), default=None, metavar="SEC",
              help="When another toolc process is writing OUT, wait at most SEC seconds (0: fail "
              "at once) instead of until it is done; then exit 1.")
@click.option("--no-cache", is_flag=True,
              help="A clean build: neither read nor write the incremental cache "
              "(.toolc-cache/ beside DEFS; the build is byte for byte the same either way).")
@click.option("--cache-dir", type=click.Path(path_type=Path), default=None, metavar="DIR",
              help="Keep the incremental cache in DIR instead of .toolc-cache/ beside DEFS.")
@guard
def build(defs: Path, out: Path, strict: bool, package_name: str, check: bool,
          force: bool, lock_timeout: float | None, no_cache: bool,
          cache_dir: Path | None) -> None:
    """Compile DEFS (default: definitions) into OUT.

    OUT is replaced atomically and only if it is a previous toolc build, an empty directory
    or missing: a file, the definitions directory, the current directory (or a directory
    containing either) and any other non-empty directory are refused, even with --force.
    Two builds into one OUT never mix: the second waits for the first (see --lock-timeout),
    then rebuilds or finds OUT up to date. Units whose inputs did not change (each file's
    parse, each channel's tables) come from the incremental cache, .toolc-cache/ beside DEFS
    (add it to .gitignore); --no-cache builds from scratch.

    \b
    Examples:
      toolc build                      # definitions/ -> build/
      toolc build --check --strict     # CI: exit 1 on drift or on any warning
      toolc build policies -o dist/policy --package-name acme_tools
    """
    try:
        api.check_package_name(package_name)
    except ValueError as exc:
        raise click.BadParameter(str(exc), param_hint="--package-name") from exc
    if check:
        checked = api.check_build(defs, out, strict=strict, package_name=package_name)
        print_diagnostics(checked.diagnostics)
        for rel in checked.stale:
            echo(message("error", "stale", pos=f"{out.as_posix()}/{rel}"), err=True)
        if checked.stale:
            echo("run `make build` (or `toolc build`) and commit the result", err=True)
            sys.exit(EXIT_INPUT)
        return

    def waiting(lock: Path) -> None:
        echo(f"waiting for another toolc process writing {out.as_posix()} (lock "
             f"{lock.as_posix()})", err=True)

    try:
        result = api.build(defs, out, strict=strict, package_name=package_name, force=force,
                           lock_timeout=lock_timeout, on_wait=waiting,
                           cache=False if no_cache else cache_dir or True)
    except (api.OutputDirError, api.LockTimeoutError) as exc:
        fail(str(exc))
    print_diagnostics(result.diagnostics)
    if result.cache_off:
        warn(f"incremental cache not used: {result.cache_off}")
    if result.up_to_date:
        echo(f"{out.as_posix()} is up to date", err=True)
    else:
        echo(f"wrote {len(result.files)} files to {out.as_posix()}", err=True)


@main.command()
@DEFS_ARG
@click.option("--strict", is_flag=True,
              help="Treat warnings as errors (recommended in CI: an unknown name in a deny "
              "list is otherwise only a warning).")
@guard
def validate(defs: Path, strict: bool) -> None:
    """Check DEFS (default: definitions) and report every problem; writes nothing.

    \b
    Examples:
      toolc validate
      toolc validate --strict policies
    """
    diagnostics = api.validate(defs, strict=strict)
    print_diagnostics(diagnostics)
    if any(d.severity == "error" for d in diagnostics):
        sys.exit(EXIT_INPUT)
    echo(f"{defs.as_posix()}: ok", err=True)
