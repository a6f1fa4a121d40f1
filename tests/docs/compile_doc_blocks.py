#!/usr/bin/env python3
# SPDX-License-Identifier: MIT
"""compile_doc_blocks.py: every ```cpp block of the given Markdown pages compiles.

    compile_doc_blocks.py --page PAGE [--page PAGE ...] --root SOURCE_DIR --work-dir DIR
        [--include-dirs A|B|...] [--definitions X|Y=1|...] -- CXX FLAGS...

The convention, for README.md and docs/*.md:

- A block that defines `main` (`int main(` or `auto main(`) is a whole program and is compiled as
  it stands, in a unit of its own.
- Any other block is a fragment: the body of a function, in namespace memshard_docs, after
  <memshard/memshard.hpp>, <memshard/codecs/make_codec.hpp> and tests/docs/doc_context.hpp, which
  declares the names fragments take as given (a client, server lists, a key, a database, render,
  log, ...). Its #include lines go above the function. All the fragments share one unit, one
  function each (the headers, most of the cost, are read once).
- `<!-- memshard.docs: skip (reason) -->` on the line before a block leaves it out; the reason is
  required. Any other `memshard.docs:` comment is an error.

Each unit starts its blocks with #line, so that a diagnostic names the page and line. Units are
only checked (-fsyntax-only): nothing is linked. Exits 1 when a block does not compile or a
comment breaks the convention.
"""

import argparse
import pathlib
import re
import subprocess
import sys

FENCE = re.compile(r"^(\s*)```(\S*)\s*$")
DIRECTIVE = re.compile(r"<!--\s*memshard\.docs:(.*?)-->")
SKIP = re.compile(r"^\s*skip\s*\((.+)\)\s*$")
MAIN = re.compile(r"\b(?:int|auto)\s+main\s*\(")
INCLUDE = re.compile(r"^\s*#\s*include\b")


class Block:
    def __init__(self, first_line, lines, skip):
        self.first_line = first_line  # the page's line number of the block's first code line
        self.lines = lines
        self.skip = skip

    @property
    def code(self):
        return "\n".join(self.lines)

    @property
    def is_program(self):
        return MAIN.search(self.code) is not None


def read_blocks(page_text, page_name):
    """Answers the page's ```cpp blocks and the convention errors found."""
    lines = page_text.split("\n")
    blocks, errors = [], []
    pending = None  # (line, directive) of a directive waiting for its block
    i = 0
    while i < len(lines):
        line = lines[i]
        directive = DIRECTIVE.search(line)
        if directive:
            text = directive.group(1).strip()
            skip = SKIP.match(text)
            if not skip or not skip.group(1).strip():
                errors.append(f"{page_name}:{i + 1}: a memshard.docs comment must read "
                              f"'skip (reason)', with a reason: {text!r}")
            else:
                pending = (i + 1, skip.group(1).strip())
            i += 1
            continue
        fence = FENCE.match(line)
        if not fence:
            if line.strip() and pending:
                errors.append(f"{page_name}:{pending[0]}: the skip comment is not right before a "
                              "```cpp block")
                pending = None
            i += 1
            continue
        indent, language = fence.group(1), fence.group(2)
        end = i + 1
        while end < len(lines) and not re.match(r"^\s*```\s*$", lines[end]):
            end += 1
        if end == len(lines):
            errors.append(f"{page_name}:{i + 1}: the code block is not closed")
            break
        if language == "cpp":
            code = [l[len(indent):] if l.startswith(indent) else l for l in lines[i + 1:end]]
            blocks.append(Block(i + 2, code, pending[1] if pending else None))
        elif pending:
            errors.append(f"{page_name}:{pending[0]}: the skip comment is before a "
                          f"```{language} block, not a ```cpp one")
        pending = None
        i = end + 1
    return blocks, errors


def program_unit(block, page_name):
    return f'#line {block.first_line} "{page_name}"\n{block.code}\n'


def fragments_unit(fragments):
    """fragments: (page name, block) pairs."""
    includes, functions = [], []
    for page_name, block in fragments:
        body = []
        for line in block.lines:
            if INCLUDE.match(line):
                if line.strip() not in includes:
                    includes.append(line.strip())
                body.append("")  # keeps the lines after it where #line says they are
            else:
                body.append(line)
        name = re.sub(r"\W", "_", page_name.removesuffix(".md"))
        functions.append(f"void {name}_line_{block.first_line}() {{\n"
                         f'#line {block.first_line} "{page_name}"\n' + "\n".join(body) + "\n}\n")
    return ("// The documentation's fragments, one function each "
            "(tests/docs/compile_doc_blocks.py).\n"
            "#include <memshard/codecs/make_codec.hpp>\n"
            "#include <memshard/memshard.hpp>\n\n"
            '#include "doc_context.hpp"\n' + "\n".join(includes) + "\n\n"
            "namespace memshard_docs {\n\n" + "\n".join(functions) + "\n}  // namespace memshard_docs\n")


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--page", required=True, type=pathlib.Path, action="append")
    parser.add_argument("--root", required=True, type=pathlib.Path)
    parser.add_argument("--work-dir", required=True, type=pathlib.Path)
    parser.add_argument("--include-dirs", default="")
    parser.add_argument("--definitions", default="")
    parser.add_argument("compiler", nargs="+")
    args = parser.parse_args()

    args.work_dir.mkdir(parents=True, exist_ok=True)
    units = []  # (file, what it holds)
    fragments = []  # (page name, block)
    summaries, skips, errors = [], [], []
    for page in args.page:
        page_name = page.resolve().relative_to(args.root.resolve()).as_posix()
        blocks, page_errors = read_blocks(page.read_text(encoding="utf-8"), page_name)
        errors += page_errors
        kept = [b for b in blocks if not b.skip]
        programs = [b for b in kept if b.is_program]
        for block in programs:
            stem = re.sub(r"\W", "_", page_name.removesuffix(".md"))
            unit = args.work_dir / f"{stem}.line{block.first_line}.cpp"
            unit.write_text(program_unit(block, page_name), encoding="utf-8")
            units.append((unit, f"the program at {page_name}:{block.first_line} does not compile"))
        fragments += [(page_name, b) for b in kept if not b.is_program]
        skips += [f"{page_name}:{b.first_line}: skipped: {b.skip}" for b in blocks if b.skip]
        summaries.append(f"{page_name}: C++ blocks: {len(blocks)} (programs {len(programs)}, "
                         f"fragments {len(kept) - len(programs)}, "
                         f"skipped {len(blocks) - len(kept)})")
    for error in errors:
        print(error)
    if fragments:
        unit = args.work_dir / "fragments.cpp"
        unit.write_text(fragments_unit(fragments), encoding="utf-8")
        where = ", ".join(f"{page}:{block.first_line}" for page, block in fragments)
        units.append((unit, f"a fragment does not compile (the fragments: {where})"))

    flags = [f"-I{d}" for d in args.include_dirs.split("|") if d]
    flags += [f"-I{pathlib.Path(__file__).resolve().parent}"]
    flags += [f"-D{d}" for d in args.definitions.split("|") if d]
    failed = 0
    for unit, what in units:
        command = args.compiler + flags + ["-fsyntax-only", str(unit)]
        result = subprocess.run(command, capture_output=True, text=True, check=False)
        sys.stdout.write(result.stdout + result.stderr)
        if result.returncode != 0:
            print(f"FAILED: {what}; the unit: {unit}")
            failed += 1

    print("\n".join(skips + summaries))
    print(f"units compiled: {len(units)}, failed: {failed}")
    return 1 if failed or errors else 0


if __name__ == "__main__":
    sys.exit(main())
