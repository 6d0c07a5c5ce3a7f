#!/usr/bin/env python3
"""Lines per source file and its longest function (C++ under src/), longest first.

A function is a brace block that opens at the end of a definition head at column 0 or, for a member
defined in its class, 2 (up to 5 lines that end in "{"; it has a parameter list and is not a control
statement, a class, a namespace or a lambda inside a function);
its length counts the lines from that line to its closing brace. Good enough to find the long ones,
not a parser.

Usage: scripts/dev/function_sizes.py [--root src] [--max-function 150] [--max-file 600] [--top 40]
Exit status 1 when a limit is given and exceeded (the files and functions over it are listed).
"""
import argparse
import os
import re
import sys

HEAD = re.compile(r"^[A-Za-z_][\w:<>,\s\*&~\[\]]*\([^;]*\)\s*(const)?\s*(override)?\s*(noexcept)?\s*(->\s*[\w:<>\s\*&]+)?\s*\{\s*$")
NOT_HEAD = re.compile(r"^\s*(if|for|while|switch|catch|else|do|return|namespace|class|struct|enum)\b")


def code_only(text):
    """The text with comments and string/char literals (raw strings too) blanked, newlines kept, so
    that braces inside them are not counted."""
    out, i, n = [], 0, len(text)
    blank = lambda s: "".join(c if c == "\n" else " " for c in s)
    while i < n:
        c = text[i]
        if text.startswith("//", i):
            j = text.find("\n", i)
            j = n if j < 0 else j
        elif text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
        elif c == "R" and text.startswith('R"', i) and (i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")):
            m = re.match(r'R"([^(\s]*)\(', text[i:])
            if not m:
                out.append(c)
                i += 1
                continue
            end = text.find(")" + m.group(1) + '"', i + m.end())
            j = n if end < 0 else end + len(m.group(1)) + 2
            out.append('""' + blank(text[i + 2:j]))
            i = j
            continue
        elif c in "\"'":
            j = i + 1
            while j < n and text[j] != c and text[j] != "\n":
                j += 2 if text[j] == "\\" else 1
            j = min(j + 1, n)
            out.append(c + blank(text[i + 1:j - 1]) + c)
            i = j
            continue
        else:
            out.append(c)
            i += 1
            continue
        out.append(blank(text[i:j]))
        i = j
    return "".join(out)


def may_open(line):
    """A line where a definition may start: at column 0, or indented 2 (a member defined in its class's
    body; a function's own body is skipped whole, so its lines are never taken for heads)."""
    return bool(line) and (not line[0].isspace() or (line.startswith("  ") and not line.startswith("   ")))


def functions(lines):
    """(name line, start index, length) of function bodies: free functions and members defined in class."""
    out, i = [], 0
    while i < len(lines):
        line = lines[i]
        head, k = line.strip(), i  # a head may wrap: join up to 4 lines until one ends with "{" or ";"
        while (may_open(line) and "(" in head and not head.endswith(("{", ";", "}"))
               and k + 1 < len(lines) and k - i < 4):
            k += 1
            head += " " + lines[k].strip()
        if may_open(line) and HEAD.match(head) and not NOT_HEAD.match(line):
            depth, j = 0, i
            while j < len(lines):
                depth += lines[j].count("{") - lines[j].count("}")
                if depth <= 0 and j > i or (depth == 0 and j == i and "}" in lines[j]):
                    break
                j += 1
            out.append((line.strip()[:80], i + 1, j - i + 1))
            i = j + 1
            continue
        i += 1
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--root", default=os.path.join(os.path.dirname(__file__), "..", "..", "src"))
    ap.add_argument("--max-function", type=int, default=0, help="limit on a function's lines (0: none)")
    ap.add_argument("--max-file", type=int, default=0, help="limit on a file's lines (0: none)")
    ap.add_argument("--top", type=int, default=40, help="rows to print (0: all)")
    args = ap.parse_args()
    rows = []
    for root, _, files in os.walk(args.root):
        for f in files:
            if not f.endswith((".cc", ".h", ".cu")) or f.endswith("_test.cc"):
                continue
            p = os.path.join(root, f)
            with open(p, encoding="utf-8", errors="replace") as fh:
                lines = code_only(fh.read()).split("\n")
            fns = functions(lines)
            longest = max(fns, key=lambda x: x[2]) if fns else ("", 0, 0)
            rows.append((os.path.relpath(p, args.root), len(lines), longest))
    rows.sort(key=lambda r: -r[2][2])
    print(f"{'file':52s} {'lines':>6s} {'longest':>8s}  function")
    for path, n, (name, at, length) in rows[: args.top or len(rows)]:
        print(f"{path:52s} {n:6d} {length:8d}  {name} (line {at})")
    over_fn = [r for r in rows if args.max_function and r[2][2] > args.max_function]
    over_file = [r for r in rows if args.max_file and r[1] > args.max_file]
    print(f"\n{len(rows)} files; functions over {args.max_function or '-'} lines: {len(over_fn)}; "
          f"files over {args.max_file or '-'} lines: {len(over_file)}")
    return 1 if over_fn or over_file else 0


if __name__ == "__main__":
    sys.exit(main())
