"""The generated graph: values, ops, arguments and its .mlir text.

A Graph is one `func.func @loss` whose result 0 is a rank-0 f32 loss. Ops
are kept structured (operands, results, a format of their text) so that the
reducer can cut a graph apart and print what is left.
"""
import itertools

FLOATS = ("f32", "bf16", "f16")
INTS = ("i32",)
ALL_TYPES = FLOATS + ("i32", "i1")


def tensor_type(shape, dtype):
    return "tensor<" + "".join(f"{d}x" for d in shape) + dtype + ">"


def numel(shape):
    n = 1
    for d in shape:
        n *= d
    return n


class Value:
    """An SSA value: its shape and element type, whether a parameter reaches
    it (`active`), a rough range of its elements [lo, hi] (floats and i32),
    and for i32 values known to lie in [0, bound) that bound (indices)."""

    def __init__(self, name, shape, dtype, active=False, lo=-1.0, hi=1.0, bound=None):
        self.name = name
        self.shape = tuple(shape)
        self.dtype = dtype
        self.active = active
        self.lo, self.hi = lo, hi
        self.bound = bound

    @property
    def type(self):
        return tensor_type(self.shape, self.dtype)

    @property
    def rank(self):
        return len(self.shape)

    @property
    def mag(self):
        return max(abs(self.lo), abs(self.hi))

    def is_float(self):
        return self.dtype in FLOATS


class Arg:
    """A function argument. kind: param, input or state. `draw` says how the
    checker draws its values: ("uniform", lo, hi) for floats, ("int", lo,
    hi) for i32 in [lo, hi), ("bool",) for i1."""

    def __init__(self, value, kind, draw, init=None):
        self.value = value
        self.kind = kind
        self.draw = draw
        self.init = init

    def text(self):
        attrs = []
        if self.kind == "param":
            attrs.append(f"kiln.param = {self.init}")
        elif self.kind == "state":
            attrs.append(f"kiln.state = {self.init}")
        attrs.append(f'kiln.name = "{self.value.name}"')
        return f"%{self.value.name}: {self.value.type} {{{', '.join(attrs)}}}"


class Op:
    """One op: `fmt` is its text after `= ` with {0}, {1}, ... for the
    operands' SSA names (types are written out in it). `differentiable`
    is False for ops that must never see a parameter (the backward ops)."""

    def __init__(self, name, operands, results, fmt):
        self.name = name
        self.operands = list(operands)
        self.results = list(results)
        self.fmt = fmt

    def text(self):
        rhs = self.fmt.format(*("%" + v.name for v in self.operands))
        if not self.results:
            return rhs
        if len(self.results) == 1:
            return f"%{self.results[0].name} = {rhs}"
        # Multi-result ops are written %a, %b = ...; uses name each result.
        return ", ".join("%" + v.name for v in self.results) + " = " + rhs


class Graph:
    def __init__(self, seed_label=""):
        self.args = []
        self.ops = []
        self.outputs = []  # values returned after the loss
        self.loss = None
        self.label = seed_label
        self._names = itertools.count()

    def fresh(self, prefix="v"):
        return f"{prefix}{next(self._names)}"

    def arg_names(self):
        return {a.value.name for a in self.args}

    def uses(self):
        """{value name: number of uses} over ops and results."""
        count = {}
        for op in self.ops:
            for v in op.operands:
                count[v.name] = count.get(v.name, 0) + 1
        for v in [self.loss] + self.outputs:
            if v is not None:
                count[v.name] = count.get(v.name, 0) + 1
        return count

    def op_names(self):
        return [op.name for op in self.ops]

    def text(self):
        results = [self.loss] + self.outputs
        names = ["loss"] + [v.name for v in self.outputs]
        res_types = ", ".join(f'{v.type} {{kiln.name = "{n}"}}' for v, n in zip(results, names))
        lines = []
        if self.label:
            lines.append(f"// graph {self.label}")
        args = ",\n    ".join(a.text() for a in self.args)
        lines.append(f"func.func @loss(\n    {args}) -> ({res_types}) {{")
        for op in self.ops:
            lines.append("  " + op.text())
        lines.append("  return " + ", ".join("%" + v.name for v in results) + " : "
                     + ", ".join(v.type for v in results))
        lines.append("}")
        return "\n".join(lines) + "\n"

    def remove_dead(self):
        """Drops ops none of whose results is used, and unused arguments."""
        changed = True
        while changed:
            changed = False
            uses = self.uses()
            for op in reversed(self.ops):
                if not any(uses.get(r.name) for r in op.results):
                    self.ops.remove(op)
                    changed = True
                    break
        uses = self.uses()
        self.args = [a for a in self.args if uses.get(a.value.name)]
