"""`uvdock remove PKG... [--group G | --optional X]`: uv remove in the container, as add."""

from uvdock.commands import base


class Command(base.DependencyChange):
    action = "remove"
    helps = ("package name", "remove from dependency group G", "remove from extra X")
