"""The synthetic fixture (fixtures/): the committed files are what fixtures/make_fixtures.py
writes, and none of their texts comes from the real data."""

import subprocess
import sys

from conftest import FIXTURES


def test_the_committed_fixture_is_the_scripts_output(tmp_path):
    subprocess.run([sys.executable, str(FIXTURES / "make_fixtures.py"), str(tmp_path)], check=True)
    made = {
        str(p.relative_to(tmp_path)): p.read_bytes() for p in tmp_path.rglob("*") if p.is_file()
    }
    committed = {
        str(p.relative_to(FIXTURES)): p.read_bytes()
        for p in FIXTURES.rglob("*")
        if p.is_file() and p.suffix != ".py" and "__pycache__" not in p.parts
    }
    assert sorted(made) == sorted(committed)
    for name, content in made.items():
        assert content == committed[name], f"fixtures/{name} differs from make_fixtures.py's output"


def test_no_fixture_text_is_a_text_of_the_real_data(data_dir):
    real = set()
    for path in [data_dir / "qqp" / "qqp_subset.tsv", *sorted((data_dir / "wikiqa").glob("*.tsv"))]:
        for line in path.read_text(encoding="utf-8").splitlines():
            real.update(field.strip() for field in line.split("\t") if len(field) > 20)
    ours = set()
    for path in (FIXTURES / "data").rglob("*.tsv"):
        for line in path.read_text(encoding="utf-8").splitlines()[1:]:
            ours.update(field.strip() for field in line.split("\t") if len(field) > 20)
    assert len(ours) > 1000 and not ours & real, sorted(ours & real)[:5]
