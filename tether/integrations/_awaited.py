"""Programs written for frameworks whose tools are plain functions
(smolagents, CodeAct) call them without ``await``; tether's bindings are
async. The calls are awaited for the program, in place, so its line
numbers still hold."""

from __future__ import annotations

import ast

#: smolagents' tool that ends a step: awaited wherever it is called.
FINAL_ANSWER = "final_answer"


def awaited(code: str, names: set[str]) -> str:
    """``code`` with calls of ``names`` wrapped in ``(await ...)``, in place,
    where ``await`` may stand (not in a nested ``def`` or ``lambda``). In
    code without ``await``, every call; in code that awaits, only those
    whose value is a whole statement or assignment (``x = f(1)``, ``f(1)``)
    and calls of ``final_answer`` outside an ``await``: the code's other
    calls may be meant for ``asyncio.gather``. Code that does not parse is
    returned as it is, for the run to report."""
    try:
        tree = ast.parse(code)
    except SyntaxError:
        return code
    everywhere = not any(isinstance(node, ast.Await | ast.AsyncFor | ast.AsyncWith)
                         for node in ast.walk(tree))
    statements = {id(node.value) for node in ast.walk(tree)
                  if isinstance(node, ast.Expr | ast.Assign | ast.AugAssign | ast.AnnAssign)}
    spans: list[tuple[int, int, int, int]] = []

    def visit(node: ast.AST, in_await: bool) -> None:
        if isinstance(node, ast.FunctionDef | ast.Lambda):
            return
        if (isinstance(node, ast.Call) and isinstance(node.func, ast.Name)
                and node.func.id in names and not in_await
                and (everywhere or id(node) in statements or node.func.id == FINAL_ANSWER)):
            assert node.end_lineno is not None and node.end_col_offset is not None
            spans.append((node.lineno, node.col_offset, node.end_lineno, node.end_col_offset))
        for child in ast.iter_child_nodes(node):
            visit(child, in_await or isinstance(node, ast.Await))

    visit(tree, False)
    lines = [line.encode() for line in code.splitlines(keepends=True)]
    # From the last edit to the first (an end before a start at one place),
    # so the offsets still to apply hold.
    edits = sorted([(s[2], s[3], 1, b")") for s in spans]
                   + [(s[0], s[1], 0, b"(await ") for s in spans], reverse=True)
    for line, column, _, text in edits:
        raw = lines[line - 1]
        lines[line - 1] = raw[:column] + text + raw[column:]
    return b"".join(lines).decode()
