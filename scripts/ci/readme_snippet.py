"""Print the Python code block of the README's "Python API" section (run by scripts/ci/check_wheel.sh)."""

from __future__ import annotations

import re
import sys
from pathlib import Path

text = Path(sys.argv[1]).read_text(encoding="utf-8")
section = text.split("## Python API", 1)[1]
match = re.search(r"```python\n(.*?)```", section, re.S)
if match is None:
    sys.exit("README.md: no python block under '## Python API'")
print(match.group(1))
