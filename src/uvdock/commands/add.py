"""`uvdock add PKG... [--group G | --optional X]`: uv add in the container."""

from uvdock.commands.base import DependencyChange


class Command(DependencyChange):
    action = "add"
    helps = (
        "requirement, e.g. 'einops~=0.8'",
        "add to dependency group G",
        "add to extra X ([project.optional-dependencies])",
    )
