#!/usr/bin/env python3
"""Step 2 of the capslint action, second half: everything the job shows, from one SARIF report.

capslint runs once per job and writes SARIF. This script reads that file and prints:

- the findings as workflow commands (`--annotations`), byte for byte what
  `capslint check --output-format github` prints for the same run: `::error file=...::path:row:col: CODE
  message`, with `%`, CR and LF escaped in the data and `:` and `,` too in the properties;
- otherwise a listing for people, one `path:row:col: CODE message` line per finding;
- then a total line, and with `--summary FILE` the count per rule as a Markdown table (the job summary).

The SARIF holds the finding's region in the file as stored; two things the workflow commands show are
read back from the checked files, which are in the workspace the step runs in: the row and column
within a notebook's cell (the SARIF message says `cell N, line R: `; the column is recovered from the
notebook's JSON), and the end of a span that stops right after a line break (the annotation ends on the
line before). A file outside the workspace is named by its path relative to the working directory, or
its absolute path (the github format names it as the command line did). The SARIF message joins the
message and its help with a line break and `help: `: the last such join is taken for it.

Standard library only: Python 3.8 or newer, as on every GitHub-hosted runner.
"""

import argparse
import bisect
import json
import os
import re
import sys
from urllib.parse import unquote

CELL_PREFIX = re.compile(r"cell (\d+), line (\d+): ")
HELP_SEPARATOR = "\nhelp: "
LINE_BREAK = re.compile(r"\r\n|\r|\n")
JSON_STRING = re.compile(r'"(?:[^"\\]|\\.)*"', re.DOTALL)
ARRAY_SEPARATOR = re.compile(r"[ \t\r\n]*,[ \t\r\n]*")


def escape_name(text):
    """Every control character written as a visible escape, as capslint writes file names and messages."""
    out = []
    for character in text:
        code = ord(character)
        if not (code < 0x20 or 0x7F <= code <= 0x9F):
            out.append(character)
        elif character == "\n":
            out.append("\\n")
        elif character == "\r":
            out.append("\\r")
        elif character == "\t":
            out.append("\\t")
        elif code <= 0x7F:
            out.append("\\x%02x" % code)
        else:
            out.append("\\u{%x}" % code)
    return "".join(out)


def escape_data(text):
    """Escapes the data part of a workflow command."""
    return text.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")


def escape_property(text):
    """Escapes a property value of a workflow command."""
    return escape_data(text).replace(":", "%3A").replace(",", "%2C")


class SourceText:
    """A checked file's text, decoded as capslint decodes it, with its line starts."""

    def __init__(self, text):
        self.text = text
        self.starts = [0] + [match.end() for match in LINE_BREAK.finditer(text)]

    @classmethod
    def read(cls, path):
        """The file at `path`, or None when it cannot be read."""
        try:
            with open(path, "rb") as handle:
                return cls(handle.read().decode("utf-8", errors="replace"))
        except OSError:
            return None

    def line(self, row):
        """The text of the 1-based `row`, without its line break."""
        if not 1 <= row <= len(self.starts):
            return ""
        end = self.starts[row] if row < len(self.starts) else len(self.text)
        return self.text[self.starts[row - 1] : end].rstrip("\r\n")

    def index(self, row, column):
        """The character index of a 1-based row and column."""
        return self.starts[row - 1] + column - 1


class Notebook(SourceText):
    """A notebook's JSON, with the place of every string in it."""

    def __init__(self, text):
        super().__init__(text)
        self.strings = [(match.start(), match.end()) for match in JSON_STRING.finditer(text)]
        self.string_starts = [start for start, _ in self.strings]

    def cell_column(self, row, column):
        """The column within its cell line of the code at `row`:`column` of the JSON: the characters
        since the last line break of the cell's source, across the source strings before it."""
        at = self.index(row, column)
        position = bisect.bisect_left(self.string_starts, at) - 1
        if position < 0 or at >= self.strings[position][1]:
            return None
        start, _ = self.strings[position]
        before = json.loads(self.text[start:at] + '"')
        while not LINE_BREAK.search(before) and position > 0:
            previous_start, previous_end = self.strings[position - 1]
            if not ARRAY_SEPARATOR.fullmatch(self.text, previous_end, self.strings[position][0]):
                break
            before = json.loads(self.text[previous_start:previous_end]) + before
            position -= 1
        last_break = max(before.rfind("\n"), before.rfind("\r"))
        return len(before) - last_break


class Finding:
    """One SARIF result, with what the workflow commands and the listing need."""

    def __init__(self, result, rules, root, cwd, files):
        self.code = result["ruleId"]
        rule = rules[result["ruleIndex"]] if "ruleIndex" in result else {}
        self.name = rule.get("name", "")
        self.level = result.get("level", "warning")
        fixes = result.get("fixes") or [{}]
        # `safe` fixes are what `--fix` applies (capslint's `[*]`); `unsafe` ones need `--unsafe-fixes`.
        self.applicability = fixes[0].get("properties", {}).get("applicability")
        location = result["locations"][0]["physicalLocation"]
        self.path, file_path = artifact_path(location["artifactLocation"], root, cwd)
        region = location["region"]
        self.start = (region["startLine"], region["startColumn"])
        self.end = (region.get("endLine", self.start[0]), region.get("endColumn", self.start[1]))
        text = result["message"]["text"]
        self.cell = None
        self.shown_start = self.start
        notebook = self.path.endswith(".ipynb")
        prefix = CELL_PREFIX.match(text) if notebook else None
        source = files.get(file_path, notebook)
        if prefix:
            text = text[prefix.end() :]
            self.cell = int(prefix.group(1))
            column = source.cell_column(*self.start) if source else None
            self.shown_start = (int(prefix.group(2)), column or self.start[1])
        self.message, self.help = text, None
        split = text.rfind(HELP_SEPARATOR)
        if split >= 0:
            self.message, self.help = text[:split], text[split + len(HELP_SEPARATOR) :]
        self.inclusive_end = self.end
        if source and not notebook and self.end[1] == 1 and self.end[0] > self.start[0]:
            # A span that ends right after a line break ends, for GitHub, at the end of the line before.
            previous = self.end[0] - 1
            self.inclusive_end = (previous, len(source.line(previous)) + 1)

    def location(self):
        """`path:row:col`, or `path:cell N:row:col` in a notebook, with the path escaped."""
        path = escape_name(self.path)
        if self.cell is None:
            return "%s:%d:%d" % (path, self.shown_start[0], self.shown_start[1])
        return "%s:cell %d:%d:%d" % (path, self.cell, self.shown_start[0], self.shown_start[1])

    def workflow_command(self):
        """The `::error` / `::warning` line capslint's `github` format prints for this finding."""
        (start_row, start_column), (end_row, end_column) = self.start, self.inclusive_end
        properties = "file=%s,line=%d" % (escape_property(escape_name(self.path)), start_row)
        if start_row == end_row:
            properties += ",col=%d,endLine=%d,endColumn=%d" % (start_column, end_row, end_column)
        else:
            properties += ",endLine=%d" % end_row
        properties += ",title=%s" % escape_property("%s %s" % (self.code, self.name))
        data = "%s: %s %s" % (self.location(), self.code, escape_name(self.message))
        if self.help is not None:
            data += "\nhelp: " + escape_name(self.help)
        level = "error" if self.level == "error" else "warning"
        return "::%s %s::%s" % (level, properties, escape_data(data))

    def listing_line(self):
        """The finding as the `concise` format prints it."""
        marker = " [*]" if self.applicability == "safe" else ""
        return "%s: %s%s %s" % (self.location(), self.code, marker, escape_name(self.message))


def artifact_path(artifact, root, cwd):
    """The path shown for an artifact location, and the file to read: relative to the repository root
    under `%SRCROOT%`, else relative to the working directory when below it, else absolute."""
    uri = artifact["uri"]
    if artifact.get("uriBaseId"):
        relative = unquote(uri, errors="replace")
        return relative, os.path.join(root, relative)
    absolute = unquote(uri[len("file://") :] if uri.startswith("file://") else uri, errors="replace")
    below = os.path.relpath(absolute, cwd) if os.path.isabs(absolute) else absolute
    shown = absolute if below.startswith("..") else below.replace(os.sep, "/")
    return shown, absolute


class Files:
    """Checked files, read once each when a finding needs them."""

    def __init__(self):
        self.cache = {}

    def get(self, path, notebook):
        """The file at `path` (a notebook's JSON with its strings when `notebook`), or None."""
        if path not in self.cache:
            kind = Notebook if notebook else SourceText
            self.cache[path] = kind.read(path)
        return self.cache[path]


def findings(sarif, cwd):
    """The findings of a SARIF log, in its order (capslint's: file, row, column, code)."""
    run = sarif["runs"][0]
    rules = run["tool"]["driver"].get("rules", [])
    base = run.get("originalUriBaseIds", {}).get("%SRCROOT%", {}).get("uri", "")
    root = unquote(base[len("file://") :], errors="replace") if base.startswith("file://") else cwd
    files = Files()
    return [Finding(result, rules, root, cwd, files) for result in run.get("results", [])]


def total(found):
    """`Found N findings.` or `All checks passed.`, as `--statistics` ends."""
    if not found:
        return "All checks passed."
    return "Found %s." % plural(len(found), "finding")


def plural(count, word):
    """`1 finding`, `2 findings`."""
    return "%d %s%s" % (count, word, "" if count == 1 else "s")


def totals(found, errors, warnings):
    """The listing's last line, as capslint's own report ends (without the number of files)."""
    if not found:
        return "All checks passed."
    return "Found %s (%s, %s)." % (plural(found, "finding"), plural(errors, "error"), plural(warnings, "warning"))


def fix_hints(found):
    """The lines after the totals that count the fixes, as capslint's `concise` format ends."""
    fixable = sum(1 for finding in found if finding.applicability == "safe")
    hidden = sum(1 for finding in found if finding.applicability == "unsafe")
    hidden_text = "%s can be enabled with the `--unsafe-fixes` option" % (
        "1 hidden fix" if hidden == 1 else "%d hidden fixes" % hidden
    )
    if fixable == 0 and hidden == 0:
        return []
    if fixable == 0:
        return ["No fixes applied or available (%s)." % hidden_text]
    if hidden == 0:
        return ["[*] %d fixable with the `--fix` option." % fixable]
    return ["[*] %d fixable with the `--fix` option (%s)." % (fixable, hidden_text)]


def counts(found):
    """(count, code, name) per rule, most frequent first, then by code."""
    per_rule = {}
    for finding in found:
        count, _ = per_rule.get(finding.code, (0, finding.name))
        per_rule[finding.code] = (count + 1, finding.name)
    fixable = {finding.code for finding in found if finding.applicability == "safe"}
    rows = [(count, code, ("[*] " if code in fixable else "") + name) for code, (count, name) in per_rule.items()]
    return sorted(rows, key=lambda row: (-row[0], row[1]))


def summary(found):
    """The job summary: a table of the count per rule, then the total."""
    lines = ["### capslint", ""]
    rows = counts(found)
    if rows:
        lines += ["| findings | code | rule |", "| ---: | --- | --- |"]
        lines += ["| %d | `%s` | %s |" % row for row in rows]
        lines.append("")
    lines.append(total(found))
    return "\n".join(lines) + "\n"


def main(argv=None):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("sarif", help="the SARIF report capslint wrote")
    parser.add_argument("--annotations", action="store_true", help="print workflow commands")
    parser.add_argument("--summary", metavar="FILE", help="append the count per rule to FILE")
    args = parser.parse_args(argv)
    with open(args.sarif, encoding="utf-8") as handle:
        sarif = json.load(handle)
    found = findings(sarif, os.getcwd())
    lines = [finding.workflow_command() if args.annotations else finding.listing_line() for finding in found]
    errors = sum(1 for finding in found if finding.level == "error")
    warnings = len(found) - errors
    lines.append(totals(len(found), errors, warnings))
    lines += fix_hints(found)
    # UTF-8 and `\n` whatever the platform and locale, as capslint writes.
    sys.stdout.flush()
    sys.stdout.buffer.write(("\n".join(lines) + "\n").encode("utf-8"))
    sys.stdout.buffer.flush()
    if args.summary:
        with open(args.summary, "a", encoding="utf-8") as handle:
            handle.write(summary(found))
    return 0


if __name__ == "__main__":
    sys.exit(main())
