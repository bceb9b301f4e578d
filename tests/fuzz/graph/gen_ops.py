"""One generator per op of the kiln dialect (GENERATORS, keyed by op name).

Each takes the Gen (gen.py), picks or makes its operands with shapes solved
from the op's constraints (docs/ops.md), appends the op and puts its results
in the pool; it raises Skip when it finds no valid form. The backward ops
have no gradient rule: they take only values no parameter reaches.
"""
import math

from gen_core import DIMS, Skip, bf16_exact, broadcast_shape, fmt_float, interval
from graph_ir import ALL_TYPES, FLOATS, numel, tensor_type

GENERATORS = {}


def op(name, weight=1.0):
    def register(fn):
        fn.weight = weight
        GENERATORS[name] = fn
        return fn
    return register


def active(*values):
    return any(v.active for v in values)


def dims_text(values):
    return "[" + ", ".join(str(v) for v in values) + "]"


def opt(gen, text, p=0.5):
    """`text`, or nothing (the attribute's default) with probability 1 - p."""
    return text if gen.chance(p) else ""


# --- elementwise ------------------------------------------------------------

def unary_range(name, v):
    lo, hi = v.lo, v.hi
    tiny = 1e-30
    table = {
        "kiln.abs": lambda: (0.0 if lo <= 0 <= hi else min(abs(lo), abs(hi)), v.mag),
        "kiln.neg": lambda: (-hi, -lo),
        "kiln.exp": lambda: (math.exp(lo), math.exp(hi)),
        "kiln.log": lambda: (math.log(max(lo, tiny)), math.log(max(hi, tiny))),
        "kiln.sqrt": lambda: (math.sqrt(max(lo, 0)), math.sqrt(max(hi, 0))),
        "kiln.rsqrt": lambda: (1 / math.sqrt(max(hi, tiny)), 1 / math.sqrt(max(lo, tiny))),
        "kiln.relu": lambda: (max(lo, 0), max(hi, 0)),
        "kiln.gelu": lambda: (-0.2, max(hi, 0)),
        "kiln.silu": lambda: (-0.3, max(hi, 0)),
        "kiln.leaky_relu": lambda: (min(lo, 0), max(hi, 0)),
        "kiln.floor": lambda: (math.floor(lo), math.floor(hi)),
        "kiln.ceil": lambda: (math.ceil(lo), math.ceil(hi)),
        "kiln.round": lambda: (round(lo), round(hi)),
        "kiln.sigmoid": lambda: (0.0, 1.0),
    }
    return table[name]() if name in table else (-1.0, 1.0)


def unary(name, ints=False, domain=None, weight=1.0):
    @op(name, weight)
    def generate(gen):
        x = gen.operand(FLOATS + (("i32",) if ints else ()))
        if x.is_float():
            if domain == "positive":
                x = gen.positive(x)
            elif domain == "small":
                x = gen.bounded(x, 4.0)
        attrs = ""
        if name == "kiln.gelu":
            attrs = gen.choice(("", " approximate = none", " approximate = tanh"))
        elif name == "kiln.leaky_relu":
            attrs = opt(gen, f" alpha = {gen.choice((0.25, 0.125, 0.5))}")
        lo, hi = unary_range(name, x)
        if x.dtype == "i32" and name == "kiln.abs":
            lo, hi = 0, x.mag
        return gen.unary(name, x, lo, hi, attrs)
    return generate


for _name in ("kiln.abs", "kiln.neg", "kiln.relu", "kiln.sign"):
    unary(_name, ints=True)
for _name in ("kiln.tanh", "kiln.sigmoid", "kiln.erf", "kiln.gelu", "kiln.silu",
              "kiln.leaky_relu", "kiln.floor", "kiln.ceil", "kiln.round"):
    unary(_name)
for _name in ("kiln.sin", "kiln.cos", "kiln.exp"):
    unary(_name, domain="small")
for _name in ("kiln.log", "kiln.sqrt", "kiln.rsqrt"):
    unary(_name, domain="positive")


def partner_shape(gen, shape, grow=True):
    """A shape that broadcasts with `shape`."""
    r = gen.rng.random()
    shape = list(shape)
    if r < 0.4:
        return tuple(shape)
    if r < 0.6 and shape:
        return tuple(shape[gen.rng.randrange(len(shape) + 1):])
    if r < 0.85 or not grow:
        return tuple(1 if gen.chance(0.4) else d for d in shape)
    lead = [gen.choice((2, 3)) for _ in range(gen.rng.randint(1, 2))]
    return tuple(lead + [d if d != 1 else gen.choice((1, 2, 3)) for d in shape])


def binary(name):
    @op(name, 1.5)
    def generate(gen):
        dtypes = FLOATS if name == "kiln.pow" else FLOATS + ("i32",)
        x = gen.operand(dtypes)
        yshape = partner_shape(gen, x.shape)
        if numel(broadcast_shape(x.shape, yshape)) > 1024:
            raise Skip()
        if x.is_float():
            x = gen.bounded(x, 30.0)
        if name == "kiln.div" and x.is_float():
            y = gen.positive(gen.of_shape(yshape, x.dtype))
        elif name == "kiln.pow":
            x = gen.positive(gen.bounded(x, 4.0))
            y = gen.bounded(gen.of_shape(yshape, x.dtype), 1.0)
        else:
            y = gen.of_shape(yshape, x.dtype)
            if y.is_float():
                y = gen.bounded(y, 30.0)
            if gen.chance(0.5):
                x, y = y, x
        lo, hi = binary_range(name, x, y)
        if x.dtype == "i32" and max(abs(lo), abs(hi)) > 1e6:
            raise Skip()
        shape = broadcast_shape(x.shape, y.shape)
        return gen.emit(name, [x, y], [gen.new_value(shape, x.dtype, active(x, y), lo, hi)],
                        f"{name} {{0}}, {{1}} : {x.type}, {y.type}")
    return generate


def binary_range(name, x, y):
    a, b = (x.lo, x.hi), (y.lo, y.hi)
    kind = name[len("kiln."):]
    if kind in ("add", "sub", "mul", "max", "min"):
        return interval(kind, a, b)
    if kind == "div":
        if x.dtype == "i32":
            return -x.mag, x.mag
        inv = (1 / max(b[1], 1e-30), 1 / max(b[0], 1e-30))
        return interval("mul", a, inv)
    # pow: base in [a0, a1] > 0, exponent in [b0, b1].
    c = [a[0] ** e for e in b] + [a[1] ** e for e in b]
    return min(c), max(c)


for _name in ("kiln.add", "kiln.sub", "kiln.mul", "kiln.div", "kiln.max", "kiln.min", "kiln.pow"):
    binary(_name)


@op("kiln.compare")
def compare(gen):
    x = gen.operand(FLOATS + ("i32",))
    y = gen.of_shape(partner_shape(gen, x.shape), x.dtype)
    if gen.chance(0.5):
        x, y = y, x
    pred = gen.choice(("eq", "ne", "lt", "le", "gt", "ge"))
    shape = broadcast_shape(x.shape, y.shape)
    if numel(shape) > 1024:
        raise Skip()
    return gen.emit("kiln.compare", [x, y], [gen.new_value(shape, "i1", active(x, y), 0, 1)],
                    f"kiln.compare {pred}, {{0}}, {{1}} : {x.type}, {y.type}")


@op("kiln.select", 1.5)
def select(gen):
    cond = gen.pick(lambda v: v.dtype == "i1" and numel(v.shape) <= 512)
    if cond is None:
        cond = compare(gen) if gen.chance(0.7) else gen.leaf(gen.shape(), "i1")
    dtype = gen.choice(FLOATS + FLOATS + ("i32", "i1"))
    a = gen.of_shape(partner_shape(gen, cond.shape, grow=False), dtype)
    b = gen.of_shape(partner_shape(gen, cond.shape, grow=False), dtype)
    shape = broadcast_shape(broadcast_shape(cond.shape, a.shape), b.shape)
    return gen.emit("kiln.select", [cond, a, b],
                    [gen.new_value(shape, dtype, active(cond, a, b), min(a.lo, b.lo), max(a.hi, b.hi))],
                    f"kiln.select {{0}}, {{1}}, {{2}} : {cond.type}, {a.type}, {b.type}")


@op("kiln.cast", 1.5)
def cast(gen):
    x = gen.operand(ALL_TYPES)
    to = gen.choice([t for t in ALL_TYPES + FLOATS if t != x.dtype])
    lo, hi, bound = x.lo, x.hi, None
    if to == "i32":
        lo, hi = math.trunc(x.lo), math.trunc(x.hi)
        if x.dtype == "i1":
            bound = 2
    elif to == "i1":
        lo, hi = 0, 1
    if to == "f16" and x.mag > 6e4:
        raise Skip()
    return gen.emit("kiln.cast", [x], [gen.new_value(x.shape, to, x.active, lo, hi, bound)],
                    f"kiln.cast {{0}} : {x.type} to {tensor_type(x.shape, to)}")


@op("kiln.constant", 0.5)
def constant(gen):
    return gen.constant(gen.shape(), gen.choice(ALL_TYPES))


@op("kiln.iota", 0.5)
def iota(gen):
    shape = gen.shape(gen.rng.randint(1, 3))
    dtype = gen.choice(("f32", "bf16", "f16", "i32"))
    dim = gen.rng.randrange(len(shape))
    return gen.emit("kiln.iota", [], [gen.new_value(shape, dtype, False, 0, shape[dim] - 1,
                                                    shape[dim] if dtype == "i32" else None)],
                    f"kiln.iota dim = {dim} : {tensor_type(shape, dtype)}")


@op("kiln.random_uniform", 0.5)
def random_uniform(gen):
    for _ in range(10):
        v = gen.random_op(gen.shape(), gen.float_dtype())
        if gen.g.ops[-1].name == "kiln.random_uniform":
            return v
    raise Skip()


@op("kiln.random_normal", 0.5)
def random_normal(gen):
    for _ in range(10):
        v = gen.random_op(gen.shape(), gen.float_dtype())
        if gen.g.ops[-1].name == "kiln.random_normal":
            return v
    raise Skip()


@op("kiln.dropout")
def dropout(gen):
    x = gen.operand()
    rate = gen.choice((0.0, 0.1, 0.25, 0.5))
    operands, offset = [x], ""
    if gen.chance(0.3):
        operands.append(gen.leaf((), "i32", bound=100))
        offset = ", {1}"
    stream = opt(gen, f" stream = {gen.rng.randint(0, 5)}")
    scale = 1 / (1 - rate)
    return gen.emit("kiln.dropout", operands, [gen.derived(x, x.shape, lo=min(0, x.lo * scale), hi=max(0, x.hi * scale))],
                    f"kiln.dropout {{0}}{offset} rate = {rate} seed = {gen.rng.randint(0, 50)}{stream} : {x.type}")


# --- shape ops, reductions, matmul ------------------------------------------

@op("kiln.argmax")
def argmax(gen):
    x = gen.operand(FLOATS + ("i32",), min_rank=1)
    dim = gen.rng.randrange(x.rank)
    keep = gen.chance(0.3)
    shape = tuple(1 if i == dim else d for i, d in enumerate(x.shape) if keep or i != dim)
    return gen.emit("kiln.argmax", [x], [gen.new_value(shape, "i32", x.active, 0, x.shape[dim] - 1, x.shape[dim])],
                    f"kiln.argmax {{0}} dim = {dim}{' keepdim' if keep else ''} : {x.type}")


@op("kiln.broadcast_to")
def broadcast_to(gen):
    x = gen.operand(ALL_TYPES, max_rank=3)
    lead = [gen.choice((1, 2, 3)) for _ in range(gen.rng.randint(0, 2))]
    shape = tuple(lead + [gen.choice((1, 2, 3, 4)) if d == 1 else d for d in x.shape])
    if numel(shape) > 1024:
        raise Skip()
    return gen.emit("kiln.broadcast_to", [x], [gen.derived(x, shape)],
                    f"kiln.broadcast_to {{0}} : {x.type} -> {tensor_type(shape, x.dtype)}")


@op("kiln.concat")
def concat(gen):
    x = gen.operand(ALL_TYPES, min_rank=1)
    dim = gen.rng.randrange(x.rank)
    parts = [x]
    for _ in range(gen.rng.randint(0, 2)):
        shape = list(x.shape)
        shape[dim] = gen.choice((1, 2, 3, 4))
        parts.append(gen.of_shape(tuple(shape), x.dtype))
    gen.rng.shuffle(parts)
    shape = list(x.shape)
    shape[dim] = sum(p.shape[dim] for p in parts)
    if numel(shape) > 1024:
        raise Skip()
    return gen.emit("kiln.concat", parts,
                    [gen.new_value(shape, x.dtype, active(*parts), min(p.lo for p in parts),
                                   max(p.hi for p in parts),
                                   max(p.bound for p in parts) if all(p.bound for p in parts) else None)],
                    "kiln.concat " + ", ".join(f"{{{i}}}" for i in range(len(parts)))
                    + f" dim = {dim} : " + ", ".join(p.type for p in parts))


@op("kiln.flip")
def flip(gen):
    x = gen.operand(ALL_TYPES)
    dims = [d for d in range(x.rank) if gen.chance(0.5)]
    gen.rng.shuffle(dims)
    return gen.emit("kiln.flip", [x], [gen.derived(x, x.shape)],
                    f"kiln.flip {{0}} dims = {dims_text(dims)} : {x.type}")


@op("kiln.matmul", 2.0)
def matmul(gen):
    lhs = gen.operand(min_rank=2, max_rank=4)
    tl, tr = gen.chance(0.3), gen.chance(0.3)
    m, k = (lhs.shape[-1], lhs.shape[-2]) if tl else (lhs.shape[-2], lhs.shape[-1])
    n = gen.choice(DIMS + (16, 12))
    batch = partner_shape(gen, lhs.shape[:-2])
    rshape = batch + ((n, k) if tr else (k, n))
    rhs = gen.of_shape(rshape, lhs.dtype)
    out = broadcast_shape(lhs.shape[:-2], batch) + (m, n)
    if numel(out) > 1024:
        raise Skip()
    lhs, rhs = gen.bounded(lhs, 4.0), gen.bounded(rhs, 4.0)
    mag = lhs.mag * rhs.mag * k
    return gen.emit("kiln.matmul", [lhs, rhs], [gen.new_value(out, lhs.dtype, active(lhs, rhs), -mag, mag)],
                    f"kiln.matmul {{0}}, {{1}}{' transpose_lhs' if tl else ''}{' transpose_rhs' if tr else ''}"
                    f" : {lhs.type}, {rhs.type}")


@op("kiln.pad")
def pad(gen):
    x = gen.operand(ALL_TYPES, min_rank=1)
    low = [gen.choice((0, 0, 1, 2)) for _ in x.shape]
    high = [gen.choice((0, 0, 1, 2)) for _ in x.shape]
    shape = tuple(l + d + h for l, d, h in zip(low, x.shape, high))
    if numel(shape) > 1024:
        raise Skip()
    if x.dtype == "i1":
        value = gen.choice((0.0, 1.0))
    elif x.dtype == "i32":
        value = float(gen.rng.randint(-2, 2))
    else:
        value = bf16_exact(gen.rng.uniform(-2, 2))
    text = opt(gen, f" value = {fmt_float(value)}", 0.7)
    if not text:
        value = 0.0
    return gen.emit("kiln.pad", [x], [gen.derived(x, shape, lo=min(x.lo, value), hi=max(x.hi, value),
                                                  bound=None)],
                    f"kiln.pad {{0}} low = {dims_text(low)} high = {dims_text(high)}{text} : {x.type}")


def reduce(name):
    @op(name)
    def generate(gen):
        dtypes = FLOATS if name == "kiln.reduce_mean" else FLOATS + ("i32",)
        x = gen.operand(dtypes, min_rank=1)
        dims = [d for d in range(x.rank) if gen.chance(0.5)] or [gen.rng.randrange(x.rank)]
        gen.rng.shuffle(dims)
        keep = gen.chance(0.3)
        shape = tuple(1 if i in dims else d for i, d in enumerate(x.shape) if keep or i not in dims)
        count = numel([x.shape[d] for d in dims])
        lo, hi = x.lo, x.hi
        if name == "kiln.reduce_sum":
            lo, hi = lo * count, hi * count
        return gen.emit(name, [x], [gen.new_value(shape, x.dtype, x.active, lo, hi)],
                        f"{name} {{0}} dims = {dims_text(dims)}{' keepdim' if keep else ''} : {x.type}")
    return generate


for _name in ("kiln.reduce_sum", "kiln.reduce_mean", "kiln.reduce_max", "kiln.reduce_min"):
    reduce(_name)


def factor_shape(gen, n, rank):
    """A random shape of `rank` dims whose product is n."""
    dims = [1] * rank
    if rank == 0:
        return () if n == 1 else None
    p, rest = 2, n
    while rest > 1:
        while rest % p == 0:
            dims[gen.rng.randrange(rank)] *= p
            rest //= p
        p += 1
    return tuple(dims)


@op("kiln.reshape")
def reshape(gen):
    x = gen.operand(ALL_TYPES)
    for _ in range(5):
        shape = factor_shape(gen, numel(x.shape), gen.rng.randint(0, 4))
        if shape is not None:
            return gen.reshape_to(x, shape)
    raise Skip()


@op("kiln.slice")
def slice_(gen):
    x = gen.operand(ALL_TYPES, min_rank=1)
    start, limit, step = [], [], []
    for d in x.shape:
        s = gen.rng.randrange(d) if gen.chance(0.5) else 0
        start.append(s)
        limit.append(gen.rng.randint(s + 1, d))
        step.append(gen.choice((1, 1, 2, 3)))
    shape = tuple(-(-(l - s) // t) for s, l, t in zip(start, limit, step))
    return gen.emit("kiln.slice", [x], [gen.derived(x, shape)],
                    f"kiln.slice {{0}} start = {dims_text(start)} limit = {dims_text(limit)} "
                    f"step = {dims_text(step)} : {x.type}")


@op("kiln.transpose")
def transpose(gen):
    x = gen.operand(ALL_TYPES, min_rank=1)
    perm = list(range(x.rank))
    gen.rng.shuffle(perm)
    shape = tuple(x.shape[p] for p in perm)
    return gen.emit("kiln.transpose", [x], [gen.derived(x, shape)],
                    f"kiln.transpose {{0}} perm = {dims_text(perm)} : {x.type}")


RESIZE_COORDINATES = ("half_pixel", "pytorch_half_pixel", "align_corners", "asymmetric",
                      "half_pixel_symmetric")
RESIZE_ROUNDING = ("round_prefer_floor", "round_prefer_ceil", "floor", "ceil")


def resize_form(gen, shape):
    """Attributes and result shape of a kiln.resize of `shape`: up to three
    dims resized to 1..8 elements, each scale the size ratio or a free one
    (ONNX's sizes need not be floor(in * scale))."""
    dims = [d for d in range(len(shape)) if gen.chance(0.5)][:3]
    if not dims:
        raise Skip()
    out, scales = list(shape), [1.0] * len(shape)
    for d in dims:
        out[d] = gen.choice(DIMS)
        scales[d] = (out[d] / shape[d] if gen.chance(0.7)
                     else gen.choice((0.5, 0.75, 1.5, 2.0, 3.0)))
    mode = gen.choice(("nearest", "linear"))
    attrs = f"mode = {mode} coordinates = {gen.choice(RESIZE_COORDINATES)}"
    if mode == "nearest":
        attrs += opt(gen, f" rounding = {gen.choice(RESIZE_ROUNDING)}")
    attrs += " scales = [" + ", ".join(fmt_float(s) for s in scales) + "]"
    return attrs, tuple(out)


@op("kiln.resize")
def resize(gen):
    x = gen.operand(FLOATS, min_rank=1, max_rank=4)
    attrs, shape = resize_form(gen, x.shape)
    if numel(shape) > 4096:
        raise Skip()
    # Nearest reads elements and linear blends two: the range stays.
    y = gen.derived(x, shape)
    return gen.emit("kiln.resize", [x], [y],
                    f"kiln.resize {{0}} {attrs} : {x.type} -> {y.type}")


def triangle(name):
    @op(name)
    def generate(gen):
        x = gen.operand(ALL_TYPES, min_rank=2)
        diag = opt(gen, f" diagonal = {gen.rng.randint(-2, 2)}")
        return gen.emit(name, [x], [gen.derived(x, x.shape, lo=min(x.lo, 0), hi=max(x.hi, 0))],
                        f"{name} {{0}}{diag} : {x.type}")
    return generate


triangle("kiln.triu")
triangle("kiln.tril")
