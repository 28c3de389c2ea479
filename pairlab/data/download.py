"""``make data``: QQP and WikiQA from their official sources into ``./data``
(``python -m pairlab.data.download [DEST] [--base-url URL] [--only NAME]``).
Each file goes to ``<name>.part``, resumed with an HTTP ``Range`` request after an interruption,
and is checked against its published SHA256 before it is renamed into place."""

from __future__ import annotations

import argparse
import hashlib
import http.client
import os
import shutil
import sys
import time
import urllib.error
import urllib.request
import zipfile
from dataclasses import dataclass, replace
from pathlib import Path

__all__ = ["SOURCES", "ChecksumError", "DownloadError", "download", "fetch", "main"]


@dataclass(frozen=True)
class Source:
    url: str
    file: str  # where it goes, relative to the data folder
    sha256: str
    page: str  # where a person downloads it by hand
    unpack: tuple = ()  # members of a zip to extract beside it


SOURCES = {
    # Quora's "First Quora Dataset Release: Question Pairs". SHA256 as published in
    # huggingface/datasets, datasets/quora/dataset_infos.json ("download_checksums" for this URL;
    # commit 040102f100964a33fd334e2695f1c493fa6b92db); the same value appears in another public
    # download script's pinned catalogue. Not verified here: this machine cannot reach Quora.
    "qqp": Source(
        "http://qim.fs.quoracdn.net/quora_duplicate_questions.tsv",
        "qqp/quora_duplicate_questions.tsv",
        "b3350dbb1d98db1f5abca85d736ba514bf4da253fae53939303d79fe921ec7c8",
        "https://quoradata.quora.com/First-Quora-Dataset-Release-Question-Pairs",
    ),
    # Microsoft's WikiQA corpus (Yang, Yih and Meek 2015). SHA256 as published in
    # huggingface/datasets, datasets/wiki_qa/dataset_infos.json (commit 040102f1...) and
    # datasets/wiki_qa/urls_checksums/checksums.txt (commit c8ad11e40dc86dc824a02c811d0f6aade918a15f).
    # Not verified here: this machine cannot reach Microsoft's download centre.
    "wikiqa": Source(
        "https://download.microsoft.com/download/E/5/f/E5FCFCEE-7005-4814-853D-DAA7C66507E0/WikiQACorpus.zip",
        "wikiqa/WikiQACorpus.zip",
        "467c13f9e104552c0a9c16f41836ca8d89f9c0cc4b6e4355e104d5c3109ffa45",
        "https://www.microsoft.com/en-us/download/details.aspx?id=52419",
        unpack=tuple(f"WikiQACorpus/WikiQA-{s}.tsv" for s in ("train", "dev", "test")),
    ),
}
CHUNK = 1 << 16
RETRIED = (408, 429, 500, 502, 503, 504)  # HTTP codes worth another attempt


class ChecksumError(ValueError):
    """A downloaded file whose SHA256 is not the published one (the partial file is deleted)."""


class DownloadError(OSError):
    """A download that did not complete within its attempts."""


def download(
    dest="data",
    *,
    names=tuple(SOURCES),
    base_url=None,
    checksums=None,
    attempts: int = 5,
    log=print,
) -> list[Path]:
    """Fetch, verify and unpack the ``names`` sources into ``dest``; returns the data files.
    ``base_url`` replaces each URL's folder (a mirror); ``checksums`` (``$PAIRLAB_DATA_CHECKSUMS``,
    a sha256sum file) replace the published ones."""
    overrides = checksums or _read_checksums(os.environ.get("PAIRLAB_DATA_CHECKSUMS"))
    out = []
    for name in names:
        if name not in SOURCES:
            raise ValueError(f"unknown source {name!r}; expected one of {sorted(SOURCES)}")
        source = SOURCES[name]
        filename = source.url.rsplit("/", 1)[1]
        if base_url:
            source = replace(source, url=f"{base_url.rstrip('/')}/{filename}")
        if filename in overrides:
            source = replace(source, sha256=overrides[filename])
        path = fetch(source, Path(dest) / source.file, attempts=attempts, log=log)
        out += _unpack(path, source.unpack, log) if source.unpack else [path]
    return out


def fetch(source: Source, path: Path, *, attempts: int = 5, log=print) -> Path:
    """``source`` at ``path``: kept if already there with the right checksum, else downloaded
    (resumed from ``path.part`` where one is left), verified, and renamed into place."""
    if path.is_file() and _sha256(path) == source.sha256:
        log(f"{path}: already there, checksum verified")
        return path
    path.parent.mkdir(parents=True, exist_ok=True)
    part = path.with_name(path.name + ".part")
    for attempt in range(1, attempts + 1):
        try:
            _transfer(source.url, part)
            break
        except (urllib.error.URLError, http.client.HTTPException, OSError) as error:
            if isinstance(error, urllib.error.HTTPError) and error.code not in RETRIED:
                why = f"HTTP {error.code} {error.reason}"
                raise DownloadError(_failed(source, path, why)) from None
            kept = part.stat().st_size if part.exists() else 0
            log(
                f"{source.url}: attempt {attempt} of {attempts} stopped "
                f"({type(error).__name__}: {error}); {kept:,} bytes kept"
            )
        if attempt == attempts:
            kept = f"; run again to resume from {part}" if part.exists() else ""
            why = f"not complete after {attempt} attempt(s){kept}"
            raise DownloadError(_failed(source, path, why))
        time.sleep(min(2.0**attempt, 30.0))
    got = _sha256(part)
    if got != source.sha256:
        part.unlink()
        raise ChecksumError(
            f"{source.url}: SHA256 {got} is not the published {source.sha256}; the "
            f"partial file {part} was deleted. The transfer was corrupted or the file "
            "changed at its source: run `make data` again, or download it by hand "
            f"from {source.page} into {path} and check it"
        )
    log(f"{path}: checksum verified ({got[:16]}...)")
    os.replace(part, path)
    return path


def _transfer(url: str, part: Path) -> None:
    """One request: the rest of ``url`` appended to ``part`` (a Range request from its size)."""
    have = part.stat().st_size if part.exists() else 0
    headers = {"User-Agent": "pairlab-data/1", **({"Range": f"bytes={have}-"} if have else {})}
    try:
        request = urllib.request.Request(url, headers=headers)
        response = urllib.request.urlopen(request, timeout=60.0)
    except urllib.error.HTTPError as error:
        if error.code == 416 and have:  # nothing left to send: the part is whole (verified next)
            return
        raise
    from tqdm.auto import tqdm

    with response:
        have = have if response.status == 206 else 0  # a server ignoring the Range: start again
        size = response.headers.get("Content-Length")
        total = have + int(size) if size else None
        with open(part, "ab" if have else "wb") as out:
            with tqdm.wrapattr(out, "write", total=total, initial=have, file=sys.stderr) as counted:
                shutil.copyfileobj(response, counted, CHUNK)
    if total is not None and part.stat().st_size < total:
        raise http.client.IncompleteRead(b"", total - part.stat().st_size)


def _unpack(path: Path, members, log) -> list[Path]:
    """The zip's ``members``, written beside it under their base names (atomically)."""
    out = []
    try:
        with zipfile.ZipFile(path) as archive:
            missing = sorted(set(members) - set(archive.namelist()))
            if missing:
                raise ValueError(f"{path} has no {missing}; it holds {archive.namelist()[:10]}")
            for member in members:
                target = path.parent / Path(member).name
                tmp = target.with_name(target.name + ".part")
                with archive.open(member) as src, open(tmp, "wb") as dst:
                    shutil.copyfileobj(src, dst)
                out.append(tmp.replace(target))
    except zipfile.BadZipFile as error:
        why = f"{path} is not a readable zip ({error}): delete it and run make data again"
        raise ValueError(why) from None
    log(f"{path}: unpacked {', '.join(p.name for p in out)}")
    return out


def _sha256(path: Path) -> str:
    with open(path, "rb") as handle:
        return hashlib.file_digest(handle, "sha256").hexdigest()


def _read_checksums(path) -> dict:
    """``{file name: sha256}`` from a ``sha256sum``-format file (``<hex>  <name>`` per line)."""
    out = {}
    for number, line in enumerate(Path(path).read_text().splitlines() if path else [], start=1):
        parts = line.split()
        if parts and (len(parts) != 2 or len(parts[0]) != 64):
            raise ValueError(f"{path}:{number}: expected '<sha256>  <file name>', got {line!r}")
        if parts:
            out[Path(parts[1].lstrip("*")).name] = parts[0].lower()
    return out


def _failed(source: Source, path: Path, why: str) -> str:
    return (
        f"could not download {source.url}: {why}. Without a connection, download it by hand "
        f"from {source.page} into {path}, or set PAIRLAB_DATA_DIR to a folder that has it"
    )


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("dest", nargs="?", default="data", help="the data folder (default ./data)")
    parser.add_argument("--only", choices=sorted(SOURCES), action="append", help="one source")
    parser.add_argument("--base-url", help="fetch the same file names from this URL's folder")
    args = parser.parse_args(argv)
    try:
        files = download(args.dest, names=tuple(args.only or SOURCES), base_url=args.base_url)
    except (OSError, ValueError) as error:
        print(f"make data: error: {error}", file=sys.stderr)
        return 1
    print(
        f"done: {len(files)} data files in {args.dest}/; make run reads them "
        f"(PAIRLAB_DATA_DIR={args.dest})"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
