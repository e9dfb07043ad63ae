"""`uvdock add PKG... [--group G | --optional X]`: uv add in the container."""

from uvdock.commands import base


class Command(base.DependencyChange):
    action = "add"
    helps = (
        "requirement, e.g. 'einops~=0.8'",
        "add to dependency group G",
        "add to extra X ([project.optional-dependencies])",
    )
