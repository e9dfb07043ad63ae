"""`uvdock image pull [--lts]`: pull the CI image from the GitLab registry and tag it locally."""

from __future__ import annotations

import argparse

from uvdock.cli import optin
from uvdock.commands import base
from uvdock.context import Context
from uvdock.errors import CommandFailed, EnvironmentUnusable
from uvdock.image import build as imagebuild
from uvdock.registry import gitlab_host
from uvdock.run import git
from uvdock.run.build_check import stream
from uvdock.run.engines import operand


class Command(base.Command):
    def configure(self, parser: argparse.ArgumentParser) -> None:
        parser.description = (
            "Pull <host>/<registry-image> where host comes from the git remote named by "
            "gitlab-remote (credentials and port dropped: a port causes 'access forbidden'), "
            "then tag it as the local image name the other commands use."
        )
        optin.add_lts_flag(parser, "pull the LTS image (lts-registry-image, tagged lts-image)")

    def run(self, ctx: Context, args: argparse.Namespace) -> int:
        cfg = ctx.config
        key = "lts_registry_image" if args.lts else "registry_image"
        wanted = getattr(cfg, key)
        if not wanted:
            raise EnvironmentUnusable(
                f"no registry image to pull for this repository ({ctx.said(key)})",
                hint=f"set {key.replace('_', '-')} in [tool.uvdock] to the CI image's path in "
                "your GitLab registry, or build it: `uvdock image build`",
            )
        name = cfg.gitlab_remote
        url = git.remote_url(ctx.repo, name)
        if url is None:
            raise EnvironmentUnusable(
                f"no git remote named `{name}` (the registry host comes from it)",
                hint=f"add it with `git remote add {name} <gitlab url>`, "
                "or set gitlab-remote in [tool.uvdock]",
            )
        host = gitlab_host.registry_host(url)
        if host is None:
            raise EnvironmentUnusable(f"git remote `{name}` ({url}) names no host")
        image = gitlab_host.registry_image(host, wanted)
        local = cfg.lts_image if args.lts else cfg.image
        operand(image, "registry image")
        operand(local, "image")
        engine = base.engine_for(ctx)
        steps = [imagebuild.pull_argv(engine, image), imagebuild.tag_argv(engine, image, local)]
        if ctx.dry_run:
            for argv in steps:
                ctx.out.command(argv)
            return 0
        try:
            stream(ctx, steps[0])
        except CommandFailed as failed:
            # The login hint fits only a registry that answered: a host that does not resolve
            # is a network problem, whatever the engine printed.
            failed.hint = (
                "'access forbidden': log in first (`docker login HOST`); "
                "see `uvdock doctor LOGFILE`"
                if gitlab_host.resolves(host)
                else f"`{host}` does not resolve from here: name resolution failed (DNS, VPN or "
                "proxy), not a login problem; check the network, or the remote that gitlab-remote "
                "names; see `uvdock doctor LOGFILE`"
            )
            raise
        stream(ctx, steps[1])
        ctx.out.info(f"pulled {image} and tagged it {local}, the image uvdock uses")
        return 0
