"""The build's Croissant description (``croissant.json``, https://mlcommons.org/croissant):
JSON-LD naming the dataset, its licence and citation, its files (each Parquet file a
``FileObject`` with its sha256, the images folder a ``FileSet`` per file type) and one
``RecordSet`` per config of the dataset card, whose fields are the Parquet file's columns
with their data types.

Croissant 1.0, not 1.1: mlcroissant 1.1.1 (the reference reader, used by the tests) reads a
list of images only as 1.0 declares one (``repeated``); 1.1's ``isArray`` makes it cast the
whole list as one image and fail. Written here with the json module: mlcroissant is a test
dependency, not a runtime one. The fields are read from the Parquet file's own schema (the
Hugging Face features the export wrote into it), so the description cannot drift from the
file. Deterministic: keys sorted, no dates, the files' hashes of their bytes.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from ..errors import MmrbError

FILE_NAME = "croissant.json"
CONFORMS_TO = "http://mlcommons.org/croissant/1.0"
# the 1.0 context as Croissant's own examples and mlcroissant write it (a reader warns on a
# context without these keys)
CONTEXT: dict[str, Any] = {
    "@language": "en",
    "@vocab": "https://schema.org/",
    "citeAs": "cr:citeAs",
    "column": "cr:column",
    "conformsTo": "dct:conformsTo",
    "cr": "http://mlcommons.org/croissant/",
    "rai": "http://mlcommons.org/croissant/RAI/",
    "data": {"@id": "cr:data", "@type": "@json"},
    "dataType": {"@id": "cr:dataType", "@type": "@vocab"},
    "dct": "http://purl.org/dc/terms/",
    "equivalentProperty": "cr:equivalentProperty",
    "examples": {"@id": "cr:examples", "@type": "@json"},
    "extract": "cr:extract",
    "field": "cr:field",
    "fileProperty": "cr:fileProperty",
    "fileObject": "cr:fileObject",
    "fileSet": "cr:fileSet",
    "format": "cr:format",
    "includes": "cr:includes",
    "isLiveDataset": "cr:isLiveDataset",
    "jsonPath": "cr:jsonPath",
    "key": "cr:key",
    "md5": "cr:md5",
    "parentField": "cr:parentField",
    "path": "cr:path",
    "recordSet": "cr:recordSet",
    "references": "cr:references",
    "regex": "cr:regex",
    "repeated": "cr:repeated",
    "replace": "cr:replace",
    "samplingRate": "cr:samplingRate",
    "sc": "https://schema.org/",
    "separator": "cr:separator",
    "source": "cr:source",
    "subField": "cr:subField",
    "transform": "cr:transform",
}
# a Hugging Face Value dtype -> Croissant's data type (every other dtype is refused, not guessed)
VALUE_TYPES = {
    "string": "sc:Text",
    "large_string": "sc:Text",
    "bool": "sc:Boolean",
    **{f"{u}int{n}": "sc:Integer" for u in ("", "u") for n in (8, 16, 32, 64)},
    **{f"float{n}": "sc:Float" for n in (16, 32, 64)},
}


@dataclass(frozen=True)
class Config:
    """A config of the dataset (the card's ``configs``): its name (the RecordSet's), its Parquet
    file relative to the build folder, what its records are, and a description of each column
    (a sub-field of a struct column as ``column.sub``). The triplets are the ``default``
    config; another (the raw labels, say) is one more ``Config``."""

    name: str
    parquet: str
    description: str
    columns: Mapping[str, str]
    key: str | None = None  # the column that identifies a record, when one does


@dataclass(frozen=True)
class About:
    """What the description says of the dataset as a whole."""

    name: str
    description: str
    license: str  # the Hugging Face licence id (``cc-by-nc-4.0``, ``other``, ...)
    citation: str  # a BibTeX entry
    license_note: str = ""
    keywords: Sequence[str] = ()
    languages: Sequence[str] = ()


# Hugging Face licence ids whose licence has a canonical URL; Creative Commons ones are spelled
# out by _CC. Any other id (``other``, ``unknown``, a model licence) is named, not turned into a URL.
_LICENSE_URLS = {
    "apache-2.0": "https://www.apache.org/licenses/LICENSE-2.0",
    "mit": "https://opensource.org/license/mit",
    "bsd-2-clause": "https://opensource.org/license/bsd-2-clause",
    "bsd-3-clause": "https://opensource.org/license/bsd-3-clause",
    "cc0-1.0": "https://creativecommons.org/publicdomain/zero/1.0/",
    "odbl": "https://opendatacommons.org/licenses/odbl/1-0/",
    "odc-by": "https://opendatacommons.org/licenses/by/1-0/",
    "pddl": "https://opendatacommons.org/licenses/pddl/1-0/",
    "cdla-permissive-1.0": "https://cdla.dev/permissive-1-0/",
    "cdla-permissive-2.0": "https://cdla.dev/permissive-2-0/",
    "cdla-sharing-1.0": "https://cdla.dev/sharing-1-0/",
    "mpl-2.0": "https://www.mozilla.org/en-US/MPL/2.0/",
    "unlicense": "https://unlicense.org/",
}
_CC = re.compile(r"cc-(by(?:-nc)?(?:-nd|-sa)?)-([1-4]\.[05])")


def license_url(license_id: str) -> str | None:
    """The URL of a Hugging Face licence id, or None when there is no one licence it names."""
    if m := _CC.fullmatch(license_id):
        return f"https://creativecommons.org/licenses/{m[1]}/{m[2]}/"
    return _LICENSE_URLS.get(license_id)


def _license(about: About) -> str | dict[str, str]:
    """A URL where the id has one; else the licence named as a CreativeWork, with the note."""
    url = license_url(about.license)
    if url:
        return url
    work = {"@type": "sc:CreativeWork", "name": about.license}
    return {**work, "description": about.license_note} if about.license_note else work


def _sha256(path: Path) -> str:
    with path.open("rb") as f:
        return hashlib.file_digest(f, "sha256").hexdigest()


def _file_object(config: Config, root: Path) -> dict[str, Any]:
    return {
        "@type": "cr:FileObject",
        "@id": config.parquet,
        "name": config.parquet,
        "description": f"The records of the {config.name} config (RecordSet {config.name!r}).",
        "contentUrl": config.parquet,
        "encodingFormat": "application/x-parquet",
        "sha256": _sha256(root / config.parquet),
    }


def _file_sets(root: Path, folder: str) -> list[dict[str, Any]]:
    """One FileSet per file type in ``folder`` (a FileSet has one encoding format)."""
    # pillow's own tables (the store names each file by its pillow format), not the mimetypes
    # module's, which read the machine's /etc/mime.types: the same build, the same bytes anywhere
    from PIL import Image

    formats = Image.registered_extensions()
    suffixes = sorted({p.suffix for p in (root / folder).glob("*.*") if p.is_file()})
    out = []
    for suffix in suffixes:
        # a format without a media type of its own (rare): said to be bytes, not given a guessed type
        kind = Image.MIME.get(formats.get(suffix.lower(), ""), "application/octet-stream")
        out.append(
            {
                "@type": "cr:FileSet",
                "@id": f"{folder}-{suffix[1:]}",
                "name": f"{folder}-{suffix[1:]}",
                "description": f"The image files of the build (`{folder}/<sha256>{suffix}`), named by their hash: "
                "the paths in triplets.jsonl point to them.",
                "encodingFormat": kind,
                "includes": f"{folder}/*{suffix}",
            }
        )
    return out


def _field(
    config: Config, column: str, feature: Any, names: tuple[str, ...], json_path: tuple[str, ...], where: str
) -> dict[str, Any]:
    """The Croissant field of a column (``names`` empty) or of a sub-field of a struct column
    (``names``: the keys down to it; ``json_path``: the same from the list element it is in,
    when in one, since a reader applies a sub-field's path to each element)."""
    # deferred: only the build's export, which has loaded datasets already, describes a file
    from datasets import Image, LargeList, List, Sequence, Value

    name = ".".join((column, *names))
    field_id = "/".join((config.name, column, *names))
    if name not in config.columns:
        raise MmrbError(f"{where}: the column {name!r} has no description in the {config.name!r} config")
    out: dict[str, Any] = {"@type": "cr:Field", "@id": field_id, "name": field_id, "description": config.columns[name]}
    if isinstance(feature, (List, LargeList, Sequence)):
        out["repeated"] = True
        feature = feature.feature
        if names or isinstance(feature, (List, LargeList, Sequence)):  # a list in a struct or a list: none follows it
            raise MmrbError(f"{where}: the column {name!r} holds a nested list, which this description does not cover")
    if isinstance(feature, dict):
        out["subField"] = [
            _field(config, column, sub, (*names, key), (*json_path, key), where) for key, sub in feature.items()
        ]
        return out
    if isinstance(feature, Image):
        out["dataType"] = "sc:ImageObject"
        json_path = (*json_path, "bytes")  # the image's bytes in its {bytes, path} struct
    elif isinstance(feature, Value) and feature.dtype in VALUE_TYPES:
        out["dataType"] = VALUE_TYPES[feature.dtype]
    else:
        raise MmrbError(f"{where}: the column {name!r} holds {feature!r}, which this description does not cover")
    source: dict[str, Any] = {"fileObject": {"@id": config.parquet}, "extract": {"column": column}}
    if json_path:
        source["transform"] = {"jsonPath": ".".join(json_path)}
    out["source"] = source
    return out


def _record_set(config: Config, root: Path) -> dict[str, Any]:
    # deferred, as in _field
    import pyarrow.parquet as pq
    from datasets import Features

    where = str(root / config.parquet)
    features = Features.from_arrow_schema(pq.read_schema(root / config.parquet))
    out: dict[str, Any] = {
        "@type": "cr:RecordSet",
        "@id": config.name,
        "name": config.name,
        "description": config.description,
    }
    if config.key:
        out["key"] = {"@id": f"{config.name}/{config.key}"}
    out["field"] = [_field(config, column, feature, (), (), where) for column, feature in features.items()]
    return out


def describe(root: Path, about: About, configs: Sequence[Config], images: str | None = "images") -> dict[str, Any]:
    """The Croissant JSON-LD of the build in ``root``: each config's Parquet file and records,
    and the ``images`` folder's files (when it has any)."""
    doc: dict[str, Any] = {
        "@context": CONTEXT,
        "@type": "sc:Dataset",
        "conformsTo": CONFORMS_TO,
        "name": about.name,
        "description": about.description,
        "license": _license(about),
        "citeAs": about.citation,
    }
    if about.keywords:
        doc["keywords"] = list(about.keywords)
    if about.languages:
        doc["inLanguage"] = list(about.languages)
    files = [_file_object(c, root) for c in configs]
    if images and (root / images).is_dir():
        files += _file_sets(root, images)
    doc["distribution"] = files
    doc["recordSet"] = [_record_set(c, root) for c in configs]
    return doc


def write(path: Path, doc: Mapping[str, Any]) -> None:
    """The description as bytes that depend only on it: keys sorted, one space of indent."""
    path.write_text(json.dumps(doc, indent=1, sort_keys=True, ensure_ascii=False) + "\n", encoding="utf-8")
