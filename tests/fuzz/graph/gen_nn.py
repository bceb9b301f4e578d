"""Generators of the neural-network ops, the losses, recurrence and the
backward ops (which take only values no parameter reaches: they have no
gradient rule)."""
import math

from gen_core import Skip
from gen_ops import active, dims_text, op, opt, resize_form
from graph_ir import numel, tensor_type


def rank4(gen, max_numel=512, inactive=False):
    """An existing rank-4 float value, or the shape of a new one."""
    if gen.chance(0.6):
        v = gen.pick(lambda v: v.is_float() and v.rank == 4 and numel(v.shape) <= max_numel
                     and not (inactive and v.active))
        if v is not None:
            return gen.bounded(v, 4.0)
    shape = gen.shape(4, max_numel)
    return gen.of_shape(shape, gen.float_dtype(), inactive=inactive)


def spatial(layout, shape):
    """(N, C, H, W) of a rank-4 shape in `layout`."""
    if layout == "nchw":
        return shape
    n, h, w, c = shape
    return n, c, h, w


def activation_shape(layout, n, c, h, w):
    return (n, c, h, w) if layout == "nchw" else (n, h, w, c)


# --- normalisation and softmax ----------------------------------------------

def softmax_like(name):
    @op(name)
    def generate(gen):
        x = gen.bounded(gen.operand(min_rank=1), 20.0)
        dim = gen.rng.randrange(x.rank)
        lo, hi = (0.0, 1.0) if name == "kiln.softmax" else (-(2 * x.mag + math.log(x.shape[dim]) + 1), 0.0)
        return gen.emit(name, [x], [gen.derived(x, x.shape, lo=lo, hi=hi)],
                        f"{name} {{0}} dim = {dim} : {x.type}")
    return generate


softmax_like("kiln.softmax")
softmax_like("kiln.log_softmax")


def eps_attr(gen):
    return opt(gen, f" eps = {gen.choice(('1.0e-05', '1.0e-06', '1.0e-03'))}")


@op("kiln.layer_norm")
def layer_norm(gen):
    x = gen.bounded(gen.operand(min_rank=1), 20.0)
    k = gen.rng.randint(1, min(2, x.rank))
    norm_shape = x.shape[x.rank - k:]
    operands = [x]
    if gen.chance(0.7):
        operands.append(gen.bounded(gen.of_shape(norm_shape, x.dtype), 4.0))
        if gen.chance(0.7):
            operands.append(gen.bounded(gen.of_shape(norm_shape, x.dtype), 4.0))
    mag = math.sqrt(numel(norm_shape)) * (operands[1].mag if len(operands) > 1 else 1) + (
        operands[2].mag if len(operands) > 2 else 0)
    dims = f" dims = {k}" if k > 1 or gen.chance(0.3) else ""
    return gen.emit("kiln.layer_norm", operands, [gen.new_value(x.shape, x.dtype, active(*operands), -mag, mag)],
                    "kiln.layer_norm " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f"{dims}{eps_attr(gen)} : " + ", ".join(v.type for v in operands))


@op("kiln.rms_norm")
def rms_norm(gen):
    x = gen.bounded(gen.operand(min_rank=1), 20.0)
    operands = [x]
    if gen.chance(0.7):
        operands.append(gen.bounded(gen.of_shape(x.shape[-1:], x.dtype), 4.0))
    mag = math.sqrt(x.shape[-1]) * (operands[1].mag if len(operands) > 1 else 1)
    return gen.emit("kiln.rms_norm", operands, [gen.new_value(x.shape, x.dtype, active(*operands), -mag, mag)],
                    "kiln.rms_norm " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f"{eps_attr(gen)} : " + ", ".join(v.type for v in operands))


def group_count(gen, channels):
    return gen.choice([g for g in range(1, channels + 1) if channels % g == 0])


def group_norm_dim(gen, x):
    """The channel dim of a group norm of `x`: 1, or (channels last) the
    last dim of a rank >= 3 input; with its attribute text."""
    if x.rank >= 3 and gen.chance(0.4):
        return x.rank - 1, f" dim = {x.rank - 1}"
    return 1, opt(gen, " dim = 1")


@op("kiln.group_norm")
def group_norm(gen):
    x = gen.bounded(gen.operand(min_rank=2, max_rank=4), 20.0)
    dim, dim_text = group_norm_dim(gen, x)
    c = x.shape[dim]
    groups = group_count(gen, c)
    operands = [x]
    if gen.chance(0.7):
        operands.append(gen.bounded(gen.of_shape((c,), x.dtype), 4.0))
        if gen.chance(0.7):
            operands.append(gen.bounded(gen.of_shape((c,), x.dtype), 4.0))
    mag = math.sqrt(numel(x.shape[1:]) // groups) * (operands[1].mag if len(operands) > 1 else 1) + (
        operands[2].mag if len(operands) > 2 else 0)
    return gen.emit("kiln.group_norm", operands, [gen.new_value(x.shape, x.dtype, active(*operands), -mag, mag)],
                    "kiln.group_norm " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f" groups = {groups}{dim_text}{eps_attr(gen)} : "
                    + ", ".join(v.type for v in operands))


@op("kiln.batch_norm", 1.5)
def batch_norm(gen):
    x = gen.bounded(gen.operand(min_rank=2, max_rank=4), 20.0)
    dim = gen.rng.randrange(x.rank) if gen.chance(0.5) else 1
    c = x.shape[dim]
    n = numel(x.shape) // c
    g = gen.bounded(gen.of_shape((c,), x.dtype), 4.0)
    b = gen.bounded(gen.of_shape((c,), x.dtype), 4.0)
    operands, extra = [x, g, b], ""
    stats_dtype = x.dtype
    running = gen.chance(0.4) and n > 1
    if running:
        stats_dtype = gen.choice(("f32", x.dtype))
        rm = gen.arg((c,), stats_dtype, "state", ("uniform", -1.0, 1.0), -1.0, 1.0,
                     init="#kiln.init<zeros>")
        rv = gen.arg((c,), stats_dtype, "state", ("uniform", 0.5, 1.5), 0.5, 1.5,
                     init="#kiln.init<ones>")
        operands += [rm, rv]
        extra = " running {3}, {4}" + opt(gen, f" momentum = {gen.choice((0.1, 0.5, 1.0))}")
        if gen.chance(0.3):
            extra += " eval"
    dim_text = f" dim = {dim}" if dim != 1 or gen.chance(0.3) else ""
    mag = 8.0 * g.mag * (math.sqrt(n) if "eval" not in extra else 4.0) + b.mag
    names = [gen.new_value(x.shape, x.dtype, active(x, g, b), -mag, mag),
             gen.new_value((c,), x.dtype, active(x, g, b), x.lo, x.hi),
             gen.new_value((c,), x.dtype, active(x, g, b), 0.0, x.mag ** 2)]
    if running:
        # The updated statistics are model state: returned, never trained
        # through.
        names += [gen.new_value((c,), stats_dtype, pool=False) for _ in range(2)]
        gen.g.outputs.extend(names[3:])
    types = ", ".join(v.type for v in operands)
    return gen.emit("kiln.batch_norm", operands, names,
                    f"kiln.batch_norm {{0}}, {{1}}, {{2}}{extra}{dim_text}{eps_attr(gen)} : {types}")


# --- losses -----------------------------------------------------------------

def reduction(gen):
    return gen.choice(("", " reduction = mean", " reduction = sum"))


@op("kiln.mse_loss")
def mse_loss(gen):
    x = gen.bounded(gen.operand(), 20.0)
    t = gen.bounded(gen.of_shape(x.shape, x.dtype), 20.0)
    red = reduction(gen)
    scale = numel(x.shape) if "sum" in red else 1
    return gen.emit("kiln.mse_loss", [x, t], [gen.new_value((), x.dtype, active(x, t), 0, scale * (x.mag + t.mag) ** 2)],
                    f"kiln.mse_loss {{0}}, {{1}}{red} : {x.type}")


@op("kiln.binary_cross_entropy")
def binary_cross_entropy(gen):
    x = gen.bounded(gen.operand(), 20.0)
    t = gen.of_shape(x.shape, x.dtype, prob=True)
    red = reduction(gen)
    scale = numel(x.shape) if "sum" in red else 1
    return gen.emit("kiln.binary_cross_entropy", [x, t],
                    [gen.new_value((), x.dtype, active(x, t), 0, scale * (x.mag + 1))],
                    f"kiln.binary_cross_entropy {{0}}, {{1}}{red} : {x.type}")


def ce_attrs(gen, classes):
    text = reduction(gen)
    text += opt(gen, f" label_smoothing = {gen.choice((0.0, 0.1, 0.25))}")
    if gen.chance(0.3):
        text += f" ignore_index = {gen.choice((-100, gen.rng.randrange(classes)))}"
    return text


@op("kiln.cross_entropy", 1.5)
def cross_entropy(gen):
    x = gen.pick(lambda v: v.is_float() and v.rank == 2 and numel(v.shape) <= 512)
    if x is None:
        x = gen.of_shape((gen.rng.randint(1, 8), gen.rng.randint(2, 12)), gen.float_dtype())
    x = gen.bounded(x, 20.0)
    n, c = x.shape
    labels = gen.of_shape((n,), "i32", bound=c)
    red = ce_attrs(gen, c)
    scale = n if "sum" in red else 1
    return gen.emit("kiln.cross_entropy", [x, labels],
                    [gen.new_value((), x.dtype, active(x, labels), 0, scale * (2 * x.mag + math.log(c)))],
                    f"kiln.cross_entropy {{0}}, {{1}}{red} : {x.type}, {labels.type}")


@op("kiln.embedding", 1.5)
def embedding(gen):
    idx = gen.pick(lambda v: v.dtype == "i32" and v.bound is not None and numel(v.shape) <= 64)
    if idx is None:
        shape = gen.shape(gen.rng.randint(0, 2), 32)
        idx = gen.leaf(shape, "i32", bound=gen.rng.randint(1, 10))
    v = idx.bound + gen.choice((0, 0, 1, 3))
    d = gen.choice((1, 2, 4, 8, 16))
    table = gen.bounded(gen.of_shape((v, d), gen.float_dtype()), 20.0)
    shape = idx.shape + (d,)
    return gen.emit("kiln.embedding", [table, idx], [gen.derived(table, shape, active=active(table, idx))],
                    f"kiln.embedding {{0}}, {{1}} : {table.type}, {idx.type}")


# --- convolution and pooling ------------------------------------------------

def pool_params(gen, h, w):
    """(kernel, stride, padding) of a pooling window that fits H x W."""
    kh, kw = gen.rng.randint(1, min(3, h)), gen.rng.randint(1, min(3, w))
    stride = [gen.rng.randint(1, 3), gen.rng.randint(1, 3)]
    padding = [gen.rng.randint(0, kh // 2), gen.rng.randint(0, kh // 2),
               gen.rng.randint(0, kw // 2), gen.rng.randint(0, kw // 2)]
    oh = (h + padding[0] + padding[1] - kh) // stride[0] + 1
    ow = (w + padding[2] + padding[3] - kw) // stride[1] + 1
    return [kh, kw], stride, padding, oh, ow


def window_attrs(gen, stride, padding):
    text = ""
    if stride != [1, 1] or gen.chance(0.3):
        text += f" stride = {dims_text(stride)}"
    if any(padding) or gen.chance(0.3):
        text += f" padding = {dims_text(padding)}"
    return text


def pool(name):
    @op(name)
    def generate(gen):
        x = rank4(gen)
        layout = gen.choice(("nchw", "nhwc"))
        n, c, h, w = spatial(layout, x.shape)
        kernel, stride, padding, oh, ow = pool_params(gen, h, w)
        attrs = window_attrs(gen, stride, padding)
        if name == "kiln.avg_pool2d" and gen.chance(0.5):
            attrs += " count_include_pad"
        shape = activation_shape(layout, n, c, oh, ow)
        return gen.emit(name, [x], [gen.derived(x, shape, lo=min(x.lo, 0), hi=max(x.hi, 0))],
                        f"{name} {{0}} layout = {layout} kernel = {dims_text(kernel)}{attrs} : {x.type}")
    return generate


pool("kiln.max_pool2d")
pool("kiln.avg_pool2d")


def conv_params(gen, c, h, w):
    """(filter KH, KW, O, groups, stride, padding, dilation, OH, OW)."""
    groups = gen.choice([g for g in (1, 1, 1, 2, 3, c) if c % g == 0])
    o = groups * gen.rng.randint(1, max(1, 8 // groups))
    kh, kw = gen.rng.randint(1, 3), gen.rng.randint(1, 3)
    stride = [gen.rng.randint(1, 2), gen.rng.randint(1, 2)]
    padding = [gen.rng.randint(0, 2) for _ in range(4)]
    dilation = [gen.rng.randint(1, 2), gen.rng.randint(1, 2)]
    oh = (h + padding[0] + padding[1] - dilation[0] * (kh - 1) - 1) // stride[0] + 1
    ow = (w + padding[2] + padding[3] - dilation[1] * (kw - 1) - 1) // stride[1] + 1
    if oh < 1 or ow < 1:
        raise Skip()
    return kh, kw, o, groups, stride, padding, dilation, oh, ow


def conv_attrs(gen, layout, groups, stride, padding, dilation):
    text = f" layout = {layout}" + window_attrs(gen, stride, padding)
    if dilation != [1, 1] or gen.chance(0.2):
        text += f" dilation = {dims_text(dilation)}"
    if groups != 1 or gen.chance(0.2):
        text += f" groups = {groups}"
    return text


def filter_shape(layout, o, cg, kh, kw):
    return (o, cg, kh, kw) if layout == "nchw" else (o, kh, kw, cg)


@op("kiln.conv2d", 1.5)
def conv2d(gen):
    x = rank4(gen)
    layout = gen.choice(("nchw", "nhwc"))
    n, c, h, w = spatial(layout, x.shape)
    kh, kw, o, groups, stride, padding, dilation, oh, ow = conv_params(gen, c, h, w)
    f = gen.bounded(gen.of_shape(filter_shape(layout, o, c // groups, kh, kw), x.dtype), 4.0)
    operands = [x, f]
    if gen.chance(0.5):
        operands.append(gen.bounded(gen.of_shape((o,), x.dtype), 4.0))
    shape = activation_shape(layout, n, o, oh, ow)
    if numel(shape) > 1024:
        raise Skip()
    mag = x.mag * f.mag * (c // groups) * kh * kw + (operands[2].mag if len(operands) > 2 else 0)
    return gen.emit("kiln.conv2d", operands, [gen.new_value(shape, x.dtype, active(*operands), -mag, mag)],
                    "kiln.conv2d " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + conv_attrs(gen, layout, groups, stride, padding, dilation)
                    + " : " + ", ".join(v.type for v in operands))


# --- attention, rope, recurrence --------------------------------------------

def attention_shapes(gen):
    b, h = gen.rng.randint(1, 2), gen.rng.randint(1, 3)
    tq, tk = gen.rng.randint(1, 9), gen.rng.randint(1, 9)
    d, dv = gen.choice((2, 4, 8, 16)), gen.choice((2, 4, 8, 16))
    return (b, h, tq, d), (b, h, tk, d), (b, h, tk, dv)


@op("kiln.attention", 1.5)
def attention(gen):
    q = gen.pick(lambda v: v.is_float() and v.rank == 4 and numel(v.shape) <= 512)
    qs, ks, vs = attention_shapes(gen)
    if q is None:
        q = gen.of_shape(qs, gen.float_dtype())
    b, h, tq, d = q.shape
    ks, vs = (b, h, ks[2], d), (b, h, ks[2], vs[3])
    q = gen.bounded(q, 4.0)
    k = gen.bounded(gen.of_shape(ks, q.dtype), 4.0)
    v = gen.bounded(gen.of_shape(vs, q.dtype), 20.0)
    attrs = ""
    if tq <= ks[2] and gen.chance(0.5):
        attrs += " causal"
    attrs += opt(gen, f" scale = {gen.choice((0.25, 0.5, 0.125))}")
    lse = gen.chance(0.2)
    results = [gen.new_value((b, h, tq, vs[3]), q.dtype, active(q, k, v), v.lo, v.hi)]
    if lse:
        attrs += " with_row_lse"
        # The row log-sum-exp has no gradient: the loss may use it only
        # where no parameter reaches the op (autodiff takes every result of
        # an op with an active operand as active).
        usable = not active(q, k, v)
        results.append(gen.new_value((b, h, tq), "f32", active(q, k, v), -10.0, 10.0, pool=usable))
        if not usable:
            gen.g.outputs.append(results[1])
    return gen.emit("kiln.attention", [q, k, v], results,
                    f"kiln.attention {{0}}, {{1}}, {{2}}{attrs} : {q.type}, {k.type}, {v.type}")


@op("kiln.rope")
def rope(gen):
    x = gen.pick(lambda v: v.is_float() and v.rank == 4 and v.shape[3] % 2 == 0 and numel(v.shape) <= 512)
    if x is None:
        x = gen.of_shape((gen.rng.randint(1, 2), gen.rng.randint(1, 6), gen.rng.randint(1, 3),
                          gen.choice((2, 4, 8, 16))), gen.float_dtype())
    x = gen.bounded(x, 20.0)
    attrs = opt(gen, f" theta = {gen.choice(('10000.0', '256.0', '500000.0'))}")
    attrs += opt(gen, f" position_offset = {gen.rng.randint(0, 7)}", 0.3)
    attrs += " inverse" if gen.chance(0.2) else ""
    return gen.emit("kiln.rope", [x], [gen.derived(x, x.shape, lo=-1.5 * x.mag, hi=1.5 * x.mag)],
                    f"kiln.rope {{0}}{attrs} : {x.type}")


RNN_GATES = {"lstm": (4, 4, 4, 2), "slstm": (4, 4, 4, 4), "gru": (3, 3, 4, 1), "elman": (1, 1, 1, 1)}


def rnn_shapes(gen, fn):
    gw, gr, gb, s = RNN_GATES[fn]
    b, t, nh, d = gen.rng.randint(1, 2), gen.rng.randint(1, 4), gen.rng.randint(1, 2), gen.choice((2, 4, 8))
    return ((b, t, gw, nh, d), (gr, nh, d, d), (gb, nh, d), (s, b, nh, d), (s, b, t, nh, d), (s, b, nh, d))


@op("kiln.rnn", 1.5)
def rnn(gen):
    fn = gen.choice(sorted(RNN_GATES))
    wx, r, b, s0, states, last = rnn_shapes(gen, fn)
    dtype = gen.float_dtype()
    operands = [gen.bounded(gen.of_shape(shape, dtype), 2.0) for shape in (wx, r, b, s0)]
    if fn == "slstm":
        # n (state 2) divides c: a stabilised normaliser starts positive.
        operands[3] = gen.positive(operands[3])
    mag = 4.0 if fn != "slstm" else 1e3
    results = [gen.new_value(states, dtype, active(*operands), -mag, mag),
               gen.new_value(last, dtype, active(*operands), -mag, mag)]
    types = ", ".join(v.type for v in operands)
    return gen.emit("kiln.rnn", operands, results,
                    f"kiln.rnn {{0}}, {{1}}, {{2}}, {{3}} function = {fn} : {types}")


# --- backward ops: only on values no parameter reaches -----------------------

def inactive(gen, shape, dtype, bound_to=4.0):
    return gen.bounded(gen.of_shape(shape, dtype, inactive=True), bound_to)


def backward_result(gen, shape, dtype, mag=100.0):
    return gen.new_value(shape, dtype, False, -mag, mag)


@op("kiln.avg_pool2d_backward")
def avg_pool2d_backward(gen):
    layout, dtype = gen.choice(("nchw", "nhwc")), gen.float_dtype()
    x = gen.shape(4, 256)
    n, c, h, w = spatial(layout, x)
    kernel, stride, padding, oh, ow = pool_params(gen, h, w)
    g = inactive(gen, activation_shape(layout, n, c, oh, ow), dtype)
    attrs = window_attrs(gen, stride, padding) + (" count_include_pad" if gen.chance(0.5) else "")
    return gen.emit("kiln.avg_pool2d_backward", [g], [backward_result(gen, x, dtype)],
                    f"kiln.avg_pool2d_backward {{0}} layout = {layout} kernel = {dims_text(kernel)}{attrs}"
                    f" : {g.type} -> {tensor_type(x, dtype)}")


@op("kiln.resize_backward")
def resize_backward(gen):
    x, dtype = gen.shape(gen.rng.randint(1, 4)), gen.float_dtype()
    attrs, y = resize_form(gen, x)
    g = inactive(gen, y, dtype)
    r = backward_result(gen, x, dtype, 1e3)
    return gen.emit("kiln.resize_backward", [g], [r],
                    f"kiln.resize_backward {{0}} {attrs} : {g.type} -> {r.type}")


@op("kiln.max_pool2d_backward")
def max_pool2d_backward(gen):
    x = rank4(gen, 256, inactive=True)
    layout = gen.choice(("nchw", "nhwc"))
    n, c, h, w = spatial(layout, x.shape)
    kernel, stride, padding, oh, ow = pool_params(gen, h, w)
    g = inactive(gen, activation_shape(layout, n, c, oh, ow), x.dtype)
    return gen.emit("kiln.max_pool2d_backward", [g, x], [backward_result(gen, x.shape, x.dtype)],
                    f"kiln.max_pool2d_backward {{0}}, {{1}} layout = {layout} kernel = {dims_text(kernel)}"
                    f"{window_attrs(gen, stride, padding)} : {g.type}, {x.type}")


@op("kiln.batch_norm_backward")
def batch_norm_backward(gen):
    x = gen.bounded(gen.operand(min_rank=2, max_rank=4, inactive=True), 4.0)
    dim = gen.rng.randrange(x.rank) if gen.chance(0.5) else 1
    g = inactive(gen, x.shape, x.dtype)
    gamma = inactive(gen, (x.shape[dim],), x.dtype)
    c = (x.shape[dim],)
    dim_text = f" dim = {dim}" if dim != 1 or gen.chance(0.3) else ""
    return gen.emit("kiln.batch_norm_backward", [g, x, gamma],
                    [backward_result(gen, x.shape, x.dtype, 1e3), backward_result(gen, c, x.dtype, 1e3),
                     backward_result(gen, c, x.dtype, 1e3)],
                    f"kiln.batch_norm_backward {{0}}, {{1}}, {{2}}{dim_text}{eps_attr(gen)} : {x.type}, {gamma.type}")


@op("kiln.binary_cross_entropy_backward")
def binary_cross_entropy_backward(gen):
    x = gen.bounded(gen.operand(inactive=True), 20.0)
    g = inactive(gen, (), x.dtype)
    t = gen.of_shape(x.shape, x.dtype, inactive=True, prob=True)
    return gen.emit("kiln.binary_cross_entropy_backward", [g, x, t], [backward_result(gen, x.shape, x.dtype, 4.0)],
                    f"kiln.binary_cross_entropy_backward {{0}}, {{1}}, {{2}}{reduction(gen)} : {x.type}")


def conv_backward_setup(gen):
    layout, dtype = gen.choice(("nchw", "nhwc")), gen.float_dtype()
    x = gen.shape(4, 256)
    n, c, h, w = spatial(layout, x)
    kh, kw, o, groups, stride, padding, dilation, oh, ow = conv_params(gen, c, h, w)
    attrs = conv_attrs(gen, layout, groups, stride, padding, dilation)
    return (layout, dtype, x, filter_shape(layout, o, c // groups, kh, kw),
            activation_shape(layout, n, o, oh, ow), attrs)


@op("kiln.conv2d_backward_filter")
def conv2d_backward_filter(gen):
    layout, dtype, x, f, y, attrs = conv_backward_setup(gen)
    g, xin = inactive(gen, y, dtype), inactive(gen, x, dtype)
    return gen.emit("kiln.conv2d_backward_filter", [g, xin], [backward_result(gen, f, dtype, 1e3)],
                    f"kiln.conv2d_backward_filter {{0}}, {{1}}{attrs} : {g.type}, {xin.type} -> {tensor_type(f, dtype)}")


@op("kiln.conv2d_backward_input")
def conv2d_backward_input(gen):
    layout, dtype, x, f, y, attrs = conv_backward_setup(gen)
    g, filt = inactive(gen, y, dtype), inactive(gen, f, dtype)
    return gen.emit("kiln.conv2d_backward_input", [g, filt], [backward_result(gen, x, dtype, 1e3)],
                    f"kiln.conv2d_backward_input {{0}}, {{1}}{attrs} : {g.type}, {filt.type} -> {tensor_type(x, dtype)}")


@op("kiln.cross_entropy_backward")
def cross_entropy_backward(gen):
    dtype = gen.float_dtype()
    n, c = gen.rng.randint(1, 8), gen.rng.randint(2, 12)
    g = inactive(gen, (), dtype)
    logits = inactive(gen, (n, c), dtype, 20.0)
    labels = gen.of_shape((n,), "i32", bound=c)
    return gen.emit("kiln.cross_entropy_backward", [g, logits, labels], [backward_result(gen, (n, c), dtype, 4.0)],
                    f"kiln.cross_entropy_backward {{0}}, {{1}}, {{2}}{ce_attrs(gen, c)} : {logits.type}, {labels.type}")


@op("kiln.embedding_backward")
def embedding_backward(gen):
    idx = gen.pick(lambda v: v.dtype == "i32" and v.bound is not None and numel(v.shape) <= 64)
    if idx is None:
        idx = gen.leaf(gen.shape(gen.rng.randint(0, 2), 32), "i32", bound=gen.rng.randint(1, 10))
    v, d, dtype = idx.bound + gen.choice((0, 1)), gen.choice((1, 2, 4, 8)), gen.float_dtype()
    g = inactive(gen, idx.shape + (d,), dtype)
    return gen.emit("kiln.embedding_backward", [g, idx], [backward_result(gen, (v, d), dtype, 1e3)],
                    f"kiln.embedding_backward {{0}}, {{1}} : {g.type}, {idx.type} -> {tensor_type((v, d), dtype)}")


@op("kiln.layer_norm_backward")
def layer_norm_backward(gen):
    x = gen.bounded(gen.operand(min_rank=1, inactive=True), 4.0)
    k = gen.rng.randint(1, min(2, x.rank))
    norm = x.shape[x.rank - k:]
    g = inactive(gen, x.shape, x.dtype)
    operands = [g, x] + ([inactive(gen, norm, x.dtype)] if gen.chance(0.6) else [])
    dims = f" dims = {k}" if k > 1 or gen.chance(0.3) else ""
    types = ", ".join(v.type for v in operands[1:])
    return gen.emit("kiln.layer_norm_backward", operands,
                    [backward_result(gen, x.shape, x.dtype, 1e3), backward_result(gen, norm, x.dtype, 1e3),
                     backward_result(gen, norm, x.dtype, 1e3)],
                    "kiln.layer_norm_backward " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f"{dims}{eps_attr(gen)} : {types}")


@op("kiln.rms_norm_backward")
def rms_norm_backward(gen):
    x = gen.bounded(gen.operand(min_rank=1, inactive=True), 4.0)
    g = inactive(gen, x.shape, x.dtype)
    operands = [g, x] + ([inactive(gen, x.shape[-1:], x.dtype)] if gen.chance(0.6) else [])
    types = ", ".join(v.type for v in operands[1:])
    return gen.emit("kiln.rms_norm_backward", operands,
                    [backward_result(gen, x.shape, x.dtype, 1e3), backward_result(gen, x.shape[-1:], x.dtype, 1e3)],
                    "kiln.rms_norm_backward " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f"{eps_attr(gen)} : {types}")


@op("kiln.group_norm_backward")
def group_norm_backward(gen):
    x = gen.bounded(gen.operand(min_rank=2, max_rank=4, inactive=True), 4.0)
    dim, dim_text = group_norm_dim(gen, x)
    c = (x.shape[dim],)
    g = inactive(gen, x.shape, x.dtype)
    operands = [g, x] + ([inactive(gen, c, x.dtype)] if gen.chance(0.6) else [])
    types = ", ".join(v.type for v in operands[1:])
    return gen.emit("kiln.group_norm_backward", operands,
                    [backward_result(gen, x.shape, x.dtype, 1e3), backward_result(gen, c, x.dtype, 1e3),
                     backward_result(gen, c, x.dtype, 1e3)],
                    "kiln.group_norm_backward " + ", ".join(f"{{{i}}}" for i in range(len(operands)))
                    + f" groups = {group_count(gen, x.shape[dim])}{dim_text}{eps_attr(gen)} : {types}")


@op("kiln.attention_backward")
def attention_backward(gen):
    qs, ks, vs = attention_shapes(gen)
    dtype = gen.float_dtype()
    q, k, v = (inactive(gen, s, dtype) for s in (qs, ks, vs))
    out_shape = qs[:3] + vs[3:]
    out, dout = inactive(gen, out_shape, dtype), inactive(gen, out_shape, dtype)
    attrs = " causal" if qs[2] <= ks[2] and gen.chance(0.5) else ""
    attrs += opt(gen, f" scale = {gen.choice((0.25, 0.5))}")
    return gen.emit("kiln.attention_backward", [q, k, v, out, dout],
                    [backward_result(gen, qs, dtype, 1e3), backward_result(gen, ks, dtype, 1e3),
                     backward_result(gen, vs, dtype, 1e3)],
                    f"kiln.attention_backward {{0}}, {{1}}, {{2}}, {{3}}, {{4}}{attrs}"
                    f" : {q.type}, {k.type}, {v.type}, {out.type}")


@op("kiln.rnn_backward")
def rnn_backward(gen):
    fn = gen.choice(sorted(RNN_GATES))
    shapes = rnn_shapes(gen, fn)
    dtype = gen.float_dtype()
    wx, r, b, s0, states, dstates = (inactive(gen, s, dtype, 2.0) for s in shapes[:5] + (shapes[4],))
    dlast = inactive(gen, shapes[5], dtype, 2.0)
    if fn == "slstm":
        s0 = gen.positive(s0)
    operands = [wx, r, b, s0, states, dstates, dlast]
    results = [backward_result(gen, shape, dtype, 1e3) for shape in shapes[:4]]
    return gen.emit("kiln.rnn_backward", operands, results,
                    "kiln.rnn_backward {0}, {1}, {2}, {3}, {4}, {5}, {6} function = " + fn
                    + f" : {wx.type}, {r.type}, {b.type}, {s0.type}, {states.type}")
