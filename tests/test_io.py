import pandas as pd
import pytest

from pairlab.io import MalformedRowError, read_qqp, read_wikiqa


def test_real_qqp_malformed_first_row_is_reported(data_dir):
    frame, report = read_qqp(data_dir / "qqp" / "qqp_subset.tsv")
    assert len(frame) == 23_496 and report.rows_read == 23_496
    assert [(r.line, r.reason) for r in report.skipped] == [
        (1, "expected 6 tab-separated fields, found 5")
    ]
    assert "qqp_subset.tsv:1" in report.summary()
    # quote characters are text, not CSV quoting: 824 rows have them
    has_quote = frame["question1"].str.contains('"') | frame["question2"].str.contains('"')
    assert has_quote.sum() == 824


def test_real_qqp_strict_names_file_and_line(data_dir):
    with pytest.raises(MalformedRowError, match=r"qqp_subset.tsv:1: expected 6"):
        read_qqp(data_dir / "qqp" / "qqp_subset.tsv", strict=True)


def test_original_quora_release_with_header(tmp_path):
    path = tmp_path / "quora_duplicate_questions.tsv"
    path.write_text(
        "id\tqid1\tqid2\tquestion1\tquestion2\tis_duplicate\n"
        '0\t1\t2\tWhat is "AI"?\tWhat\'s AI?\t1\n'
        "1\t3\t4\tA?\tB?\t2\n"
        "2\t5\t6\tC?\tD?\t0\n"
    )
    frame, report = read_qqp(path)
    assert frame["question1"].tolist() == ['What is "AI"?', "C?"]
    assert frame["is_duplicate"].tolist() == [1, 0]
    assert [r.line for r in report.skipped] == [3]
    assert "must be 0 or 1" in report.skipped[0].reason


def test_wikiqa_mixed_5_and_7_columns(tmp_path):
    path = tmp_path / "WikiQA-train.tsv"
    path.write_text(
        "QuestionID\tQuestion\tSentenceID\tSentence\tLabel\n"
        'Q1\thow?\tS1\tLike "this".\t1\n'
        "Q2\thow?\tD2\tTitle\tD2-0\tOther.\t0\n"
        "Q3\tbroken row\n"
    )
    frame, report = read_wikiqa(path)
    assert frame["sentence"].tolist() == ['Like "this".', "Other."]
    assert pd.isna(frame["title"].iloc[0]) and frame["title"].iloc[1] == "Title"
    assert [r.line for r in report.skipped] == [4]


def test_missing_file_is_a_clear_error(tmp_path):
    with pytest.raises(FileNotFoundError, match="data file not found"):
        read_qqp(tmp_path / "nope.tsv")
