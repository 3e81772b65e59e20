"""The labelled sample (tests/support/labelled_sample.py) with gold from the references'
automatic correctness (`mmrb gold derive --from reference`) and one careless annotator,
``CARELESS``, who says "first is right, second is wrong, first is better" whatever the pair."""

from __future__ import annotations

from pathlib import Path
from typing import TYPE_CHECKING

from tests.support.labelled_sample import labelled_sample

if TYPE_CHECKING:
    from annotate.demo import Sample

CARELESS = "bob"


def quality_sample(db: Path) -> Sample:
    from curate.quality.gold import derive_gold
    from curate.store import Store

    info = labelled_sample(db, careless=CARELESS)
    with Store(info.db, info.images) as store:
        derive_gold(store, ["reference"])
    return info
