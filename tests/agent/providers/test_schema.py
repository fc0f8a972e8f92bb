"""Input schemas adapted to what the model APIs accept."""

from __future__ import annotations

import copy

from cat_code.agent.providers.schema import object_schema


def test_a_plain_object_schema_passes_through_unchanged() -> None:
    schema = {"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]}
    assert object_schema(schema) == schema


def test_a_missing_or_broken_schema_becomes_an_empty_object() -> None:
    assert object_schema(None) == {"type": "object", "properties": {}}
    assert object_schema({}) == {"type": "object", "properties": {}}


def test_root_any_of_is_united_and_only_keys_every_branch_requires_stay_required() -> None:
    schema = {
        "anyOf": [
            {
                "type": "object",
                "properties": {"id": {"type": "integer"}, "q": {}},
                "required": ["id", "q"],
            },
            {
                "type": "object",
                "properties": {"name": {"type": "string"}, "q": {}},
                "required": ["name", "q"],
            },
        ]
    }
    original = copy.deepcopy(schema)
    adapted = object_schema(schema)
    assert schema == original, "the input must not be mutated"
    assert adapted["type"] == "object" and "anyOf" not in adapted
    assert set(adapted["properties"]) == {"id", "q", "name"}
    assert adapted["required"] == ["q"]
    assert "(1) id, q; (2) name, q" in adapted["description"]


def test_root_all_of_is_merged_with_every_required_key() -> None:
    adapted = object_schema(
        {
            "allOf": [
                {"properties": {"a": {"type": "string"}}, "required": ["a"]},
                {"properties": {"b": {"type": "number"}}, "required": ["b"]},
            ]
        }
    )
    assert adapted == {
        "type": "object",
        "properties": {"a": {"type": "string"}, "b": {"type": "number"}},
        "required": ["a", "b"],
    }


def test_a_root_ref_into_defs_is_inlined_and_nested_refs_are_kept() -> None:
    adapted = object_schema(
        {
            "$ref": "#/$defs/Args",
            "$defs": {
                "Args": {"type": "object", "properties": {"p": {"$ref": "#/$defs/P"}}},
                "P": {"type": "string"},
            },
        }
    )
    assert adapted["type"] == "object" and "$ref" not in adapted
    assert adapted["properties"] == {"p": {"$ref": "#/$defs/P"}}
    assert "P" in adapted["$defs"]


def test_one_of_branches_given_as_refs_are_resolved() -> None:
    adapted = object_schema(
        {
            "oneOf": [{"$ref": "#/$defs/A"}, {"$ref": "#/$defs/B"}],
            "$defs": {
                "A": {"type": "object", "properties": {"a": {}}},
                "B": {"type": "object", "properties": {"b": {}}},
            },
        }
    )
    assert set(adapted["properties"]) == {"a", "b"} and "oneOf" not in adapted
