"""What a command receives: global options, output, environment, and lazily the repo and config."""

from __future__ import annotations

import os
from functools import cached_property
from pathlib import Path
from typing import Any

from uvdock.cli.spec import GlobalOptions
from uvdock.config import settings as config_module
from uvdock.errors import InputRefused
from uvdock.ui.output import Output

# The base a fork's branches are compared with and relocked on by default.
FORK_BASE_REF = "upstream/main"


class Context:
    # A plain class: `dataclasses` would import `inspect` on every command's start-up.
    def __init__(
        self,
        options: GlobalOptions,
        out: Output,
        env: dict[str, str] | None = None,
        cwd: Path | None = None,
    ) -> None:
        self.options = options
        self.out = out
        self.env = dict(os.environ) if env is None else env
        self.cwd = Path.cwd() if cwd is None else cwd

    def with_options(self, **changes: Any) -> Context:  # repo and config read anew
        return Context(self.options._replace(**changes), self.out, self.env, self.cwd)

    @cached_property
    def repo(self) -> Path:
        """--repo PATH as given (it may be a project inside a larger checkout), else the
        git top level of the working directory. Either way it must be in a git work tree."""
        from uvdock.run import git

        git.absolute_git_paths(self.env, self.cwd)
        if self.options.repo:
            path = Path(self.options.repo)
            if not path.is_dir():
                raise InputRefused(f"--repo {path}: no such directory")
            path = path.resolve()
            git.toplevel(path)
            git.require_git_work_tree(path)
            return path
        return git.toplevel(self.cwd.resolve())

    @cached_property
    def project(self) -> Path:
        """The uv project (pyproject.toml + uv.lock) commands act on: --repo PATH as given,
        else the nested project the working directory is in (its own uv.lock, not a
        workspace member), else the repository root."""
        if self.options.repo:
            return self.repo
        from uvdock.project.pyproject import enclosing_project

        return enclosing_project(self.repo, self.cwd.resolve())

    @property
    def project_path(self) -> str:
        rel = self.project.relative_to(self.repo).as_posix()
        return "" if rel == "." else rel

    def project_file(self, name: str) -> str:
        """A file of the project as the user should read it: `uv.lock` at the root,
        `infra/tool/uv.lock` in a nested project."""
        return f"{self.project_path}/{name}" if self.project_path else name

    @cached_property
    def layers(self) -> config_module.Layers:
        """The configuration before the trust check, with where each value came from."""
        from uvdock.config.derived import derive

        layers = derive(self.repo, config_module.load_layers(self.repo, self.env))
        given = {name: getattr(self.options, name) for name in ("engine", "container", "image")}
        if not (overrides := {name: value for name, value in given.items() if value}):
            return layers
        origins = {**layers.origins, **{name: f"--{name}" for name in overrides}}
        return layers._replace(config=layers.config.replace(**overrides), origins=origins)

    @cached_property
    def config(self) -> config_module.Config:
        """The configuration; refused (exit 2) while an untrusted repository file sets a key
        that changes where code runs (config_trust.GATED_KEYS)."""
        layers = self.layers
        if layers.source:
            from uvdock.config import trust as config_trust

            real = Path(os.path.realpath(self.repo))
            args = (layers.origins, layers.table, layers.source, real, self.env)
            if keys := self.widening(config_trust.untrusted(*args)):
                message, hint = config_trust.refusal(keys, layers.source, real, self.env)
                raise InputRefused(message, hint=hint)
        return layers.config

    @cached_property
    def _fork_default(self) -> bool:
        """base-ref unset in a fork (a clone with an `upstream` remote: its `origin/main` is
        the fork's own, often stale, main): the base is FORK_BASE_REF."""
        from uvdock.run import git

        unset = "base_ref" not in self.layers.origins
        return unset and git.remote_url(self.repo, "upstream") is not None

    @cached_property
    def base_ref(self) -> str:
        return FORK_BASE_REF if self._fork_default else self.config.base_ref

    def base_ref_said(self) -> str:
        if self._fork_default:
            return (
                f"base-ref {FORK_BASE_REF}, the default in a fork (this clone has an "
                "`upstream` remote; set base-ref to choose another)"
            )
        return self.said("base_ref")

    def widening(self, keys: dict[str, Any]) -> dict[str, Any]:
        """The gated `keys` (the repository's own values) that differ from the built-in
        default: a repository spelling out a default (venv = "/opt/venv") widens nothing and
        needs no trust. The repository's value, not the final one: what the user set in the
        environment or their own file must not change what the repository is trusted for."""
        defaults = {**config_module.Config._field_defaults}
        defaults["uv_cache"] = config_module.default_uv_cache(self.env)
        own = config_module.table_values(keys, self.layers.source)
        return {
            key: value
            for key, value in keys.items()
            if own[key.replace("-", "_")] != defaults[key.replace("-", "_")]
        }

    def said(self, name: str) -> str:
        """A setting as the user should read it, naming who chose it: `--engine local`
        when it was the flag, `engine = local, from uvdock.toml` otherwise."""
        value = getattr(self.config, name)
        key = name.replace("_", "-")
        origin = self.layers.origins.get(name, "")
        plain = isinstance(value, str) and value.isprintable() and value and " " not in value
        shown = value if plain else repr(value)  # repository text: escaped unless plain
        if origin.startswith("--"):
            return f"{origin} {shown}"
        return f"{key} = {shown}, {f'from {origin}' if origin else 'the default'}"

    @property
    def dry_run(self) -> bool:
        return self.options.dry_run

    def user_path(self, path: str | Path) -> Path:
        """A path the user typed: relative ones are taken from where uvdock was started."""
        return self.cwd / path  # an absolute `path` replaces cwd

    def rel(self, path: Path) -> str:
        """A path as the user should see it: relative to the repository root when inside it."""
        resolved = path.resolve()
        return str(resolved.relative_to(self.repo) if resolved.is_relative_to(self.repo) else path)
