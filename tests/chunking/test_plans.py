"""The plans file's one model and reader: typed chunkers, messages that name the place, the old
name of a setting still read (with a warning), and the committed JSON schema."""

from __future__ import annotations

import json
import logging
from pathlib import Path

import pytest
import yaml

from chunking import RecursiveChunker, SectionChunker, TurnWindowChunker
from chunking.plan_schema import SCHEMA_FILE, plans_schema, schema_text
from chunking.plans import PlanError, parse_plans_data, plan_routes, read_plans_file

ROOT = Path(__file__).resolve().parents[2]
PLANS = ROOT / "plans.yaml"


def _plan(**child: object) -> dict:
    return {
        "plans": {
            "default": {
                "routes": {
                    "*": {
                        "parent": {"strategy": "section", "chunk_size": 600},
                        "child": {"strategy": "section", **child},
                    }
                }
            }
        }
    }


def test_routes_hold_typed_chunkers() -> None:
    plans = read_plans_file(PLANS).plans
    routes = plans["default"].routes
    assert isinstance(routes["chat"].parent, TurnWindowChunker)
    assert isinstance(routes["chat"].child, RecursiveChunker)
    assert isinstance(routes["*"].parent, SectionChunker) and routes["*"].child.chunk_size == 256
    assert plans["default"].embedding is not None and plans["default"].embedding.text == "contextual"


@pytest.mark.parametrize(
    ("child", "words"),
    [
        (
            {"chunk_sise": 200},
            ["plans.yaml", "plan 'default'", "route '*'", "child chunker (section)", "chunk_sise"],
        ),
        (
            {"chunk_size": 2},
            ["route '*'", "child chunker (section)", "field 'chunk_size'", "greater than or equal"],
        ),
        ({"chunk_size": 100, "min_size": 200}, ["child chunker (section)", "min_size (200)"]),
        ({"tokenizer": "gpt-9"}, ["field 'tokenizer'", "gpt-9"]),
        ({"chunk_size": 100, "size": 100}, ["child chunker (section)", "'chunk_size' only"]),
    ],
)
def test_a_bad_setting_names_file_plan_route_and_field(child: dict, words: list[str]) -> None:
    with pytest.raises(PlanError) as error:
        parse_plans_data(_plan(**child), "plans.yaml")
    for word in words:
        assert word in str(error.value)


def test_an_unknown_strategy_lists_the_known_ones() -> None:
    data = _plan()
    data["plans"]["default"]["routes"]["*"]["child"]["strategy"] = "sectoin"
    with pytest.raises(
        PlanError, match=r"route '\*', child chunker: .*'section', 'recursive', 'turn-window'"
    ):
        parse_plans_data(data, "plans.yaml")


@pytest.mark.parametrize(("written", "meant"), [("turn_window", "turn-window"), ("sections", "section")])
def test_a_misspelt_strategy_names_the_strategy_it_is_closest_to(written: str, meant: str) -> None:
    """pydantic's "Input tag 'turn_window' found using 'strategy' does not match any of the
    expected tags" was shown as it was; the message now says what was meant."""
    data = _plan()
    data["plans"]["default"]["routes"]["*"]["parent"]["strategy"] = written
    with pytest.raises(PlanError) as error:
        parse_plans_data(data, "plans.yaml")
    assert f"parent chunker: unknown strategy {written!r}; did you mean {meant!r}? (the strategies: " in str(
        error.value
    )


def test_a_misspelt_setting_names_the_setting_it_is_closest_to() -> None:
    with pytest.raises(PlanError) as error:
        parse_plans_data(_plan(chunk_sise=200), "plans.yaml")
    where = "child chunker (section), field 'chunk_sise'"
    assert f"{where}: unknown setting 'chunk_sise'; did you mean 'chunk_size'?" in str(error.value)


def test_a_misspelt_document_kind_is_refused_naming_the_kinds() -> None:
    # Accepted before: markdown files then fell through to "*" without a word.
    data = _plan(chunk_size=200)
    data["plans"]["default"]["routes"]["markdwn"] = data["plans"]["default"]["routes"]["*"]
    with pytest.raises(PlanError) as error:
        parse_plans_data(data, "plans.yaml")
    message = str(error.value)
    assert (
        "plan 'default'" in message
        and "unknown document kind 'markdwn' (did you mean 'markdown'?)" in message
    )
    assert "chat, csv, html, markdown, pdf, text, or '*'" in message


def test_a_bad_plan_name_says_what_a_name_is() -> None:
    data = {"plans": {"no spaces": _plan()["plans"]["default"]}}
    with pytest.raises(PlanError, match="plan 'no spaces': a plan name is 1-64 letters"):
        parse_plans_data(data, "plans.yaml")


def test_an_empty_file_is_an_error_naming_it(tmp_path: Path) -> None:
    empty = tmp_path / "p.yaml"
    empty.write_text("")
    with pytest.raises(PlanError, match=r"p\.yaml: a plans file needs a non-empty 'plans' mapping"):
        read_plans_file(empty)
    with pytest.raises(PlanError, match="cannot read the plans file"):
        read_plans_file(tmp_path / "missing.yaml")


def test_a_yaml_error_names_the_file_line_and_column(tmp_path: Path) -> None:
    """PyYAML placed a syntax error "in '<unicode string>', line 4, column 12" (a new user's
    review): the message is FILE:LINE:COLUMN, where an editor jumps, and what is wrong."""
    bad = tmp_path / "plans.yaml"
    bad.write_text("plans:\n  default:\n    routes: {a: b\n    bad: [\n")
    with pytest.raises(PlanError) as raised:
        read_plans_file(bad)
    assert str(raised.value).startswith(f"{bad}:4:8: not valid YAML: while parsing a flow mapping")
    assert "unicode string" not in str(raised.value)


def test_the_old_name_is_read_with_a_warning_naming_file_place_and_new_name(
    tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    old = tmp_path / "old.yaml"
    old.write_text(yaml.safe_dump(_plan(size=200)))
    with caplog.at_level(logging.WARNING, logger="chunking.plans"), pytest.deprecated_call() as caught:
        routes = plan_routes(old)
    assert routes["*"].child.chunk_size == 200
    message = f"{old}: plan 'default', route '*', child chunker: 'size' is deprecated; write 'chunk_size'"
    assert [str(w.message) for w in caught if w.category is DeprecationWarning] == [message]
    assert caplog.messages == [message]
    new = tmp_path / "new.yaml"
    new.write_text(yaml.safe_dump(_plan(chunk_size=200)))
    assert plan_routes(new)["*"].child.fingerprint() == routes["*"].child.fingerprint()


def test_the_library_takes_the_old_name_with_a_deprecation_warning() -> None:
    with pytest.deprecated_call(match="'size' is now 'chunk_size'"):
        chunker = SectionChunker(size=300)
    assert chunker.settings() == SectionChunker(chunk_size=300).settings()
    assert chunker.fingerprint() == SectionChunker(chunk_size=300).fingerprint()
    assert "size" not in chunker.settings() and chunker.fingerprint_settings()["size"] == 300
    with pytest.deprecated_call(match="chunk_size"):
        assert chunker.size == 300


def test_the_project_plans_use_no_old_name(recwarn: pytest.WarningsRecorder) -> None:
    read_plans_file(PLANS)
    assert [w for w in recwarn if w.category is DeprecationWarning] == []


def test_the_committed_schema_is_the_generated_one() -> None:
    """After changing a chunker's settings: ``python -m chunking.plan_schema --write``."""
    assert SCHEMA_FILE.read_text(encoding="utf-8") == schema_text()
    assert PLANS.read_text().splitlines()[0] == "# yaml-language-server: $schema=docs/plans.schema.json"


def test_the_schema_accepts_the_project_plans_and_rejects_a_typo() -> None:
    jsonschema = pytest.importorskip("jsonschema")
    schema = json.loads(SCHEMA_FILE.read_text())
    jsonschema.validate(yaml.safe_load(PLANS.read_text()), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_plan(chunk_sise=200), schema)
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(_plan(chunk_size=2), schema)
    misspelt = {
        "plans": {"p": {"routes": {"markdwn": _plan(chunk_size=200)["plans"]["default"]["routes"]["*"]}}}
    }
    with pytest.raises(jsonschema.ValidationError):
        jsonschema.validate(misspelt, schema)
    assert plans_schema()["$defs"]["SectionChunker"]["properties"]["size"]["deprecated"] is True


def test_a_child_budget_over_its_parents_is_refused() -> None:
    """Parent 100, child 500 was accepted: every child was a copy of its parent (twice the rows,
    no smaller unit to search). The route is refused, naming both sizes and the fix."""
    data = _plan()
    route = data["plans"]["default"]["routes"]["*"]
    route["parent"]["chunk_size"], route["child"]["chunk_size"] = 100, 500
    with pytest.raises(PlanError) as error:
        parse_plans_data(data, "plans.yaml")
    assert "route '*': the child chunk_size 500 is over the parent's 100" in str(error.value)
    assert "make the child's smaller" in str(error.value)
    route["child"]["chunk_size"] = 100  # equal is allowed: a parent that needs no split
    parse_plans_data(data, "plans.yaml")
