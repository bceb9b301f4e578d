//===- RecurrentImporters.cpp - ONNX LSTM, GRU and RNN onto kiln.rnn ------===//
//
// kiln.rnn takes the input projection Wx [B, T, G, 1, H] (one head of size
// hidden_size), the recurrent matrices R [G, 1, H, H] with
// (R_g h)[d] = sum_p R[g, 0, d, p] h[p] (ONNX's H * R^T, so ONNX's rows are
// kiln's d), biases [Gb, 1, H] and initial states [S, B, 1, H]. ONNX's gate
// orders are reordered to kiln's:
//
//   LSTM  ONNX i o f c      -> kiln i f z o (z = c); bias Wb + Rb
//   GRU   ONNX z r h        -> kiln Wx [r, z, h], R [h, r, z],
//                              b [Rb_h, Wb_r + Rb_r, Wb_z + Rb_z, Wb_h]
//                              (kiln's GRU is linear_before_reset = 1)
//   RNN   one gate, tanh    -> kiln elman
//
// The default activations only; reverse runs flip time; bidirectional runs
// both directions and stacks them as ONNX's num_directions dimension.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

namespace mlir::kiln::onnx_import {
namespace {

enum class Cell { Lstm, Gru, Rnn };

struct CellInfo {
  int64_t gates;  // ONNX gates in W and R
  int64_t states; // kiln states
  RnnFunction function;
  llvm::SmallVector<llvm::StringRef> activations;
};

CellInfo infoOf(Cell cell) {
  switch (cell) {
  case Cell::Lstm:
    return {4, 2, RnnFunction::lstm, {"Sigmoid", "Tanh", "Tanh"}};
  case Cell::Gru:
    return {3, 1, RnnFunction::gru, {"Sigmoid", "Tanh"}};
  case Cell::Rnn:
    return {1, 1, RnnFunction::elman, {"Tanh"}};
  }
  llvm_unreachable("unknown cell");
}

/// Rows [g*H, (g+1)*H) of `m` ([G*H, ...]) for each g in `order`, stacked
/// as [order.size(), H, ...].
Value gates(OnnxNode &node, Value m, int64_t hidden,
            llvm::ArrayRef<int64_t> order) {
  auto type = KilnBuilder::typeOf(m);
  llvm::SmallVector<Value> pieces;
  for (int64_t g : order) {
    llvm::SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
        step(type.getRank(), 1);
    start[0] = g * hidden;
    limit[0] = (g + 1) * hidden;
    pieces.push_back(node.kb().slice(m, start, limit, step));
  }
  Value joined =
      pieces.size() == 1
          ? pieces.front()
          : node.builder().create<ConcatOp>(node.loc(), pieces, 0).getResult();
  llvm::SmallVector<int64_t> shape = {static_cast<int64_t>(order.size()),
                                      hidden};
  llvm::append_range(shape, type.getShape().drop_front());
  return node.reshape(joined, shape);
}

/// Slice [d] of a [dirs, ...] value, without its leading dimension.
Value direction(OnnxNode &node, Value v, int64_t d) {
  auto type = KilnBuilder::typeOf(v);
  llvm::SmallVector<int64_t> start(type.getRank(), 0), limit(type.getShape()),
      step(type.getRank(), 1);
  start[0] = d;
  limit[0] = d + 1;
  Value s = node.kb().slice(v, start, limit, step);
  return node.reshape(s, type.getShape().drop_front());
}

LogicalResult importRecurrent(OnnxNode &node, Cell cell) {
  CellInfo info = infoOf(cell);
  Value x = node.input(0), w = node.input(1), r = node.input(2);
  if (!x || !w || !r)
    return failure();
  auto tx = KilnBuilder::typeOf(x);
  if (!llvm::isa<FloatType>(tx.getElementType()))
    return node.unsupported("an integer " + node.opType());
  int64_t hidden = node.intAttr("hidden_size", 0);
  int64_t layout = node.intAttr("layout", 0);
  std::string dir = node.stringAttr("direction", "forward");
  if (node.hasAttr("clip"))
    return node.unsupported("clip");
  if (node.intAttr("input_forget", 0) != 0)
    return node.unsupported("input_forget = 1");
  if (node.hasAttr("activation_alpha") || node.hasAttr("activation_beta"))
    return node.unsupported("activation_alpha/activation_beta");
  int64_t dirs = dir == "bidirectional" ? 2 : 1;
  if (dir != "forward" && dir != "reverse" && dir != "bidirectional")
    return node.unsupported("direction = '" + dir + "'");
  std::string activationsText;
  if (node.hasAttr("activations")) {
    const onnx::AttributeProto *attr = nullptr;
    for (const auto &a : node.proto().attribute())
      if (a.name() == "activations")
        attr = &a;
    node.ignoreAttr("activations");
    if (attr->strings_size() !=
        static_cast<int>(info.activations.size() * dirs))
      return node.unsupported("these activations");
    for (int i = 0; i < attr->strings_size(); ++i)
      if (attr->strings(i) != info.activations[i % info.activations.size()])
        return node.unsupported("the activation '" + attr->strings(i) + "'");
  }
  if (cell == Cell::Gru && node.intAttr("linear_before_reset", 0) != 1)
    return node.unsupported("linear_before_reset = 0 (kiln's GRU applies the "
                            "reset gate after the recurrent matmul)");
  if (node.hasInput(4))
    return node.unsupported("sequence_lens");
  if (cell == Cell::Lstm && node.hasInput(7))
    return node.unsupported("peepholes (input P)");
  if (tx.getRank() != 3)
    return node.emitError() << node.opType() << " needs a rank-3 X";
  int64_t seq = layout == 0 ? tx.getDimSize(0) : tx.getDimSize(1);
  int64_t batch = layout == 0 ? tx.getDimSize(1) : tx.getDimSize(0);
  if (hidden <= 0)
    hidden = KilnBuilder::typeOf(r).getDimSize(2);
  auto tw = KilnBuilder::typeOf(w);
  if (tw.getRank() != 3 || tw.getDimSize(0) != dirs ||
      tw.getDimSize(1) != info.gates * hidden)
    return node.emitError() << node.opType() << "'s W must be [" << dirs << ", "
                            << info.gates * hidden << ", input]";
  auto expect = [&](Value v, llvm::ArrayRef<int64_t> shape,
                    llvm::StringRef what) -> LogicalResult {
    if (v && (KilnBuilder::typeOf(v).getShape() != shape ||
              KilnBuilder::elementOf(v) != tx.getElementType()))
      return node.emitError() << node.opType() << "'s " << what << " is "
                              << KilnBuilder::typeOf(v) << ", expected the "
                              << "shape [" << shape << "] of X's type";
    return success();
  };
  int64_t inputSize = tx.getDimSize(2);
  Value biasIn = node.hasInput(3) ? node.input(3) : Value();
  Value h0In = node.hasInput(5) ? node.input(5) : Value();
  Value c0In = cell == Cell::Lstm && node.hasInput(6) ? node.input(6) : Value();
  if (failed(expect(w, {dirs, info.gates * hidden, inputSize}, "W")) ||
      failed(expect(r, {dirs, info.gates * hidden, hidden}, "R")) ||
      failed(expect(biasIn, {dirs, 2 * info.gates * hidden}, "B")) ||
      failed(expect(h0In, {dirs, batch, hidden}, "initial_h")) ||
      failed(expect(c0In, {dirs, batch, hidden}, "initial_c")))
    return failure();
  KilnBuilder kb = node.kb();
  OpBuilder &b = node.builder();
  Location loc = node.loc();
  Type element = tx.getElementType();
  // X as [B, T, I].
  Value xb = layout == 0 ? kb.transpose(x, {1, 0, 2}) : x;

  Value bias = node.hasInput(3) ? node.input(3) : Value();
  Value h0 = node.hasInput(5) ? node.input(5) : Value();
  Value c0 = cell == Cell::Lstm && node.hasInput(6) ? node.input(6) : Value();
  if ((node.hasInput(3) && !bias) || (node.hasInput(5) && !h0) ||
      (cell == Cell::Lstm && node.hasInput(6) && !c0))
    return failure();

  llvm::SmallVector<int64_t> wxOrder, rOrder;
  switch (cell) {
  case Cell::Lstm:
    wxOrder = rOrder = {0, 2, 3, 1};
    break;
  case Cell::Gru:
    wxOrder = {1, 0, 2};
    rOrder = {2, 1, 0};
    break;
  case Cell::Rnn:
    wxOrder = rOrder = {0};
    break;
  }
  int64_t gw = wxOrder.size();
  llvm::SmallVector<Value> ys, lastH, lastC;
  for (int64_t d = 0; d < dirs; ++d) {
    bool reverse = dir == "reverse" || d == 1;
    Value wd = direction(node, w, d), rd = direction(node, r, d);
    Value input =
        reverse
            ? b.create<FlipOp>(loc, xb, llvm::ArrayRef<int64_t>{1}).getResult()
            : xb;
    // Wx = X W^T, its gates reordered: [B, T, Gw*H] -> [B, T, Gw, 1, H].
    Value wOrdered = gates(node, wd, hidden, wxOrder); // [Gw, H, I]
    wOrdered = node.reshape(
        wOrdered, {gw * hidden, KilnBuilder::typeOf(wd).getDimSize(1)});
    Value wx = kb.matmul(
        input,
        node.reshape(kb.transpose(wOrdered, {1, 0}),
                     {1, KilnBuilder::typeOf(wd).getDimSize(1), gw * hidden}));
    wx = node.reshape(wx, {batch, seq, gw, 1, hidden});
    Value rk =
        node.reshape(gates(node, rd, hidden, rOrder), {gw, 1, hidden, hidden});
    // Biases.
    Value bk;
    auto zerosH = RankedTensorType::get({hidden}, element);
    auto piece = [&](int64_t half, int64_t g) -> Value {
      if (!bias)
        return node.splat(zerosH, 0.0);
      Value bd = direction(node, bias, d); // [2*G*H]
      return kb.slice(bd, {(half * info.gates + g) * hidden},
                      {(half * info.gates + g + 1) * hidden}, {1});
    };
    llvm::SmallVector<Value> biasPieces;
    if (cell == Cell::Gru) {
      // ONNX z=0, r=1, h=2.
      biasPieces = {piece(1, 2), kb.add(piece(0, 1), piece(1, 1)),
                    kb.add(piece(0, 0), piece(1, 0)), piece(0, 2)};
    } else {
      for (int64_t g : wxOrder)
        biasPieces.push_back(kb.add(piece(0, g), piece(1, g)));
    }
    bk = node.reshape(b.create<ConcatOp>(loc, biasPieces, 0).getResult(),
                      {static_cast<int64_t>(biasPieces.size()), 1, hidden});
    // Initial states [S, B, 1, H].
    auto stateType = RankedTensorType::get({1, batch, 1, hidden}, element);
    auto initial = [&](Value v) -> Value {
      if (!v)
        return node.splat(stateType, 0.0);
      return node.reshape(direction(node, v, d), {1, batch, 1, hidden});
    };
    llvm::SmallVector<Value> states = {initial(h0)};
    if (cell == Cell::Lstm)
      states.push_back(initial(c0));
    Value s0 = states.size() == 1
                   ? states.front()
                   : b.create<ConcatOp>(loc, states, 0).getResult();
    auto rnn = b.create<RnnOp>(loc, wx, rk, bk, s0, info.function);
    // h of every step: [S, B, T, 1, H] -> [B, T, H].
    Value all = rnn.getStates();
    Value h = kb.slice(all, {0, 0, 0, 0, 0}, {1, batch, seq, 1, hidden},
                       {1, 1, 1, 1, 1});
    h = node.reshape(h, {batch, seq, hidden});
    if (reverse)
      h = b.create<FlipOp>(loc, h, llvm::ArrayRef<int64_t>{1});
    ys.push_back(h);
    Value last = rnn.getLastStates();
    lastH.push_back(node.reshape(
        kb.slice(last, {0, 0, 0, 0}, {1, batch, 1, hidden}, {1, 1, 1, 1}),
        {1, batch, hidden}));
    if (cell == Cell::Lstm)
      lastC.push_back(node.reshape(
          kb.slice(last, {1, 0, 0, 0}, {2, batch, 1, hidden}, {1, 1, 1, 1}),
          {1, batch, hidden}));
  }
  // Y: [T, dirs, B, H] (layout 0) or [B, T, dirs, H] (layout 1).
  llvm::SmallVector<Value> stacked;
  for (Value h : ys)
    stacked.push_back(node.reshape(h, {batch, seq, 1, hidden}));
  Value y = stacked.size() == 1
                ? stacked.front()
                : b.create<ConcatOp>(loc, stacked, 2).getResult();
  if (layout == 0)
    y = kb.transpose(y, {1, 2, 0, 3});
  node.setResult(0, y);
  auto join = [&](llvm::ArrayRef<Value> parts) -> Value {
    Value v = parts.size() == 1 ? parts.front()
                                : b.create<ConcatOp>(loc, parts, 0).getResult();
    return layout == 0 ? v : kb.transpose(v, {1, 0, 2});
  };
  node.setResult(1, join(lastH));
  if (cell == Cell::Lstm)
    node.setResult(2, join(lastC));
  return success();
}

} // namespace

void registerRecurrentImporters(OpImporterRegistry &registry) {
  registry.add(
      "LSTM", [](OnnxNode &node) { return importRecurrent(node, Cell::Lstm); });
  registry.add("GRU",
               [](OnnxNode &node) { return importRecurrent(node, Cell::Gru); });
  registry.add("RNN",
               [](OnnxNode &node) { return importRecurrent(node, Cell::Rnn); });
}

} // namespace mlir::kiln::onnx_import
