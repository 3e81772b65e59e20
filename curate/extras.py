"""The optional extras: packages only a few commands need, kept out of the lean install.

A command that needs one calls :func:`require_extra` before its work, so a missing package is
one line naming the extra to install, not an ImportError traceback halfway through.
"""

from __future__ import annotations

import importlib.util
from typing import Literal

from .errors import MmrbError

Extra = Literal["labelstudio", "aggregate"]

# extra -> (the module imported, the distribution pyproject.toml's extra declares)
EXTRAS: dict[Extra, tuple[str, str]] = {
    "labelstudio": ("label_studio_sdk", "label-studio-sdk"),  # mmrb labelstudio push/pull
    "aggregate": ("crowdkit", "crowd-kit"),  # MACE (--aggregate mace)
}


class MissingExtra(MmrbError):
    pass


def require_extra(extra: Extra, needed_by: str) -> None:
    """Raise :class:`MissingExtra` when ``extra``'s package is not installed; ``needed_by`` names
    what needs it (a command or an option), for the message."""
    module, dist = EXTRAS[extra]
    # find_spec, not an import: the check is cheap, and the caller imports only what it uses.
    # A module set to None in sys.modules (an import blocked) counts as missing, as import would.
    if importlib.util.find_spec(module) is None:
        raise MissingExtra(
            f"{needed_by} needs {dist}, an optional extra: pip install 'mmrb-studio[{extra}]' "
            f"(in a clone: pip install -e '.[{extra}]')"
        )


__all__ = ["EXTRAS", "Extra", "MissingExtra", "require_extra"]
