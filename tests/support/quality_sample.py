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


def careless_gold_alert(info: Sample, *, threshold: float = 0.5, min_n: int = 15) -> str:
    """The alert the Quality page shows on ``CARELESS``'s gold accuracy over every category,
    with its figures as the store's report has them (they move with the sample's labels): it
    must be there, on correctness of the second response, the one the careless one gets wrong."""
    from curate.quality.reliability import store_report
    from curate.store import Store

    with Store(info.db, info.images) as store:
        report = store_report(store, threshold=threshold, min_n=min_n)
    (text,) = [a.text() for a in report.alerts if a.category is None and a.text().startswith(f"{CARELESS}: gold ")]
    assert "below 50.0% on correctness of the second response (" in text, text
    assert not [a for a in report.alerts if not a.text().startswith(f"{CARELESS}: ")]  # the careless one alone
    return text
