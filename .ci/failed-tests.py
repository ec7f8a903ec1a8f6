#!/usr/bin/env python3
"""Prints a --filter pattern naming the test functions that recorded an issue in a `swift test` log.

.ci/run runs those tests again, one at a time, when the parallel run failed. The timing tests assert upper bounds
(a cancel ends within 3 s, a connect timeout within 8 s), and on a loaded 2-core machine, with 1,300 tests in
parallel starving the in-process servers, a different few overrun on each run. Each of those passed alone, and
they failed the same way before the change under test (measured on 2b87e9d, 2026-11-28). A test that fails alone
too fails CI.

A test with a display name is found by its function: the nearest `func name(` above the line that recorded the issue
(below it when that line is the `@Test` attribute, where a thrown error is recorded).
A test with a display name is found first by its `@Test("name"` attribute in any test file (file names repeat
across targets: there are two LifecycleTests.swift).
Prints nothing when no test recorded an issue (a build failure, a crash), so the caller fails.
"""

import re
import sys
from pathlib import Path

ANSI = re.compile(r"\x1b\[[0-9;]*[A-Za-z]")
ISSUE = re.compile(r"^✘ Test (?P<name>.+?) recorded an issue.* at (?P<file>[\w+.-]+\.swift):(?P<line>\d+):\d+")
IDENTIFIER = re.compile(r"^(\w+)\(")
FUNC = re.compile(r"\bfunc (\w+)\(")


def source(file_name: str) -> Path | None:
    matches = [path for path in Path("Tests").rglob(file_name) if not path.is_symlink()]
    return matches[0] if len(matches) == 1 else None


def function_above(file_name: str, line: int) -> str | None:
    path = source(file_name)
    if path is None:
        return None
    lines = path.read_text(encoding="utf-8").splitlines()
    # A thrown error is recorded at the `@Test` attribute, above its function.
    candidates = lines[line - 1 :] if "@Test" in lines[line - 1] else reversed(lines[:line])
    for text in candidates:
        found = FUNC.search(text)
        if found:
            return found.group(1)
    return None


def function_named(display: str) -> str | None:
    """The function under `@Test("display"`, in whichever test file declares it (file names repeat across targets:
    two LifecycleTests.swift, so the file in the log line does not always name one file)."""
    attribute = '@Test("' + display.replace("\\", "\\\\").replace('"', '\\"') + '"'
    for path in sorted(Path("Tests").rglob("*.swift")):
        if path.is_symlink():
            continue
        lines = path.read_text(encoding="utf-8").splitlines()
        for index, text in enumerate(lines):
            if attribute in text:
                for following in lines[index:]:
                    found = FUNC.search(following)
                    if found:
                        return found.group(1)
    return None


def main() -> None:
    names: list[str] = []
    text = Path(sys.argv[1]).read_text(encoding="utf-8", errors="replace")
    for raw in text.splitlines():
        issue = ISSUE.match(ANSI.sub("", raw))
        if not issue:
            continue
        identifier = IDENTIFIER.match(issue.group("name"))
        display = issue.group("name")
        if identifier:
            name = identifier.group(1)
        elif display.startswith('"') and display.endswith('"'):
            name = function_named(display[1:-1]) or function_above(issue.group("file"), int(issue.group("line")))
        else:
            name = function_above(issue.group("file"), int(issue.group("line")))
        if name is None:
            print(f"failed-tests: cannot name the test of {raw!r}", file=sys.stderr)
            sys.exit(1)
        if name not in names:
            names.append(name)
    print("|".join(names))


if __name__ == "__main__":
    main()
