"""The generator's state and the helpers every op generator uses.

Values come from a pool; an op generator picks operands from it (preferring
values nothing uses yet, so that chains form, and values a parameter
reaches, so that gradients flow) and makes the operands it cannot find: a
new argument (parameter or input) or a constant, iota or random op of
exactly the shape its constraints solve to. So every graph verifies by
construction. Ranges of values are tracked roughly, and operands outside an
op's domain (log of a negative, exp of a large value) first pass a guard
(exp(tanh x), |x| + 0.5, tanh x), so that the reference's numbers stay
finite.

Every op the dialect registers is either generated (gen_ops.GENERATORS) or
excluded with a reason (EXCLUDED); graph_fuzz.py's `ops` check compares the
two with the registry.
"""
import math

from graph_ir import FLOATS, Arg, Graph, Op, Value, numel, tensor_type

# Ops the generator never writes, each with why.
EXCLUDED = {
    "kiln.fusion": "made by --kiln-fuse; a model does not write it",
    "kiln.yield": "the terminator of kiln.fusion",
    "kiln.custom": "runs a CUDA file of the user's, which the CPU reference "
                   "cannot run (tests/gpu/custom checks it on the GPU)",
    "kiln.custom_backward": "made by autodiff from kiln.custom",
}

BIG = 1.0e3  # values are kept within about +-BIG
DIMS = (1, 2, 3, 4, 5, 6, 7, 8)


def bf16_exact(x):
    """x rounded to 3 significant bits: exact in bf16, f16 and f32."""
    if x == 0:
        return 0.0
    e = math.floor(math.log2(abs(x)))
    q = 2.0 ** (e - 2)
    return round(x / q) * q


def fmt_float(x):
    return repr(float(x)) if x == x else "0.0"


class Gen:
    def __init__(self, rng, label):
        self.rng = rng
        self.g = Graph(label)
        self.pool = []  # values ops may use
        self.state_args = 0

    def snapshot(self):
        return (len(self.g.ops), len(self.pool), len(self.g.args), len(self.g.outputs))

    def restore(self, snapshot):
        """Forgets what was added since `snapshot` (a generator gave up)."""
        ops, pool, args, outputs = snapshot
        del self.g.ops[ops:], self.pool[pool:], self.g.args[args:], self.g.outputs[outputs:]

    # --- randomness -------------------------------------------------------
    def chance(self, p):
        return self.rng.random() < p

    def choice(self, seq):
        return seq[self.rng.randrange(len(seq))]

    def shape(self, rank=None, max_numel=512):
        if rank is None:
            rank = self.choice((0, 1, 1, 2, 2, 2, 3, 3, 4))
        while True:
            s = tuple(self.choice(DIMS) for _ in range(rank))
            if numel(s) <= max_numel:
                return s

    def float_dtype(self):
        return self.choice(("f32",) * 6 + ("bf16", "f16"))

    # --- values -------------------------------------------------------------
    def new_value(self, shape, dtype, active=False, lo=-1.0, hi=1.0, bound=None, pool=True):
        v = Value(self.g.fresh(), shape, dtype, active, lo, hi, bound)
        if pool:
            self.pool.append(v)
        return v

    def emit(self, name, operands, results, fmt):
        self.g.ops.append(Op(name, operands, results, fmt))
        return results[0] if len(results) == 1 else results

    def arg(self, shape, dtype, kind, draw, lo, hi, bound=None, init=None):
        prefix = {"param": "p", "input": "x", "state": "s"}[kind]
        v = Value(f"{prefix}{len(self.g.args)}", shape, dtype, kind == "param", lo, hi, bound)
        self.g.args.append(Arg(v, kind, draw, init or self.init_attr(shape)))
        if kind != "state":
            self.pool.append(v)
        return v

    def init_attr(self, shape):
        kinds = ["#kiln.init<normal, std = 0.5>", "#kiln.init<uniform, low = -1.0, high = 1.0>",
                 "#kiln.init<zeros>", "#kiln.init<ones>", "#kiln.init<constant, value = 0.25>",
                 "#kiln.init<kaiming>"]
        if len(shape) == 2:
            kinds.append("#kiln.init<xavier, gain = 1.0>")
        return self.choice(kinds)

    def leaf(self, shape, dtype, active_ok=True, positive=False, prob=False, bound=None):
        """A new value of exactly this shape and type: an argument or a
        constant, iota or random op."""
        if dtype == "i32":
            hi = bound if bound else 5
            lo = 0 if bound else -4
            if not bound and self.chance(0.3):
                return self.constant(shape, dtype)
            if not bound and self.chance(0.2) and shape:
                dim = self.rng.randrange(len(shape))
                return self.emit("kiln.iota", [], [self.new_value(shape, dtype, lo=0, hi=shape[dim])],
                                 f"kiln.iota dim = {dim} : {tensor_type(shape, dtype)}")
            return self.arg(shape, dtype, "input", ("int", lo, hi), lo, hi - 1, bound=bound)
        if dtype == "i1":
            if self.chance(0.2):
                return self.constant(shape, dtype)
            return self.arg(shape, dtype, "input", ("bool",), 0, 1)
        if prob:
            return self.arg(shape, dtype, "input", ("uniform", 0.0, 1.0), 0.0, 1.0)
        if positive:
            return self.arg(shape, dtype, "input", ("uniform", 0.5, 2.0), 0.5, 2.0)
        r = self.rng.random()
        if active_ok and r < 0.45:
            return self.arg(shape, dtype, "param", ("uniform", -1.0, 1.0), -1.0, 1.0)
        if r < 0.8:
            return self.arg(shape, dtype, "input", ("uniform", -1.0, 1.0), -1.0, 1.0)
        if r < 0.88:
            return self.constant(shape, dtype)
        if r < 0.92 and shape:
            dim = self.rng.randrange(len(shape))
            return self.emit("kiln.iota", [], [self.new_value(shape, dtype, lo=0, hi=shape[dim])],
                             f"kiln.iota dim = {dim} : {tensor_type(shape, dtype)}")
        return self.random_op(shape, dtype)

    def constant(self, shape, dtype):
        t = tensor_type(shape, dtype)
        n = numel(shape)
        if dtype == "i1":
            vals = [self.choice(("true", "false")) for _ in range(n)]
            lo, hi = 0, 1
        elif dtype == "i32":
            vals = [str(self.rng.randint(-3, 3)) for _ in range(n)]
            lo, hi = -3, 3
        else:
            vals = [fmt_float(bf16_exact(self.rng.uniform(-2, 2))) for _ in range(n)]
            lo, hi = -2.0, 2.0
        if n > 6 or n == 0 or self.chance(0.5):
            text = f"dense<{vals[0] if vals else '0'}>"
        else:
            text = "dense<" + self.nested(vals, shape) + ">"
        return self.emit("kiln.constant", [], [self.new_value(shape, dtype, lo=lo, hi=hi)],
                         f"kiln.constant {text} : {t}")

    def nested(self, vals, shape):
        if not shape:
            return vals[0]
        step = numel(shape[1:])
        return "[" + ", ".join(self.nested(vals[i * step:(i + 1) * step], shape[1:])
                               for i in range(shape[0])) + "]"

    def random_op(self, shape, dtype):
        t = tensor_type(shape, dtype)
        seed, stream = self.rng.randint(0, 99), self.rng.randint(0, 9)
        offset = ""
        operands = []
        if self.chance(0.3):
            operands = [self.leaf((), "i32", bound=100)]
            offset = " offset = {0}"
        if self.chance(0.5):
            lo = bf16_exact(self.rng.uniform(-2, 0))
            hi = lo + self.choice((0.5, 1.0, 2.0))
            return self.emit("kiln.random_uniform", operands, [self.new_value(shape, dtype, lo=lo, hi=hi)],
                             f"kiln.random_uniform seed = {seed} stream = {stream}{offset} "
                             f"low = {fmt_float(lo)} high = {fmt_float(hi)} : {t}")
        std = self.choice((0.5, 1.0, 0.25))
        return self.emit("kiln.random_normal", operands, [self.new_value(shape, dtype, lo=-5 * std, hi=5 * std)],
                         f"kiln.random_normal seed = {seed} stream = {stream}{offset} "
                         f"mean = 0.0 std = {std} : {t}")

    # --- picking operands -------------------------------------------------
    def pick(self, pred):
        """An existing value satisfying pred, unused and active ones first."""
        cands = [v for v in self.pool if pred(v)]
        if not cands:
            return None
        uses = self.g.uses()
        weights = [(10 if not uses.get(v.name) else 1) * (3 if v.active else 1) for v in cands]
        return self.rng.choices(cands, weights)[0]

    def operand(self, dtypes=FLOATS, min_rank=0, max_rank=5, inactive=False, pred=None, max_numel=512):
        """An existing value of one of `dtypes` and a rank in range, or a new
        leaf."""
        def ok(v):
            return (v.dtype in dtypes and min_rank <= v.rank <= max_rank
                    and numel(v.shape) <= max_numel and (not inactive or not v.active)
                    and (pred is None or pred(v)))
        v = self.pick(ok) if self.chance(0.85) else None
        if v is None:
            rank = self.rng.randint(min_rank, min(max_rank, 4))
            for _ in range(20):
                shape = self.shape(rank, max_numel)
                dtype = self.choice(dtypes) if dtypes != FLOATS else self.float_dtype()
                v = self.leaf(shape, dtype, active_ok=not inactive)
                if pred is None or pred(v):
                    break
        return v

    def of_shape(self, shape, dtype, inactive=False, positive=False, prob=False, bound=None, avoid=None):
        """A value of exactly this shape and type: an existing one, an
        existing one reshaped or broadcast, or a new leaf."""
        def ok(v):
            if v.dtype != dtype or (inactive and v.active) or v is avoid:
                return False
            if positive and v.lo < 0.1:
                return False
            if prob and (v.lo < 0 or v.hi > 1):
                return False
            if bound is not None and (v.bound is None or v.bound > bound):
                return False
            return True
        if self.chance(0.7):
            exact = self.pick(lambda v: ok(v) and v.shape == tuple(shape))
            if exact:
                return exact
            if self.chance(0.5):
                same = self.pick(lambda v: ok(v) and numel(v.shape) == numel(shape) and v.shape != tuple(shape))
                if same:
                    return self.reshape_to(same, shape)
            if self.chance(0.3):
                small = self.pick(lambda v: ok(v) and v.rank <= len(shape) and v.shape != tuple(shape)
                                  and broadcastable(v.shape, shape))
                if small:
                    return self.emit("kiln.broadcast_to", [small],
                                     [self.derived(small, shape)],
                                     f"kiln.broadcast_to {{0}} : {small.type} -> {tensor_type(shape, dtype)}")
        if bound is not None:
            return self.leaf(shape, dtype, bound=bound)
        return self.leaf(shape, dtype, active_ok=not inactive, positive=positive, prob=prob)

    def derived(self, src, shape, dtype=None, **kw):
        return self.new_value(shape, dtype or src.dtype, kw.get("active", src.active),
                              kw.get("lo", src.lo), kw.get("hi", src.hi), kw.get("bound", src.bound))

    def reshape_to(self, v, shape):
        return self.emit("kiln.reshape", [v], [self.derived(v, shape)],
                         f"kiln.reshape {{0}} : {v.type} -> {tensor_type(shape, v.dtype)}")

    # --- guards -------------------------------------------------------------
    def unary(self, name, v, lo, hi, attrs=""):
        # An index's bound holds only while its values stay in [0, bound)
        # (kiln.neg of labels is no index).
        bound = v.bound if v.bound is not None and 0 <= lo and hi < v.bound else None
        return self.emit(name, [v], [self.derived(v, v.shape, lo=lo, hi=hi, bound=bound)],
                         f"{name} {{0}}{attrs} : {v.type}")

    def bounded(self, v, limit):
        """v, or tanh(v) when |v| may exceed limit (floats)."""
        if v.mag <= limit:
            return v
        return self.unary("kiln.tanh", v, -1.0, 1.0)

    def positive(self, v):
        """v, or a positive function of it (lower bound >= 0.1)."""
        if v.lo >= 0.1 and v.hi <= BIG:
            return v
        if self.chance(0.5):
            t = self.bounded(v, 1.0)
            return self.unary("kiln.exp", t, math.exp(t.lo), math.exp(t.hi))
        a = self.unary("kiln.abs", v, 0.0, v.mag)
        half = self.splat((), v.dtype, 0.5)
        return self.emit("kiln.add", [a, half], [self.derived(a, v.shape, lo=0.5, hi=v.mag + 0.5)],
                         f"kiln.add {{0}}, {{1}} : {a.type}, {half.type}")

    def splat(self, shape, dtype, value):
        t = tensor_type(shape, dtype)
        return self.emit("kiln.constant", [], [self.new_value(shape, dtype, lo=value, hi=value, pool=False)],
                         f"kiln.constant dense<{fmt_float(value)}> : {t}")


def broadcastable(small, big):
    if len(small) > len(big):
        return False
    for a, b in zip(reversed(small), reversed(big)):
        if a != b and a != 1:
            return False
    return True


def broadcast_shape(a, b):
    n = max(len(a), len(b))
    a = (1,) * (n - len(a)) + tuple(a)
    b = (1,) * (n - len(b)) + tuple(b)
    return tuple(max(x, y) for x, y in zip(a, b))


def interval(op, a, b):
    """[lo, hi] of a op b over a's and b's intervals."""
    if op == "add":
        return a[0] + b[0], a[1] + b[1]
    if op == "sub":
        return a[0] - b[1], a[1] - b[0]
    if op == "mul":
        c = [a[0] * b[0], a[0] * b[1], a[1] * b[0], a[1] * b[1]]
        return min(c), max(c)
    if op == "max":
        return max(a[0], b[0]), max(a[1], b[1])
    if op == "min":
        return min(a[0], b[0]), min(a[1], b[1])
    raise ValueError(op)


class Skip(Exception):
    """An op generator found no valid form here; its ops are dropped."""
