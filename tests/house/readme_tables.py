#!/usr/bin/env python3
"""readme_tables.py - each code folder's README.md file table lists exactly
the files in the folder (issue 31: maps that match the house).

For each folder given, its README.md must have a table whose first header
cell is "file"; the first cell of each row names files in backticks:
`main.c`, `config.{c,h}` or `config.c/h` (both), `suites/` (a folder). Then:
- every file of the folder but README.md and CMakeLists.txt is listed;
- every name listed exists;
- a subfolder is listed as `name/`, and its files are listed either in its
  own README.md's table (checked the same way) or in the parent's as
  `name/file`.

usage: readme_tables.py SOURCE_DIR FOLDER... [--optional FOLDER...]
(an --optional folder is checked only when it has a README.md)
Exit 1 with one line per missing or stale entry, naming the README and file.
It first checks itself on a made-up folder (a file not listed, a row for a
file that is gone, an unlisted subfolder), so it cannot pass by reading
nothing.
"""
import os
import re
import sys
import tempfile

IGNORED = {"README.md", "CMakeLists.txt"}


def expand(token):
    """The names one backticked token stands for."""
    m = re.fullmatch(r"(.*)\{([^}]*)\}(.*)", token)
    if m:
        return [m.group(1) + alt.strip() + m.group(3) for alt in m.group(2).split(",")]
    m = re.fullmatch(r"(.*)\.(\w+)/(\w+)", token)
    if m and "/" not in m.group(2):
        return [m.group(1) + "." + m.group(2), m.group(1) + "." + m.group(3)]
    return [token]


def table_names(readme):
    """The names the file tables of readme list (first cells), in order."""
    names, in_table = [], False
    for line in open(readme, encoding="utf-8"):
        cells = [c.strip() for c in line.strip().strip("|").split("|")] if line.lstrip().startswith("|") else None
        if cells is None:
            in_table = False
            continue
        if not in_table:
            in_table = cells[0].lower() == "file"
            continue
        if re.fullmatch(r"[-: ]+", cells[0]):
            continue
        for token in re.findall(r"`([^`]+)`", cells[0]):
            names.extend(expand(token))
    return names


def check_folder(source, folder, problems, optional=False):
    path = os.path.join(source, folder)
    readme = os.path.join(path, "README.md")
    rel_readme = os.path.join(folder, "README.md")
    if not os.path.isfile(readme):
        if not optional:
            problems.append("%s is missing: folder %s/ needs a README.md with a file table" % (rel_readme, folder))
        return
    listed = table_names(readme)
    if not listed:
        problems.append("%s has no file table (a table whose first header cell is 'file')" % rel_readme)
        return
    for name in listed:
        if not os.path.exists(os.path.join(path, name.rstrip("/"))):
            problems.append("%s lists `%s`, but %s/%s does not exist: remove or rename that row"
                            % (rel_readme, name, folder, name))
    for entry in sorted(os.listdir(path)):
        if entry in IGNORED or entry.startswith("."):
            continue
        if os.path.isdir(os.path.join(path, entry)):
            if entry + "/" not in listed:
                problems.append("%s does not list the folder `%s/` (%s/%s/): add a row for it"
                                % (rel_readme, entry, folder, entry))
            sub = os.path.join(folder, entry)
            if os.path.isfile(os.path.join(source, sub, "README.md")):
                check_folder(source, sub, problems)
                continue
            for f in sorted(os.listdir(os.path.join(source, sub))):
                if f not in IGNORED and not f.startswith(".") and entry + "/" + f not in listed:
                    problems.append("%s does not list %s/%s: add a row `%s/%s` (or give %s/ a README.md "
                                    "with its own file table)" % (rel_readme, sub, f, entry, f, sub))
        elif entry not in listed:
            problems.append("%s does not list %s/%s: add a row | `%s` | what it holds |"
                            % (rel_readme, folder, entry, entry))


def self_test():
    """The checker finds what it must on a made-up folder; returns the problems it missed."""
    with tempfile.TemporaryDirectory(prefix="readme-tables-") as tmp:
        d = os.path.join(tmp, "mod")
        os.makedirs(os.path.join(d, "sub"))
        for f in ("a.c", "a.h", "b.c", "sub/c.c", "CMakeLists.txt"):
            open(os.path.join(d, f), "w").close()
        with open(os.path.join(d, "README.md"), "w") as f:
            f.write("# mod\n\n| file | what |\n|---|---|\n| `a.{c,h}` | a |\n| `gone.c` | stale |\n")
        found = []
        check_folder(tmp, "mod", found)
    want = ["does not list mod/b.c", "lists `gone.c`", "does not list the folder `sub/`", "does not list mod/sub/c.c"]
    missed = [w for w in want if not any(w in p for p in found)]
    wrong = [p for p in found if "a.c" in p.split("list")[-1] or "a.h" in p.split("list")[-1]]
    return missed + ["reported a listed file: " + p for p in wrong]


def main():
    missed = self_test()
    for m in missed:
        print("FAIL: the checker itself missed: " + m)
    if missed:
        return 1
    args = sys.argv[1:]
    if len(args) < 2:
        print(__doc__)
        return 2
    source, rest = args[0], args[1:]
    required = rest[:rest.index("--optional")] if "--optional" in rest else rest
    optional = rest[rest.index("--optional") + 1:] if "--optional" in rest else []
    problems = []
    for folder in required:
        check_folder(source, folder, problems)
    for folder in optional:
        check_folder(source, folder, problems, optional=True)
    for p in problems:
        print("FAIL: " + p)
    print("%d problem(s) in the file tables of %s" % (len(problems), ", ".join(required + optional)))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
