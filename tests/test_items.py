"""load_items, read_id_pairs and record_pairs: your own unlabelled records (one table or two) as
a pool of pairs (issue 34, part 1). Files are written under tmp_path; the real ER tables, where
present, are read once at the end (never embedded)."""

import json

import numpy as np
import pandas as pd
import pytest
from conftest import real_data_dir

from pairlab.data import (
    NoTruthError,
    Pool,
    RecordPool,
    Records,
    UnknownIdError,
    load_items,
    load_pairs,
    read_id_pairs,
    record_pairs,
)
from pairlab.evaluation.candidates import neighbour_pairs
from pairlab.io import NoRowsError

PRODUCTS = pd.DataFrame(
    {
        "id": ["A1", "B00X", "012", "C3"],
        "title": ["Koss EQ50 equalizer", "Kodak ink 10B", "Epson lamp", "Koss EQ50 equalizer"],
        "brand": ["Koss", "", "Epson", "Koss"],
        "price": ["12.65", "10.28", None, "12.65"],
    }
)


def write(path, lines):
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def write_as(frame: pd.DataFrame, path):
    """``frame`` written in the format its suffix names."""
    if path.suffix == ".csv":
        frame.to_csv(path, index=False)
    elif path.suffix == ".tsv":
        frame.to_csv(path, index=False, sep="\t")
    elif path.suffix == ".jsonl":
        frame.to_json(path, orient="records", lines=True)
    else:
        frame.to_parquet(path, index=False)
    return path


# ---------------------------------------------------------------------------------------------
# Reading and serialising


@pytest.mark.parametrize("suffix", [".csv", ".tsv", ".jsonl", ".parquet", "frame"])
def test_every_format_gives_the_same_records(tmp_path, suffix):
    """Fails if a format reads ids or texts differently (an id "012" losing its zero, a missing
    price read as "None" or "nan")."""
    source = PRODUCTS if suffix == "frame" else write_as(PRODUCTS, tmp_path / f"products{suffix}")
    records = load_items(source, text=["title", "brand", "price"], id="id")
    assert records.ids.tolist() == ["A1", "B00X", "012", "C3"]
    assert records.texts.tolist() == [
        "title: Koss EQ50 equalizer | brand: Koss | price: 12.65",
        "title: Kodak ink 10B | price: 10.28",  # the empty brand is skipped
        "title: Epson lamp | brand: Epson",  # and the missing price
        "title: Koss EQ50 equalizer | brand: Koss | price: 12.65",
    ]
    assert records.columns == ("title", "brand", "price") and len(records) == 4
    assert records.name == ("records" if suffix == "frame" else "products")
    assert records.ids.dtype == object and records.texts.dtype == object


def test_one_text_column_is_the_value_alone(tmp_path):
    """Fails if one column is serialised as ``title: ...`` or its value is stripped or changed."""
    frame = pd.DataFrame({"q": ["  How do I learn Go?", "What is | a pipe?"]})
    assert load_items(frame, text="q").texts.tolist() == [
        "  How do I learn Go?",
        "What is | a pipe?",
    ]
    assert load_items(frame, text=["q"]).texts.tolist() == [
        "  How do I learn Go?",
        "What is | a pipe?",
    ]


def test_ids_are_the_files_strings_and_a_frames_integers_without_a_decimal_point():
    """Fails if numeric ids come back as "12.0" (pandas stores an int column with a gap as float)
    or if the row numbers are not 0..n-1 without an id column."""
    frame = pd.DataFrame({"id": [12.0, np.nan, 7.0], "t": ["a", "b", "c"]})  # ints with a gap
    records = load_items(frame, text="t", id="id")
    assert records.ids.tolist() == ["12", "7"] and records.notes["empty_ids"] == 1
    assert load_items(
        pd.DataFrame({"id": np.array([3, 4], dtype=np.int64), "t": ["a", "b"]}), text="t", id="id"
    ).ids.tolist() == ["3", "4"]
    assert load_items(frame, text="t").ids.tolist() == ["0", "1", "2"]


def test_jsonl_numbers_as_ids_and_fields(tmp_path):
    path = tmp_path / "items.jsonl"
    write(
        path,
        [
            json.dumps({"sku": 12, "title": "lamp", "price": 3.5}),
            json.dumps({"sku": "B00X", "title": "ink", "price": None}),
        ],
    )
    records = load_items(path, text=["title", "price"], id="sku")
    assert records.ids.tolist() == ["12", "B00X"]
    assert records.texts.tolist() == ["title: lamp | price: 3.5", "title: ink"]


# ---------------------------------------------------------------------------------------------
# Bad input: a clear error, or a counted and reported skip


def test_no_such_column_names_the_file_and_the_columns_it_has(tmp_path):
    path = write_as(PRODUCTS, tmp_path / "products.csv")
    with pytest.raises(
        ValueError,
        match=r"products\.csv:1 \(the header\) has no column 'titel' "
        r"\(asked for as text\[0\]\); its columns are \['id', 'title', "
        r"'brand', 'price'\]\. Name them with load_items",
    ):
        load_items(path, text=["titel", "brand"], id="id")
    with pytest.raises(ValueError, match=r"has no column 'sku' \(asked for as id\)"):
        load_items(path, text="title", id="sku")


def test_empty_texts_and_repeated_ids_are_skipped_and_reported_by_line(tmp_path):
    """Fails if a row is lost without a line in the report, or if the later duplicate wins."""
    path = write(
        tmp_path / "items.csv",
        [
            "id,title,brand",
            "1,lamp,Epson",
            "2,,",
            "1,other lamp,Koss",
            ",no id,x",
            "3,ink,Kodak",
            "4,  ,  ",
        ],
    )
    records = load_items(path, text=["title", "brand"], id="id")
    assert records.ids.tolist() == ["1", "3"] and records.texts[0] == "title: lamp | brand: Epson"
    skipped = {row.line: row.reason for row in records.report.skipped}
    assert sorted(skipped) == [3, 4, 5, 7]
    assert skipped[3].startswith("empty text") and skipped[7].startswith("empty text")
    assert skipped[4] == f"id '1' again: the record at {path}:2 is kept"
    assert skipped[5] == "empty id in column 'id'"
    assert {k: records.notes[k] for k in ("empty_texts", "duplicate_ids", "empty_ids")} == {
        "empty_texts": 2,
        "duplicate_ids": 1,
        "empty_ids": 1,
    }
    assert records.report.rows_read == 2 and records.notes["rows"] == 6


def test_a_filtered_frame_is_read_by_position_not_by_its_index():
    """Fails if a frame's own index (after filtering, say) decides which row is skipped."""
    frame = pd.DataFrame({"id": ["a", "b", "a", "c"], "t": ["x", "", "y", "z"]}, index=[7, 3, 5, 0])
    records = load_items(frame, text="t", id="id")
    assert records.ids.tolist() == ["a", "c"] and records.texts.tolist() == ["x", "z"]
    assert [(r.line, r.reason) for r in records.report.skipped] == [
        (2, "empty text: every field of ['t'] is empty"),
        (3, "id 'a' again: the record at <DataFrame> row 1 is kept"),
    ]


def test_malformed_rows_are_reported_as_load_pairs_reports_them(tmp_path):
    """The reader is shared, not copied: the same file's bad lines are the same skips."""
    path = tmp_path / "rows.csv"
    good = [f"g{g} a,g{g} b,{g % 2}" for g in range(12)]
    path.write_bytes(
        ("\n".join(["text1,text2,label", *good, "three,fields,1,four"]) + "\n").encode()
        + b"caf\xe9,au lait,1\n"
    )
    pairs = load_pairs(path, symmetric=True, check_splits=False)
    records = load_items(path, text=["text1", "text2"])
    assert (
        [r.line for r in records.report.skipped]
        == [r.line for r in pairs.report.skipped]
        == [14, 15]
    )
    assert [r.reason for r in records.report.skipped] == [r.reason for r in pairs.report.skipped]
    assert records.notes["skipped_by_reader"] == 2 and len(records) == 12


def test_an_unclosed_quote_that_swallows_rows_is_an_error_naming_its_line(tmp_path):
    """Issue 60: one unclosed quote on line 11 of 33 read lines 11-33 as one row; the summary
    said "skipped 1 malformed row" and a session began on 9 of 32 records. A quoted row that
    spans lines and has the wrong field count is now an error at its line; a quoted field
    that holds a line break in a well-formed row is still read."""
    rows = [f"{k},title {k},brand {k}" for k in range(1, 33)]
    rows[9] = '10,"title 10,brand 10'  # line 11: the quote is never closed
    path = write(tmp_path / "shop.csv", ["id,title,brand", *rows])
    with pytest.raises(
        ValueError, match=r"shop.csv:11: a quote opened on this line .* lines 11-33"
    ):
        load_items(path, text=["title", "brand"], id="id")
    ok = write(tmp_path / "ok.csv", ["id,title,brand", '1,"two', 'lines",acme', "2,lamp,acme"])
    records = load_items(ok, text=["title", "brand"], id="id")
    assert len(records) == 2 and "two\nlines" in records.texts[0]


def test_identical_texts_under_two_ids_are_kept_and_counted():
    records = load_items(PRODUCTS, text=["title", "brand", "price"], id="id")
    assert len(records) == 4  # kept: two ids may be two items with one description
    assert records.notes["identical_texts"] == 2 and records.notes["identical_text_pairs"] == 1
    assert records.texts[0] == records.texts[3] and records.ids[[0, 3]].tolist() == ["A1", "C3"]


def test_one_table_needs_two_records_two_tables_one_each(tmp_path):
    one = load_items(write(tmp_path / "one.csv", ["id,t", "1,lamp"]), text="t", id="id")
    with pytest.raises(
        ValueError,
        match="'one' has 1 record.*at least two records are needed for duplicates within one table",
    ):
        record_pairs(one)
    other = load_items(pd.DataFrame({"t": ["a lamp"]}), text="t")
    pool = record_pairs(one, other)
    assert pool.n_pairs == 1 and pool.record_ids([0]) == (["1"], ["0"])


def test_no_record_left_after_skips_is_an_error_naming_why(tmp_path):
    path = write(tmp_path / "blank.csv", ["id,title", "1,", "2,  "])
    with pytest.raises(
        NoRowsError,
        match=r"blank\.csv holds no usable record: all 2 were skipped "
        r"\(empty text.*blank\.csv:2\)",
    ):
        load_items(path, text="title", id="id")


def test_a_long_text_is_truncated_and_counted(tmp_path):
    """Fails if a 1 MB text is kept whole (the model reads 128 word pieces) or cut silently."""
    frame = pd.DataFrame({"t": ["x" * 1_000_000, "short"]})
    records = load_items(frame, text="t")
    assert len(records.texts[0]) == 10_000 and records.texts[1] == "short"
    assert records.notes["truncated_texts"] == 1 and "truncated texts 1" in records.summary()
    assert len(load_items(frame, text="t", max_chars=None).texts[0]) == 1_000_000
    with pytest.raises(ValueError, match="max_chars must be a positive integer or None, got 0"):
        load_items(frame, text="t", max_chars=0)


@pytest.mark.parametrize(
    "name,content,kind,needle",
    [
        ("missing.csv", None, FileNotFoundError, "record file not found"),
        (
            "empty.csv",
            "",
            NoRowsError,
            "is empty: expected a header line naming the columns, then one record",
        ),
        (
            "header.csv",
            "id,title\n",
            NoRowsError,
            "has a header and no rows: expected one record per line",
        ),
        (
            "records.xlsx",
            "id,title\n1,a\n",
            ValueError,
            "cannot tell the format from the suffix '.xlsx'",
        ),
    ],
)
def test_files_that_hold_no_records(tmp_path, name, content, kind, needle):
    path = tmp_path / name
    if content is not None:
        path.write_text(content)
    with pytest.raises(kind, match=needle):
        load_items(path, text="title", id="id")


def test_bad_options_are_type_errors_naming_them():
    with pytest.raises(TypeError, match="text must be a column name or a non-empty list"):
        load_items(PRODUCTS, text=[])
    with pytest.raises(ValueError, match=r"text names the column\(s\) \['title'\] more than once"):
        load_items(PRODUCTS, text=["title", "title"])
    with pytest.raises(TypeError, match="id must be a column name or None"):
        load_items(PRODUCTS, text="title", id=0)


# ---------------------------------------------------------------------------------------------
# Ids: records, id pairs, pair ids


def test_index_of_keeps_order_takes_numbers_and_names_unknown_ids():
    records = load_items(
        pd.DataFrame({"id": ["10", "11", "B00X"], "t": ["a", "b", "c"]}), text="t", id="id"
    )
    assert records.index_of(["B00X", 10, "11"]).tolist() == [2, 0, 1]
    assert records.index_of(np.array([11])).dtype == np.int64
    with pytest.raises(
        UnknownIdError,
        match=r"2 id\(s\) are not ids of 'records' \(3 records\): "
        r"\['12', 'zz'\]",
    ) as caught:
        records.index_of(["10", "12", "zz", "12"])
    assert isinstance(caught.value, KeyError) and isinstance(caught.value, ValueError)


def test_records_refuse_repeated_ids_when_built_by_hand():
    with pytest.raises(ValueError, match=r"ids must be distinct; \['a'\] repeat"):
        Records("r", np.array(["a", "a"], dtype=object), np.array(["x", "y"], dtype=object), ("t",))


def test_read_id_pairs_takes_the_first_two_columns_and_reports_bad_rows(tmp_path):
    path = write(
        tmp_path / "matches.csv",
        ["walmart_id,amazon_id,score", "1190,10706,1", "1340,,1", "5,6", "7,8,1"],
    )
    left, right, report = read_id_pairs(path)
    assert left.tolist() == ["1190", "7"] and right.tolist() == ["10706", "8"]
    assert [(r.line, r.reason) for r in report.skipped] == [
        (3, "empty id in column 'amazon_id'"),
        (4, "expected 3 fields, found 2"),
    ]
    named = read_id_pairs(pd.DataFrame({"x": [1], "a": [2], "b": [3]}), left="b", right="a")
    assert (named[0].tolist(), named[1].tolist()) == (["3"], ["2"])
    with pytest.raises(ValueError, match="an id pair needs two"):
        read_id_pairs(pd.DataFrame({"a": [1]}))


@pytest.fixture
def tables():
    left = load_items(
        pd.DataFrame({"id": ["w1", "w2", "w3"], "t": ["lamp", "ink", "cable"]}),
        text="t",
        id="id",
        name="walmart",
    )
    right = load_items(
        pd.DataFrame({"id": [10, 11, 12, 13], "t": ["a lamp", "ink 10B", "usb", "hdmi cable"]}),
        text="t",
        id="id",
        name="amazon",
    )
    return left, right


def test_two_tables_round_trip_record_ids_and_pair_ids(tables):
    left, right = tables
    pool = record_pairs(left, right)
    assert isinstance(pool, Pool) and not pool.symmetric and pool.n_pairs == 12
    ids = pool.pair_ids(["w3", "w1", "w2"], [13, "10", "11"])
    assert ids.tolist() == [2 * 4 + 3, 0, 1 * 4 + 1]  # in the order given, not sorted
    back = pool.record_ids(ids)
    assert back[0].tolist() == ["w3", "w1", "w2"] and back[1].tolist() == ["13", "10", "11"]
    assert pool.texts(ids)[1].tolist() == ["hdmi cable", "a lamp", "ink 10B"]
    with pytest.raises(
        UnknownIdError, match=r"right ids: 1 id\(s\) are not ids of 'amazon'.*\['99'\]"
    ):
        pool.pair_ids(["w1"], ["99"])
    with pytest.raises(ValueError, match="two 1-d arrays of one length"):
        pool.pair_ids(["w1", "w2"], ["10"])


def test_one_table_canonicalises_pairs_and_rejects_self_pairs(tables):
    left, _ = tables
    pool = record_pairs(left)
    assert pool.symmetric and pool.n_pairs == 3 and pool.right is pool.left
    forward, backward = (
        pool.pair_ids(["w1", "w3"], ["w3", "w2"]),
        pool.pair_ids(["w3", "w2"], ["w1", "w3"]),
    )
    assert np.array_equal(forward, backward)
    assert [x.tolist() for x in pool.record_ids(forward)] == [
        ["w1", "w2"],
        ["w3", "w3"],
    ]  # read order
    with pytest.raises(
        ValueError, match=r"1 pair\(s\) join a record with itself, first \('w2', 'w2'\)"
    ):
        pool.pair_ids(["w1", "w2"], ["w2", "w2"])


# ---------------------------------------------------------------------------------------------
# Known pairs and the truth


def test_labels_raise_without_truth_instead_of_answering_zero(tables):
    """The pool of a person's records knows only its seeds: every other pair is unknown, and a
    0 for it would be a silent lie."""
    left, right = tables
    pool = record_pairs(left, right, positives=(["w1"], ["10"]), negatives=(["w1"], ["11"]))
    assert pool.positives.tolist() == pool.known_positives.tolist() == [0]
    assert pool.stated_negatives.tolist() == [1] and not pool.truth_known
    with pytest.raises(
        NoTruthError, match="no truth is known for these pairs.*A person labels these pairs"
    ):
        pool.labels([2])
    with pytest.raises(NoTruthError):
        pool.n_positives
    assert pool.stated([0, 1, 2]).tolist() == ["positive", "negative", "-"]
    assert "the rest unlabelled" in repr(pool)


def test_the_truth_pool_agrees_with_the_matches_file(tmp_path, tables):
    left, right = tables
    matches = write(tmp_path / "matches.csv", ["walmart_id,amazon_id", "w1,10", "w2,11", "w3,13"])
    pool = record_pairs(left, right, all_positives=matches)
    assert pool.truth_known and pool.n_positives == 3 and pool.n_negatives == 9
    ids = pool.pair_ids(*read_id_pairs(matches)[:2])
    assert pool.labels(ids).tolist() == [1, 1, 1]
    assert pool.labels(np.arange(pool.n_pairs)).sum() == 3
    with pytest.raises(
        ValueError,
        match=r"1 known positive pair\(s\) are not among all_positives, "
        r"first \('w1', '11'\)",
    ):
        record_pairs(left, right, positives=(["w1"], ["11"]), all_positives=matches)


def test_known_pairs_as_a_frame_a_file_or_two_arrays_are_the_same(tmp_path, tables):
    left, right = tables
    frame = pd.DataFrame({"w": ["w1", "w2"], "a": [10, 11]})
    ways = [
        frame,
        write_as(frame, tmp_path / "seeds.tsv"),
        (["w1", "w2"], ["10", "11"]),
        read_id_pairs(frame)[:2],
    ]
    found = [record_pairs(left, right, positives=way).positives.tolist() for way in ways]
    assert all(f == [0, 5] for f in found)
    with pytest.raises(TypeError, match="a tuple of two id arrays"):
        record_pairs(
            left, right, positives=[("w1", "10"), ("w2", "11")]
        )  # ambiguous: rows or columns?
    with pytest.raises(
        UnknownIdError, match=r"negatives: left ids: 1 id\(s\) are not ids of 'walmart'"
    ):
        record_pairs(left, right, negatives=(["w9"], ["10"]))


def test_one_table_closes_its_positives_and_drops_contradicted_negatives():
    records = load_items(pd.DataFrame({"t": ["a", "b", "c", "d"]}), text="t")
    pool = record_pairs(
        records, positives=(["0", "1"], ["1", "2"]), negatives=(["0", "3"], ["2", "0"])
    )
    pairs = set(zip(*[x.tolist() for x in pool.record_ids(pool.positives)]))
    assert pairs == {("0", "1"), ("1", "2"), ("0", "2")}  # 0~2 by transitivity
    assert pool.notes["positives_added_by_closure"] == 1
    assert pool.notes["negatives_contradicted_by_positives"] == 1
    assert [x.tolist() for x in pool.record_ids(pool.stated_negatives)] == [["0"], ["3"]]
    assert pool.notes["positives_given_twice"] == 0 and len(pool.known_positives) == 2


# ---------------------------------------------------------------------------------------------
# Usable where a Pool is


def test_candidate_search_and_embedding_take_a_record_pool(tables, monkeypatch):
    left, right = tables
    pool = record_pairs(left, right)
    rng = np.random.default_rng(0)
    emb = {side: rng.normal(size=(n, 8)).astype(np.float32) for side, n in (("l", 3), ("r", 4))}
    emb = {k: v / np.linalg.norm(v, axis=1, keepdims=True) for k, v in emb.items()}
    ids, scores = neighbour_pairs(pool.space, emb["l"], emb["r"], m=2)
    assert len(ids) == 6 and np.array_equal(ids, np.sort(ids))
    a, b = pool.record_ids(ids)
    assert set(a) == {"w1", "w2", "w3"}
    expected = np.einsum("nd,nd->n", emb["l"][left.index_of(a)], emb["r"][right.index_of(b)])
    assert np.allclose(scores, expected, atol=1e-5)

    from pairlab.models import embed

    seen = []
    monkeypatch.setattr(
        embed,
        "encode",
        lambda texts, *a, **k: seen.append(list(texts)) or np.ones((len(texts), 2), np.float32),
    )
    one = record_pairs(left)
    first, second = embed.embed_pool(one, show_progress=False)
    assert first is second and seen == [["lamp", "ink", "cable"]]  # one table embedded once


# ---------------------------------------------------------------------------------------------
# The real tables (skipped where ../shared/data/er is absent)


@pytest.mark.parametrize(
    "folder,sides,n_matches",
    [("walmart_amazon", ("walmart", "amazon"), 853), ("dblp_acm", ("dblp", "acm"), 2214)],
)
def test_real_er_tables_load_and_every_match_resolves(folder, sides, n_matches):
    root = real_data_dir() / "er" / folder
    if not root.is_dir():
        pytest.skip(f"no {root}")
    left, right = (load_items(root / f"{side}.csv", text="title", id="id") for side in sides)
    *matches, report = read_id_pairs(root / "matches.csv")
    pool = record_pairs(left, right, all_positives=root / "matches.csv")
    assert len(matches[0]) == n_matches and not report.skipped
    assert pool.n_positives == n_matches and pool.labels(pool.pair_ids(*matches)).all()
    assert isinstance(pool, RecordPool) and pool.notes["all_positives_rows_skipped"] == 0
