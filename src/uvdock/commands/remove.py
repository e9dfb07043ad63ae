"""`uvdock remove PKG... [--group G | --optional X]`: uv remove in the container, as add."""

from uvdock.commands.base import DependencyChange


class Command(DependencyChange):
    action = "remove"
    helps = ("package name", "remove from dependency group G", "remove from extra X")
