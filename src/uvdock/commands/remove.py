"""`uvdock remove PKG... [--group G | --optional X]`: uv remove in the container."""

from uvdock.commands.depchange import DependencyChange


class Command(DependencyChange):
    action = "remove"
    helps = ("package name", "remove from dependency group G", "remove from extra X")
