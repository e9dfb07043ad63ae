"""Import names whose distribution is named otherwise (`yaml` is PyYAML): a ModuleNotFoundError
names the import, `uv add` wants the distribution. The first of a row is the one to add; an
empty row: no distribution on PyPI provides it. A dotted key (`google.protobuf`) matches only
that submodule of a shared namespace package. A name not listed is its own distribution.
"""

from __future__ import annotations

from collections.abc import Mapping

DISTRIBUTIONS: Mapping[str, tuple[str, ...]] = {
    "yaml": ("PyYAML",),
    "PIL": ("pillow",),
    "cv2": ("opencv-python", "opencv-python-headless", "opencv-contrib-python"),
    "sklearn": ("scikit-learn",),
    "skimage": ("scikit-image",),
    "bs4": ("beautifulsoup4",),
    "dateutil": ("python-dateutil",),
    "dotenv": ("python-dotenv",),
    "jwt": ("PyJWT",),
    "attr": ("attrs",),
    "Crypto": ("pycryptodome",),
    "git": ("GitPython",),
    "gitlab": ("python-gitlab",),
    "zmq": ("pyzmq",),
    "OpenSSL": ("pyOpenSSL",),
    "serial": ("pyserial",),
    "magic": ("python-magic",),
    "fitz": ("PyMuPDF",),
    "docx": ("python-docx",),
    "pptx": ("python-pptx",),
    "transformer_engine": ("transformer-engine",),
    "modelopt": ("nvidia-modelopt",),
    "multistorageclient": ("multi-storage-client",),
    "msc": ("multi-storage-client",),
    "google.protobuf": ("protobuf",),
    "grpc": ("grpcio",),
    "pkg_resources": ("setuptools",),
    "Levenshtein": ("levenshtein", "python-levenshtein"),
    "tensorrt_llm": ("tensorrt-llm",),
    "apex": (),  # NVIDIA Apex: built from source (the NGC PyTorch images ship it)
}


def distributions(module: str) -> tuple[str, ...] | None:
    """Dotted: the longest listed prefix; None when not listed, () when none on PyPI does."""
    parts = module.split(".")
    prefixes = (".".join(parts[:end]) for end in range(len(parts), 0, -1))
    return next((DISTRIBUTIONS[p] for p in prefixes if p in DISTRIBUTIONS), None)
