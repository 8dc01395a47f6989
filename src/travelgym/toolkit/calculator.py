"""Arithmetic without ``eval``: parse to an AST and walk a whitelist of number operations."""

from __future__ import annotations

import ast
import math
import operator

MAX_LENGTH = 500
MAX_EXPONENT = 64
MAX_MAGNITUDE = 1e15

_BINARY = {
    ast.Add: operator.add,
    ast.Sub: operator.sub,
    ast.Mult: operator.mul,
    ast.Div: operator.truediv,
    ast.FloorDiv: operator.floordiv,
    ast.Mod: operator.mod,
    ast.Pow: operator.pow,
}
_UNARY = {ast.UAdd: operator.pos, ast.USub: operator.neg}
_FUNCTIONS = {"abs": abs, "round": round, "min": min, "max": max, "sqrt": math.sqrt}


class CalculatorError(ValueError):
    """An expression that is not plain arithmetic, or cannot be computed."""


def evaluate(expression: str) -> float | int:
    """Evaluate ``+ - * / // % **``, parentheses, numbers and abs/round/min/max/sqrt."""
    text = expression.strip().replace("^", "**").replace(",", ", ")
    if not text:
        raise CalculatorError("empty expression")
    if len(text) > MAX_LENGTH:
        raise CalculatorError(f"expression longer than {MAX_LENGTH} characters")
    try:
        tree = ast.parse(text, mode="eval")
    except (SyntaxError, ValueError, RecursionError, MemoryError) as exc:
        raise CalculatorError(f"not an arithmetic expression: {exc.__class__.__name__}") from None
    try:
        value = _eval(tree.body)
    except ZeroDivisionError:
        raise CalculatorError("division by zero") from None
    except (OverflowError, RecursionError):
        raise CalculatorError("result too large") from None
    if isinstance(value, float) and not math.isfinite(value):
        raise CalculatorError("result is not a finite number")
    return value


def _eval(node: ast.AST) -> float | int:
    if isinstance(node, ast.Constant) and type(node.value) in (int, float):
        return node.value
    if isinstance(node, ast.BinOp) and type(node.op) in _BINARY:
        left, right = _eval(node.left), _eval(node.right)
        if isinstance(node.op, ast.Pow) and (
            abs(right) > MAX_EXPONENT or abs(left) > MAX_MAGNITUDE
        ):
            raise CalculatorError("exponent too large")
        return _check(_BINARY[type(node.op)](left, right))
    if isinstance(node, ast.UnaryOp) and type(node.op) in _UNARY:
        return _UNARY[type(node.op)](_eval(node.operand))
    if (
        isinstance(node, ast.Call)
        and isinstance(node.func, ast.Name)
        and node.func.id in _FUNCTIONS
        and not node.keywords
        and 0 < len(node.args) <= 20
    ):
        args = [_eval(a) for a in node.args]
        if node.func.id == "round" and len(args) == 2 and abs(args[1]) > 20:
            raise CalculatorError("round: ndigits must be between -20 and 20")
        try:
            return _check(_FUNCTIONS[node.func.id](*args))
        except (TypeError, ValueError) as exc:
            raise CalculatorError(f"{node.func.id}: {exc}") from None
    raise CalculatorError(
        f"unsupported element {type(node).__name__}: use numbers, + - * / // % ** ( ) "
        "and abs, round, min, max, sqrt"
    )


def _check(value: float | int) -> float | int:
    if isinstance(value, complex):
        raise CalculatorError("result is not a real number")
    if abs(value) > MAX_MAGNITUDE * MAX_MAGNITUDE:
        raise CalculatorError("result too large")
    return value
