"""Annotator quality control: gold answers (``gold``), qualification (``qualification``),
per-annotator reliability (``reliability``) and model-based aggregation (``aggregate``).

Control tasks themselves are assignments (``curate/assign.py`` mixes them in); the store
keeps gold in its own table (``curate/store/gold.py``), read by nothing on an annotator's
path but the qualification gate's pass/fail.
"""
