"""Generates random valid kiln graphs (NNSmith's idea for kiln).

generate(label, rng, max_ops) builds a Graph of 3 to max_ops ops: op
generators (gen_ops.py, gen_nn.py) chosen at random each add an op whose
operands they pick from the pool of values or make (gen_core.py), until the
budget is spent; then the values nothing uses are returned or summed into
the scalar loss.
"""
from gen_core import DIMS, EXCLUDED, Gen, Skip  # noqa: F401  (EXCLUDED is part of the interface)
from gen_ops import GENERATORS
import gen_nn  # noqa: F401  (registers the neural-network ops)
from graph_ir import numel, tensor_type



def generate(label, rng, max_ops=40, min_ops=3, only=None):
    """A Graph of min_ops to max_ops ops. `only` restricts the generated
    kinds (names of GENERATORS) for targeted runs."""
    while True:
        g = attempt(label, rng, max_ops, min_ops, only)
        if min_ops <= len(g.ops) <= max_ops:
            return g


def attempt(label, rng, max_ops, min_ops, only):
    gen = Gen(rng, label)
    target = rng.randint(min_ops, max_ops)
    for _ in range(rng.randint(1, 3)):
        gen.arg(gen.shape(), gen.float_dtype() if rng.random() < 0.2 else "f32", "param",
                ("uniform", -1.0, 1.0), -1.0, 1.0)
    kinds = sorted(only or GENERATORS)
    weights = [GENERATORS[k].weight for k in kinds]
    for _ in range(400):
        sinks = unused(gen)
        if len(gen.g.ops) >= min_ops and len(gen.g.ops) + 3 * len(sinks) >= target:
            break
        kind = rng.choices(kinds, weights)[0]
        before = gen.snapshot()
        try:
            GENERATORS[kind](gen)
        except Skip:
            gen.restore(before)
    finish(gen, max_ops)
    return gen.g


def unused(gen):
    uses = gen.g.uses()
    return [v for v in gen.pool if not uses.get(v.name)]


def finish(gen, max_ops):
    """Returns some unused values as outputs and sums the others into the
    scalar loss (a term per value: a mean, an MSE against a target, or the
    value itself when it is a scalar), within max_ops ops."""
    g = gen.g
    terms = []
    for v in unused(gen):
        full = len(g.ops) + 4 > max_ops and (terms or not v.active)
        if full or v.dtype in ("i1", "i32") or (not v.active and gen.chance(0.4)):
            if full:
                g.outputs.append(v)
                continue
            if gen.chance(0.6) or v.dtype == "i1":
                g.outputs.append(v)
                continue
        if v.dtype != "f32" and v.rank > 0 and not v.is_float():
            v = gen.emit("kiln.cast", [v], [gen.derived(v, v.shape, "f32")],
                         f"kiln.cast {{0}} : {v.type} to {tensor_type(v.shape, 'f32')}")
        terms.append(loss_term(gen, v))
    if not any(t.active for t in terms):
        p = gen.arg((gen.choice(DIMS),), "f32", "param", ("uniform", -1.0, 1.0), -1.0, 1.0)
        terms.append(loss_term(gen, p))
    total = terms[0]
    for t in terms[1:]:
        total = gen.emit("kiln.add", [total, t], [gen.new_value((), "f32", total.active or t.active,
                                                                total.lo + t.lo, total.hi + t.hi)],
                         "kiln.add {0}, {1} : tensor<f32>, tensor<f32>")
    g.loss = total


def loss_term(gen, v):
    """A rank-0 f32 value computed from v."""
    if v.rank > 0:
        r = gen.rng.random()
        if r < 0.4:
            t = gen.of_shape(v.shape, v.dtype, inactive=True, avoid=v)
            v = gen.emit("kiln.mse_loss", [v, t], [gen.new_value((), v.dtype, v.active or t.active, 0, (v.mag + t.mag) ** 2)],
                         f"kiln.mse_loss {{0}}, {{1}}{gen.choice(('', ' reduction = sum', ' reduction = mean'))} : {v.type}")
        else:
            name = "kiln.reduce_mean" if r < 0.8 else "kiln.reduce_sum"
            dims = ", ".join(str(d) for d in range(v.rank))
            scale = 1 if name == "kiln.reduce_mean" else numel(v.shape)
            v = gen.emit(name, [v], [gen.new_value((), v.dtype, v.active, v.lo * scale, v.hi * scale)],
                         f"{name} {{0}} dims = [{dims}] : {v.type}")
    if v.dtype != "f32":
        v = gen.emit("kiln.cast", [v], [gen.derived(v, (), "f32")],
                     f"kiln.cast {{0}} : {v.type} to tensor<f32>")
    return v
