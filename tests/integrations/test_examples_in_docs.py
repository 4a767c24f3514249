"""Each framework's page shows its whole example, as the file in examples/
has it: a reader on a code host, where Sphinx includes render as nothing,
reads the code the tests run."""

from __future__ import annotations

from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]
PAGES = {"pydantic-ai": "pydantic_ai_agent", "openai-agents": "openai_agents_agent",
         "anthropic": "anthropic_agent", "langchain": "langchain_agent",
         "smolagents": "smolagents_agent", "mcp": "mcp_code_mode"}


@pytest.mark.parametrize("page", sorted(PAGES))
def test_the_page_shows_its_example_whole(page: str) -> None:
    text = (ROOT / "docs" / f"{page}.md").read_text(encoding="utf-8")
    example = (ROOT / "examples" / f"{PAGES[page]}.py").read_text(encoding="utf-8")
    assert f"```python\n{example}```" in text
    assert "literalinclude" not in text
