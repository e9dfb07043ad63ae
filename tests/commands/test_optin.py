"""The one LTS opt-in rule (uvdock.cli.optin)."""

from __future__ import annotations

import argparse

import pytest

from uvdock.cli import optin
from uvdock.cli.spec import GlobalOptions
from uvdock.context import Context
from uvdock.errors import InputRefused
from uvdock.ui.output import Output


def test_opted_in_passes() -> None:
    optin.require_lts(True, "image bump --lts", ["uvdock", "image", "bump", "25.01"])


def test_refusal_explains_the_policy_and_shows_the_command_with_lts() -> None:
    with pytest.raises(InputRefused) as info:
        optin.require_lts(False, "lts pin", ["uvdock", "lts", "pin", "a==1", "b @ https://h/x y"])
    message = info.value.message
    assert info.value.exit_code == 2
    assert "older long-term-support base" in message
    assert "only when a maintainer explicitly asks" in message
    assert message.endswith("re-run with --lts: uvdock lts pin a==1 'b @ https://h/x y' --lts")
    assert "\n" not in message


def test_the_flag_is_added_once() -> None:
    assert optin.with_lts_flag(["uvdock", "sync", "--lts"]) == ["uvdock", "sync", "--lts"]
    assert optin.with_lts_flag(["uvdock", "sync"]) == ["uvdock", "sync", "--lts"]


def test_command_line_keeps_repo_and_dry_run() -> None:
    ctx = Context(options=GlobalOptions(repo="/r e", dry_run=True), out=Output())
    argv = optin.command_line(ctx, "image", "build")
    assert argv == ["uvdock", "--repo", "/r e", "--dry-run", "image", "build"]


def test_add_lts_flag() -> None:
    parser = argparse.ArgumentParser()
    optin.add_lts_flag(parser)
    assert parser.parse_args([]).lts is False
    assert parser.parse_args(["--lts"]).lts is True
