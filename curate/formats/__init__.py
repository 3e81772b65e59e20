"""Every published format, each read (and, where the project writes it, written) in one place.

Each format is one ``BenchmarkFormat`` registered in ``registry.FORMATS``: its name and
aliases, and the functions with which the importer (``curate/ingest``), the build's exports
(``curate/benchmark/export.py``) and scoring (``mmrb_eval``) read or write it; they look formats
up there. One module per format reads and writes its records:

- ``triplets``: the project's triplets (``mmrb build``: JSONL and a Hugging Face dataset)
  and the chosen/rejected copies of other benchmarks;
- ``mmrb``: Multimodal RewardBench records and its judges' outputs;
- ``vlrewardbench``: VL-RewardBench original records, the text copy, inference records;
- ``mmrb2``: MMRB2 ground truth and judgements;
- ``mm_rlhf``: MM-RLHF-RewardBench;
- ``r1_rewards``: R1-Reward's outputs (a benchmark's rows plus ``rewards``);
- ``judgments``: this project's judgments JSONL.

``reader`` reads files row by row (JSONL, JSON, CSV, Parquet) with the line of each;
``fields`` gives typed access to a row's fields, every problem naming FILE:LINE:field.
A format's reader returns typed records and knows nothing of the store or of scoring:
turning records into items and pairs is the importer's job, into evaluation pairs and
judgments scoring's. ``detect_layout`` tells a benchmark file's layout from its first record.
"""

from __future__ import annotations

from .registry import FORMATS, BenchmarkFormat, Layout, detect_layout

__all__ = ["FORMATS", "BenchmarkFormat", "Layout", "detect_layout"]
