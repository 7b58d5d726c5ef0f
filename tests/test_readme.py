"""README's quick start and .ci/run must not drift apart."""

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def _bash_blocks(text: str) -> list[str]:
    return [b.strip() for b in re.findall(r"```bash\n(.*?)```", text, flags=re.S)]


def test_quick_start_has_exactly_two_commands_and_ci_runs_the_second():
    readme = (ROOT / "README.md").read_text()
    quick = readme.split("## Quick start", 1)[1].split("\n## ", 1)[0]
    blocks = _bash_blocks(quick)
    assert len(blocks) == 2, blocks
    assert all(len(b.splitlines()) == 1 for b in blocks)
    assert "statespace compare" in blocks[0]
    assert ".[test]" in blocks[1] and "pytest" in blocks[1]
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert blocks[1] in [line.strip() for line in ci if not line.lstrip().startswith("#")]
