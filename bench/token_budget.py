"""What every request costs before the conversation starts: tool schemas and system prompts.

Prints the tokens (cl100k, offline) of all tool schemas as sent, per tool,
and of the system prompt for each dialect, and checks the schema limit
(1,500 tokens). Exit status 1 when the schemas are over it.

    python bench/token_budget.py [--repo PATH]
"""

from __future__ import annotations

import argparse
import json
import sys
import tempfile
from pathlib import Path

from hello_tui.agent.prompt import PromptBuilder
from hello_tui.agent.tokens import default_counter
from hello_tui.config import load_settings
from hello_tui.tools import build_registry

SCHEMA_LIMIT = 1500


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repo", type=Path, default=None)
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as scratch:
        repo = args.repo or Path(scratch)
        settings = load_settings(repo, base_url="http://127.0.0.1:9/v1", api_key="k", environ={})
        registry = build_registry(settings)
        counter = default_counter()
        schemas = registry.schemas()
        print(f"tokenizer: {counter.method}")
        print(f"{'tool':<16}{'tokens':>8}")
        for schema in schemas:
            print(f"{schema['function']['name']:<16}{counter.count(json.dumps(schema)):>8}")
        total = counter.count_schemas(schemas)
        print(f"{'all schemas':<16}{total:>8}  (limit {SCHEMA_LIMIT}, {total / SCHEMA_LIMIT:.2f}x)")
        prompts = PromptBuilder(settings, registry, counter)
        for protocol in ("tools", "react"):
            system = prompts.system_prompt(protocol)
            print(f"{'system/' + protocol:<16}{counter.count(system):>8}")
        tools_request = counter.count(prompts.system_prompt("tools")) + total
        print(f"{'fixed (tools)':<16}{tools_request:>8}  system prompt + schemas per request")
    return 0 if total <= SCHEMA_LIMIT else 1


if __name__ == "__main__":
    sys.exit(main())
