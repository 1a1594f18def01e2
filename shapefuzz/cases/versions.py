"""torch versions as shapefuzz records them: the release part of `torch.__version__`, without
the local build tag (`2.14.1+cu130` and `2.14.1+cpu` are one release), so a case or a known issue
seen on one build of a release holds for another. A source build keeps its pre-release part
(`2.16.0a0+git1234` is `2.16.0a0`), which orders before the release it leads to."""

from __future__ import annotations

from packaging.version import InvalidVersion, Version

__all__ = ["at_least", "release", "running_release", "version_key"]


def release(version: str) -> str:
    """`2.14.1+cu130` -> `2.14.1`; `2.16.0a0+git1234` -> `2.16.0a0`; text that is no version
    is kept as it is (compared as text by at_least)."""
    return version.split("+", 1)[0].strip()


def running_release() -> str:
    import torch

    return release(torch.__version__)


def version_key(version: str) -> Version:
    """A sort key in PEP 440 order, local tags ignored: "2.16.0.dev1" < "2.16.0a0" < "2.16.0rc1"
    < "2.16.0" < "2.16.0.post1". ValueError when the text is no version."""
    try:
        return Version(release(version))
    except InvalidVersion:
        raise ValueError(f"not a torch version: {version!r} (expected e.g. 2.14.1 or "
                         "2.16.0a0+git1234)") from None


def at_least(version: str, bound: str) -> bool:
    """Whether `version` is `bound` or later; text that is no version only equals itself."""
    try:
        return version_key(version) >= version_key(bound)
    except ValueError:
        return release(version) == release(bound)
