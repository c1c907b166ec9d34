"""The token diet: every tool schema together fits 1,500 tokens as sent, and still says enough."""

from __future__ import annotations

import json
import re

from hello_tui.agent.tokens import default_counter
from hello_tui.config import load_settings
from hello_tui.core.tools import compact_parameters
from hello_tui.tools import build_registry

SCHEMA_BUDGET = 1500


def schemas(tmp_path):
    settings = load_settings(tmp_path, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})
    return build_registry(settings).schemas()


def test_all_tool_schemas_fit_the_budget(tmp_path):
    sent = schemas(tmp_path)
    assert len(sent) >= 13
    assert default_counter().count_schemas(sent) <= SCHEMA_BUDGET


def test_each_description_says_what_the_tool_is_for_briefly(tmp_path):
    for schema in schemas(tmp_path):
        fn = schema["function"]
        description = fn["description"]
        sentences = [s for s in re.split(r"(?<=[.!?])\s+", description.strip()) if s]
        assert 1 <= len(sentences) <= 2, (fn["name"], description)
        assert len(description) <= 160, fn["name"]


def test_compaction_keeps_the_contract():
    raw = {
        "title": "Args",
        "additionalProperties": False,
        "type": "object",
        "properties": {
            "path": {"title": "Path", "type": "string"},
            "limit": {
                "anyOf": [{"minimum": 1, "type": "integer"}, {"type": "null"}],
                "default": None,
                "description": "How many.",
            },
            "ids": {"anyOf": [{"type": "integer"}, {"type": "string"}, {"type": "null"}]},
            "depth": {"default": 0, "type": "integer", "maximum": 8},
            "flag": {"default": False, "type": "boolean"},
        },
        "required": ["path"],
    }
    assert compact_parameters(raw) == {
        "type": "object",
        "properties": {
            "path": {"type": "string"},
            "limit": {"type": "integer", "description": "How many."},
            "ids": {"anyOf": [{"type": "integer"}, {"type": "string"}]},
            "depth": {"default": 0, "type": "integer"},
            "flag": {"type": "boolean"},
        },
        "required": ["path"],
    }


def test_every_required_argument_is_still_required(tmp_path):
    settings = load_settings(tmp_path, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})
    registry = build_registry(settings)
    for schema in registry.schemas():
        fn = schema["function"]
        tool = registry.get(fn["name"])
        assert tool is not None
        required = [n for n, f in tool.Args.model_fields.items() if f.is_required()]
        assert fn["parameters"].get("required", []) == required, fn["name"]
        assert set(fn["parameters"]["properties"]) == set(tool.Args.model_fields)
        json.dumps(schema)  # sendable as it is
