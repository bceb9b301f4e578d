//===- ScalarEmitter.cpp - C statements for pointwise kiln ops ------------===//
//
// Each supported op becomes one `const <type> name = <expression>;` (a few
// more statements for the gathers), computed at the element the op's result
// is evaluated at. The formulas follow the ops' ODS descriptions and the
// reference evaluators in compiler/interpreter (ElementwiseEval.cpp,
// ShapeEval.cpp, NNEval.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/ScalarEmitter.h"

#include "compiler/transforms/OpClasses.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>

namespace mlir::kiln::codegen {

//===----------------------------------------------------------------------===//
// Types and literals
//===----------------------------------------------------------------------===//

static bool isFloatType(Type t) { return t.isF32() || t.isBF16() || t.isF16(); }
static bool isKilnType(Type t) {
  return isFloatType(t) || t.isInteger(32) || t.isInteger(1);
}

llvm::StringRef storageCType(Type t) {
  if (t.isF32())
    return "float";
  if (t.isBF16())
    return "__nv_bfloat16";
  if (t.isF16())
    return "__half";
  if (t.isInteger(32))
    return "int";
  return "bool";
}

llvm::StringRef computeCType(Type t) {
  if (isFloatType(t))
    return "float";
  if (t.isInteger(32))
    return "int";
  return "bool";
}

int64_t storageBytes(Type t) {
  if (t.isF32() || t.isInteger(32))
    return 4;
  if (t.isBF16() || t.isF16())
    return 2;
  return 1;
}

std::string floatLiteral(float value) {
  if (std::isnan(value))
    return "__int_as_float(0x7fc00000)";
  if (std::isinf(value))
    return value > 0 ? "__int_as_float(0x7f800000)"
                     : "__int_as_float(0xff800000)";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.9g", value);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text + "f";
}

std::string doubleLiteral(double value) {
  if (std::isnan(value))
    return "__longlong_as_double(0x7ff8000000000000LL)";
  if (std::isinf(value))
    return value > 0 ? "__longlong_as_double(0x7ff0000000000000LL)"
                     : "__longlong_as_double(0xfff0000000000000LL)";
  std::string text;
  llvm::raw_string_ostream(text) << llvm::format("%.17g", value);
  if (text.find_first_of(".e") == std::string::npos)
    text += ".0";
  return text;
}

std::string indexLiteral(int64_t value) {
  std::string text = std::to_string(value);
  if (value > 2147483647LL || value < -2147483647LL)
    text += "LL";
  return text;
}

static std::string intLiteral(int64_t value) {
  if (value == -2147483648LL)
    return "(-2147483647 - 1)";
  return std::to_string(value);
}

static RankedTensorType tensorType(Value v) {
  return cast<RankedTensorType>(v.getType());
}
static Type elementType(Value v) { return tensorType(v).getElementType(); }

/// Rounds an f32 compute value to a narrower float result type.
static std::string roundTo(Type t, const std::string &expr) {
  if (t.isBF16())
    return "kiln_round_bf16(" + expr + ")";
  if (t.isF16())
    return "kiln_round_f16(" + expr + ")";
  return expr;
}

/// A float of element type `t` as an f32 literal (the value rounded to `t`
/// to nearest even, as a pad value or the bounds of a random op are).
static float roundedToType(double value, Type t) {
  float f = static_cast<float>(value);
  if (t.isF32())
    return f;
  llvm::APFloat number(f);
  bool losesInfo = false;
  number.convert(t.isBF16() ? llvm::APFloat::BFloat()
                            : llvm::APFloat::IEEEhalf(),
                 llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  number.convert(llvm::APFloat::IEEEsingle(),
                 llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return number.convertToFloat();
}

static std::string zeroOf(Type t) {
  if (isFloatType(t))
    return "0.0f";
  return t.isInteger(32) ? "0" : "false";
}

/// The literal of one element of a constant, in compute type.
static std::string elementLiteral(Attribute attr, Type t) {
  if (auto f = dyn_cast<FloatAttr>(attr))
    return floatLiteral(static_cast<float>(f.getValueAsDouble()));
  auto i = cast<IntegerAttr>(attr);
  if (t.isInteger(1))
    return i.getValue().getBoolValue() ? "true" : "false";
  return intLiteral(i.getValue().getSExtValue());
}

//===----------------------------------------------------------------------===//
// Op support
//===----------------------------------------------------------------------===//

bool ScalarEmitter::supportsOp(Operation *op, std::string *why) {
  auto fail = [&](const std::string &reason) {
    if (why)
      *why = reason;
    return false;
  };
  bool known =
      isa<ConstantOp, IotaOp, RandomUniformOp, RandomNormalOp, NegOp, AbsOp,
          SignOp, ReluOp, ExpOp, LogOp, SqrtOp, RsqrtOp, SinOp, CosOp, TanhOp,
          SigmoidOp, SiluOp, GeluOp, LeakyReluOp, FloorOp, CeilOp, RoundOp,
          CastOp, AddOp, SubOp, MulOp, DivOp, PowOp, MaxOp, MinOp, CompareOp,
          SelectOp, BroadcastToOp, ReshapeOp, TransposeOp, SliceOp, FlipOp,
          PadOp, ConcatOp, TriuOp, TrilOp, RopeOp, EmbeddingOp, DropoutOp>(op);
  if (!known)
    return fail("'" + op->getName().getStringRef().str() +
                "' is not a pointwise or index-remapping op");
  SmallVector<Type> types(op->getOperandTypes());
  llvm::append_range(types, op->getResultTypes());
  for (Type t : types) {
    auto tensor = dyn_cast<RankedTensorType>(t);
    if (!tensor || !tensor.hasStaticShape() ||
        !isKilnType(tensor.getElementType()))
      return fail("'" + op->getName().getStringRef().str() +
                  "' has a type that is not a static kiln tensor");
  }
  if (auto constant = dyn_cast<ConstantOp>(op))
    if (!isa<DenseElementsAttr>(constant.getValue()))
      return fail("'kiln.constant' needs a dense value");
  return true;
}

SmallVector<Value> ScalarEmitter::bufferOperands(Operation *op) {
  if (isa<TransposeOp, SliceOp, FlipOp, PadOp, ConcatOp, ReshapeOp, RopeOp,
          EmbeddingOp>(op))
    return SmallVector<Value>(op->getOperands());
  return {};
}

//===----------------------------------------------------------------------===//
// Indices
//===----------------------------------------------------------------------===//

ScalarEmitter::ScalarEmitter(ArrayRef<int64_t> rootShape, std::string prefix,
                             std::string indexType)
    : rootShape(rootShape), prefix(std::move(prefix)),
      indexType(std::move(indexType)), coordUsed(rootShape.size(), false) {}

void ScalarEmitter::setIndex(ArrayRef<std::string> newCoords,
                             std::string newFlat) {
  assert(newCoords.size() == rootShape.size() && "one coordinate per root dim");
  coords.assign(newCoords.begin(), newCoords.end());
  flat = std::move(newFlat);
}

void ScalarEmitter::clearUsage() {
  coordUsed.assign(rootShape.size(), false);
  flatUsed = false;
}

std::string ScalarEmitter::rootCoord(size_t dim) {
  if (rootShape[dim] == 1)
    return "0";
  coordUsed[dim] = true;
  return coords[dim];
}

/// Row-major flat index of `coords` in `shape` (size-1 dims contribute 0).
static std::string flatFromCoords(ArrayRef<int64_t> shape,
                                  ArrayRef<std::string> coords) {
  std::string text;
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1 && coords[d] != "0") {
      std::string term = stride == 1
                             ? coords[d]
                             : "(" + coords[d] + ") * " + indexLiteral(stride);
      text = text.empty() ? term : term + " + " + text;
    }
    stride *= shape[d];
  }
  return text.empty() ? "0" : text;
}

std::string ScalarEmitter::rootFlat() {
  if (!flat.empty()) {
    flatUsed = true;
    return flat;
  }
  SmallVector<std::string> all;
  for (size_t d = 0; d < rootShape.size(); ++d)
    all.push_back(rootCoord(d));
  return flatFromCoords(rootShape, all);
}

static SmallVector<int64_t> withoutOnes(ArrayRef<int64_t> shape) {
  SmallVector<int64_t> out;
  for (int64_t d : shape)
    if (d != 1)
      out.push_back(d);
  return out;
}

SmallVector<std::string> ScalarEmitter::projectedCoords(Value value) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  SmallVector<std::string> out;
  size_t offset = rootShape.size() - shape.size();
  for (size_t d = 0; d < shape.size(); ++d)
    out.push_back(shape[d] == 1 ? std::string("0") : rootCoord(offset + d));
  return out;
}

std::string ScalarEmitter::projectedFlat(Value value) {
  ArrayRef<int64_t> shape = tensorType(value).getShape();
  // Same elements in the same order as the root: the root's flat index.
  if (withoutOnes(shape) == withoutOnes(rootShape))
    return rootFlat();
  return flatFromCoords(shape, projectedCoords(value));
}

std::string ScalarEmitter::flatOf(ArrayRef<int64_t> shape, const Index &index) {
  if (!index.flat.empty())
    return index.flat;
  return flatFromCoords(shape, index.coords);
}

std::string ScalarEmitter::loadAtFlat(Value buffer, const std::string &at) {
  const Buffer &b = buffers.find(buffer)->second;
  if (!b.lane.empty() && !flat.empty() && at == flat)
    return b.lane;
  return "kiln_load(" + b.pointer + "[" + at + "])";
}

std::string ScalarEmitter::loadProjected(Value buffer, Value position) {
  const Buffer &b = buffers.find(buffer)->second;
  // The lane register holds the element at the root's flat index.
  if (!b.lane.empty() && !flat.empty() &&
      withoutOnes(tensorType(position).getShape()) == withoutOnes(rootShape))
    return b.lane;
  return loadAtFlat(buffer, projectedFlat(position));
}

std::string ScalarEmitter::load(Value buffer, const Index &index) {
  return loadAtFlat(buffer, flatOf(tensorType(buffer).getShape(), index));
}

/// Row-major coordinates in `shape` of the flat index `flat`.
static SmallVector<std::string> coordsFromFlat(ArrayRef<int64_t> shape,
                                               const std::string &flat) {
  SmallVector<std::string> coords(shape.size(), "0");
  int64_t stride = 1;
  for (size_t d = shape.size(); d-- > 0;) {
    if (shape[d] != 1) {
      std::string c = stride == 1
                          ? "(" + flat + ")"
                          : "((" + flat + ") / " + indexLiteral(stride) + ")";
      if (d > 0)
        c = "(" + c + " % " + indexLiteral(shape[d]) + ")";
      coords[d] = c;
    }
    stride *= shape[d];
  }
  return coords;
}

FailureOr<std::string> ScalarEmitter::valueAt(Value operand, const Index &index,
                                              std::string &out, int indent) {
  if (buffers.count(operand))
    return load(operand, index);
  ArrayRef<int64_t> shape = tensorType(operand).getShape();
  ScalarEmitter nested(
      shape, prefix + "at" + std::to_string(nestedCounter++) + "_", indexType);
  nested.setIndex(index.coords.empty() ? coordsFromFlat(shape, index.flat)
                                       : index.coords,
                  index.flat);
  // Buffers and bound values (single elements) read the same anywhere; a
  // lane register holds the element at the current index only.
  for (const auto &[value, buffer] : buffers)
    nested.buffers[value] = Buffer{buffer.pointer, ""};
  for (const auto &[value, expr] : bound)
    nested.bindValue(value, expr);
  // Tables (constants, rope frequencies) are indexed in their op's own
  // shape: one per op serves every position.
  nested.globalNames = globalNames;
  FailureOr<std::string> expr = nested.emit(operand, out, indent);
  globalText += nested.globalText;
  globalNames = std::move(nested.globalNames);
  return expr;
}

//===----------------------------------------------------------------------===//
// Bindings and scopes
//===----------------------------------------------------------------------===//

void ScalarEmitter::bindBuffer(Value value, std::string pointer,
                               std::string lane) {
  buffers[value] = Buffer{std::move(pointer), std::move(lane)};
}

void ScalarEmitter::bindValue(Value value, std::string expr) {
  bound[value] = expr;
  names[value] = std::move(expr);
}

bool ScalarEmitter::isBound(Value value) const {
  return bound.count(value) || buffers.count(value);
}

void ScalarEmitter::resetScope() { names = bound; }

std::string ScalarEmitter::freshName(Operation *op) {
  std::string name = prefix;
  if (op) {
    llvm::StringRef opName = op->getName().stripDialect();
    name += opName.str() + "_";
  } else {
    name += "in_";
  }
  return name + std::to_string(counter++);
}

//===----------------------------------------------------------------------===//
// Emission
//===----------------------------------------------------------------------===//

FailureOr<std::string> ScalarEmitter::emit(Value value, std::string &out,
                                           int indent) {
  if (auto it = names.find(value); it != names.end())
    return it->second;
  // Collect what is missing (iteratively: chains can be long), then emit it
  // in block order so that operands come first.
  SmallVector<Value> stack = {value};
  llvm::DenseSet<Value> seen;
  SmallVector<Value> arguments;
  SmallVector<Operation *> ops;
  while (!stack.empty()) {
    Value v = stack.pop_back_val();
    if (names.count(v) || !seen.insert(v).second)
      continue;
    Operation *op = v.getDefiningOp();
    if (!op) {
      if (!buffers.count(v)) {
        Operation *owner = v.getParentBlock()->getParentOp();
        owner->emitOpError("codegen: block argument #")
            << cast<BlockArgument>(v).getArgNumber()
            << " has no buffer or value bound";
        return failure();
      }
      arguments.push_back(v);
      continue;
    }
    std::string why;
    if (!supportsOp(op, &why)) {
      op->emitOpError("codegen: ") << why;
      return failure();
    }
    ops.push_back(op);
    SmallVector<Value> remapped = bufferOperands(op);
    for (Value operand : op->getOperands()) {
      if (llvm::is_contained(remapped, operand)) {
        // Computed at the remapped positions by expression().
        if (!buffers.count(operand) &&
            (isa<BlockArgument>(operand) || !remapsWithinOperands(op))) {
          op->emitOpError("codegen: its data operands must be fusion inputs "
                          "(buffers), not values computed in the fusion");
          return failure();
        }
        continue;
      }
      stack.push_back(operand);
    }
  }
  std::string pad(indent, ' ');
  llvm::sort(arguments, [](Value a, Value b) {
    return cast<BlockArgument>(a).getArgNumber() <
           cast<BlockArgument>(b).getArgNumber();
  });
  for (Value argument : arguments) {
    std::string name = freshName(nullptr);
    out += pad + "const " + computeCType(elementType(argument)).str() + " " +
           name + " = " + loadProjected(argument, argument) + ";\n";
    names[argument] = name;
  }
  llvm::sort(ops, [](Operation *a, Operation *b) {
    if (a->getBlock() != b->getBlock())
      return a < b; // not expected: the region is one block
    return a->isBeforeInBlock(b);
  });
  ops.erase(std::unique(ops.begin(), ops.end()), ops.end());
  for (Operation *op : ops) {
    Value result = op->getResult(0);
    // Literal constants need no statement.
    if (auto constant = dyn_cast<ConstantOp>(op)) {
      auto dense = cast<DenseElementsAttr>(constant.getValue());
      if (dense.isSplat()) {
        names[result] = elementLiteral(dense.getSplatValue<Attribute>(),
                                       elementType(result));
        continue;
      }
    }
    std::string name = freshName(op);
    FailureOr<std::string> expr = expression(op, name, out, indent);
    if (failed(expr))
      return failure();
    out += pad + "const " + computeCType(elementType(result)).str() + " " +
           name + " = " + *expr + ";\n";
    names[result] = name;
  }
  return names.lookup(value);
}

static const char *comparison(CmpPredicate predicate) {
  switch (predicate) {
  case CmpPredicate::eq:
    return "==";
  case CmpPredicate::ne:
    return "!=";
  case CmpPredicate::lt:
    return "<";
  case CmpPredicate::le:
    return "<=";
  case CmpPredicate::gt:
    return ">";
  case CmpPredicate::ge:
    return ">=";
  }
  return "==";
}

/// `a + b` for index expressions, folding zeros.
static std::string plus(const std::string &a, int64_t b) {
  if (b == 0)
    return a;
  if (a == "0")
    return indexLiteral(b);
  return "(" + a +
         (b < 0 ? " - " + indexLiteral(-b) : " + " + indexLiteral(b)) + ")";
}

/// The Philox arguments (seed, stream, offset, index) of a random op.
static std::string philoxArguments(int64_t seed, int64_t stream,
                                   const std::string &offset,
                                   const std::string &index) {
  std::string text;
  llvm::raw_string_ostream os(text);
  os << "0x" << llvm::format_hex_no_prefix(static_cast<uint64_t>(seed), 16)
     << "ULL, " << static_cast<uint32_t>(stream) << "u, "
     << (offset.empty() ? std::string("0u") : "(unsigned)(" + offset + ")")
     << ", (unsigned long long)(" << index << ")";
  return text;
}

FailureOr<std::string> ScalarEmitter::expression(Operation *op,
                                                 const std::string &name,
                                                 std::string &out, int indent) {
  std::string pad(indent, ' ');
  Value result = op->getResult(0);
  // The result's own position, computed (and its root coordinates marked as
  // used) only by the ops that need it.
  struct {
    ScalarEmitter *self;
    Value result;
    SmallVector<std::string> coordsCache;
    bool haveCoords = false;
    /// One coordinate, marking only that root dimension as used.
    std::string coord(size_t dim) {
      if (haveCoords)
        return coordsCache[dim];
      ArrayRef<int64_t> shape = tensorType(result).getShape();
      size_t offset = self->rootShape.size() - shape.size();
      return shape[dim] == 1 ? std::string("0") : self->rootCoord(offset + dim);
    }
    const SmallVector<std::string> &coords() {
      if (!haveCoords) {
        coordsCache = self->projectedCoords(result);
        haveCoords = true;
      }
      return coordsCache;
    }
  } at{this, result, {}, false};
  auto flatAt = [&] { return projectedFlat(result); };
  Type type = elementType(result);
  ArrayRef<int64_t> shape = tensorType(result).getShape();
  bool isFloat = isFloatType(type);
  bool isInt = type.isInteger(32);
  auto x = [&](unsigned i) { return operandExpr(op->getOperand(i)); };
  auto rounded = [&](const std::string &e) { return roundTo(type, e); };
  auto call = [&](const char *fn, unsigned i = 0) {
    return std::string(fn) + "(" + x(i) + ")";
  };
  auto binary = [&](const char *floatOp, const char *intFn) -> std::string {
    if (isInt)
      return std::string(intFn) + "(" + x(0) + ", " + x(1) + ")";
    return rounded(x(0) + " " + floatOp + " " + x(1));
  };

  return llvm::TypeSwitch<Operation *, FailureOr<std::string>>(op)
      // Constants and index-dependent sources.
      .Case([&](ConstantOp c) -> FailureOr<std::string> {
        auto dense = cast<DenseElementsAttr>(c.getValue());
        // Tables with inf or NaN hold bit patterns: a static initialiser
        // must be a constant expression, and CUDA C has no literal for them.
        bool bits = false;
        if (isFloat)
          for (const APFloat &v : dense.getValues<APFloat>())
            bits |= !v.isFinite();
        std::string &table = globalNames[op];
        if (table.empty()) {
          table = prefix + "const_" + std::to_string(globalCounter++);
          std::string text;
          llvm::raw_string_ostream os(text);
          os << "static __device__ const "
             << (bits ? llvm::StringRef("unsigned") : computeCType(type)) << " "
             << table << "[" << dense.getNumElements() << "] = {";
          int64_t i = 0;
          for (Attribute element : dense.getValues<Attribute>()) {
            os << (i % 8 == 0 ? "\n    " : " ");
            if (bits) {
              float f = static_cast<float>(
                  cast<FloatAttr>(element).getValueAsDouble());
              uint32_t word;
              std::memcpy(&word, &f, sizeof word);
              os << llvm::format("0x%08x", word) << "u";
            } else {
              os << elementLiteral(element, type);
            }
            os << ",";
            ++i;
          }
          os << "\n};\n";
          globalText += text;
        }
        if (bits)
          return "__uint_as_float(" + table + "[" + flatAt() + "])";
        return table + "[" + flatAt() + "]";
      })
      .Case([&](IotaOp iota) -> FailureOr<std::string> {
        std::string c = at.coord(iota.getDim());
        if (isInt)
          return "(int)(" + c + ")";
        if (type.isF32())
          return "kiln_i64_to_f32((long long)(" + c + "))";
        return std::string(type.isBF16() ? "kiln_i64_to_bf16"
                                         : "kiln_i64_to_f16") +
               "((long long)(" + c + "))";
      })
      .Case([&](RandomUniformOp r) -> FailureOr<std::string> {
        float lo = static_cast<float>(r.getLow().convertToDouble());
        float hi = static_cast<float>(r.getHigh().convertToDouble());
        std::string offset = r.getOffset() ? x(0) : "";
        return rounded(
            "kiln_random_uniform(" +
            philoxArguments(r.getSeed(), r.getStream(), offset, flatAt()) +
            ", " + floatLiteral(lo) + ", " + floatLiteral(hi) + ")");
      })
      .Case([&](RandomNormalOp r) -> FailureOr<std::string> {
        std::string offset = r.getOffset() ? x(0) : "";
        std::string v =
            "kiln_random_normal(" +
            philoxArguments(r.getSeed(), r.getStream(), offset, flatAt()) +
            ", " + doubleLiteral(r.getMean().convertToDouble()) + ", " +
            doubleLiteral(r.getStd().convertToDouble()) + ")";
        // One rounding from f64 to the element type.
        if (type.isF32())
          return "__double2float_rn(" + v + ")";
        if (type.isBF16())
          return "__bfloat162float(__double2bfloat16(" + v + "))";
        return "__half2float(__double2half(" + v + "))";
      })
      // Unary.
      .Case([&](NegOp) -> FailureOr<std::string> {
        return isInt ? call("kiln_neg_i32") : "-" + x(0);
      })
      .Case([&](AbsOp) -> FailureOr<std::string> {
        return isInt ? call("kiln_abs_i32") : call("fabsf");
      })
      .Case([&](SignOp) -> FailureOr<std::string> { return call("kiln_sign"); })
      .Case([&](ReluOp) -> FailureOr<std::string> { return call("kiln_relu"); })
      .Case([&](ExpOp) -> FailureOr<std::string> {
        return rounded(call("expf"));
      })
      .Case([&](LogOp) -> FailureOr<std::string> {
        return rounded(call("logf"));
      })
      .Case([&](SqrtOp) -> FailureOr<std::string> {
        return rounded(call("sqrtf"));
      })
      .Case([&](RsqrtOp) -> FailureOr<std::string> {
        return rounded("1.0f / sqrtf(" + x(0) + ")");
      })
      .Case([&](SinOp) -> FailureOr<std::string> {
        return rounded(call("sinf"));
      })
      .Case([&](CosOp) -> FailureOr<std::string> {
        return rounded(call("cosf"));
      })
      .Case([&](TanhOp) -> FailureOr<std::string> {
        return rounded(call("tanhf"));
      })
      .Case([&](SigmoidOp) -> FailureOr<std::string> {
        return rounded(call("kiln_sigmoid"));
      })
      .Case([&](SiluOp) -> FailureOr<std::string> {
        return rounded(call("kiln_silu"));
      })
      .Case([&](GeluOp g) -> FailureOr<std::string> {
        return rounded(call(g.getApproximate() == GeluApproximation::tanh
                                ? "kiln_gelu_tanh"
                                : "kiln_gelu"));
      })
      .Case([&](LeakyReluOp l) -> FailureOr<std::string> {
        // alpha is rounded to f32 before use.
        float alpha = static_cast<float>(l.getAlpha().convertToDouble());
        return rounded("kiln_leaky_relu(" + x(0) + ", " + floatLiteral(alpha) +
                       ")");
      })
      // floor, ceil and round of a bf16/f16 value are representable in it.
      .Case([&](FloorOp) -> FailureOr<std::string> { return call("floorf"); })
      .Case([&](CeilOp) -> FailureOr<std::string> { return call("ceilf"); })
      .Case([&](RoundOp) -> FailureOr<std::string> {
        return call("kiln_round_half_even");
      })
      .Case([&](CastOp) -> FailureOr<std::string> {
        Type from = elementType(op->getOperand(0));
        std::string v = x(0);
        if (from == type)
          return v;
        if (type.isInteger(1))
          return "(" + v + (isFloatType(from) ? " != 0.0f)" : " != 0)");
        if (from.isInteger(1))
          return "(" + v + (isFloat ? " ? 1.0f : 0.0f)" : " ? 1 : 0)");
        if (isInt) // from a float
          return "kiln_float_to_i32(" + v + ")";
        if (from.isInteger(32))
          return std::string(type.isF32()    ? "kiln_i64_to_f32"
                             : type.isBF16() ? "kiln_i64_to_bf16"
                                             : "kiln_i64_to_f16") +
                 "(" + v + ")";
        return rounded(v); // float to float: one rounding
      })
      // Binary.
      .Case([&](AddOp) -> FailureOr<std::string> {
        return binary("+", "kiln_add_i32");
      })
      .Case([&](SubOp) -> FailureOr<std::string> {
        return binary("-", "kiln_sub_i32");
      })
      .Case([&](MulOp) -> FailureOr<std::string> {
        return binary("*", "kiln_mul_i32");
      })
      .Case([&](DivOp) -> FailureOr<std::string> {
        return binary("/", "kiln_div_i32");
      })
      .Case([&](PowOp) -> FailureOr<std::string> {
        return rounded("powf(" + x(0) + ", " + x(1) + ")");
      })
      .Case([&](MaxOp) -> FailureOr<std::string> {
        if (isInt)
          return "(" + x(0) + " > " + x(1) + " ? " + x(0) + " : " + x(1) + ")";
        return "kiln_max(" + x(0) + ", " + x(1) + ")";
      })
      .Case([&](MinOp) -> FailureOr<std::string> {
        if (isInt)
          return "(" + x(0) + " < " + x(1) + " ? " + x(0) + " : " + x(1) + ")";
        return "kiln_min(" + x(0) + ", " + x(1) + ")";
      })
      .Case([&](CompareOp c) -> FailureOr<std::string> {
        return "(" + x(0) + " " + comparison(c.getPredicate()) + " " + x(1) +
               ")";
      })
      .Case([&](SelectOp) -> FailureOr<std::string> {
        return "(" + x(0) + " ? " + x(1) + " : " + x(2) + ")";
      })
      .Case([&](BroadcastToOp) -> FailureOr<std::string> { return x(0); })
      // Ops that keep the element's position.
      .Case([&](DropoutOp d) -> FailureOr<std::string> {
        double rate = d.getRate().convertToDouble();
        double scale = 1.0 / (1.0 - rate);
        std::string offset = d.getOffset() ? x(1) : "";
        // The product in f64, rounded once (as the reference does).
        return rounded(
            "(kiln_dropout_keep(" +
            philoxArguments(d.getSeed(), d.getStream(), offset, flatAt()) +
            ", " + doubleLiteral(rate) + ") ? (float)((double)" + x(0) + " * " +
            doubleLiteral(scale) + ") : 0.0f)");
      })
      .Case<TriuOp, TrilOp>([&](auto t) -> FailureOr<std::string> {
        size_t rank = shape.size();
        std::string i = at.coord(rank - 2), j = at.coord(rank - 1);
        int64_t diagonal = t.getDiagonal();
        bool upper = isa<TriuOp>(op);
        return "(((" + j + ") - (" + i + ") " + (upper ? ">= " : "<= ") +
               indexLiteral(diagonal) + ") ? " + x(0) + " : " + zeroOf(type) +
               ")";
      })
      // Index remapping: loads of the buffer operands.
      .Case([&](ReshapeOp) -> FailureOr<std::string> {
        Value input = op->getOperand(0);
        if (buffers.count(input))
          return loadProjected(input, result);
        return valueAt(input, Index{{}, projectedFlat(result)}, out, indent);
      })
      .Case([&](TransposeOp t) -> FailureOr<std::string> {
        Index in;
        in.coords.resize(shape.size());
        for (auto [k, p] : llvm::enumerate(t.getPerm()))
          in.coords[p] = at.coords()[k];
        return valueAt(op->getOperand(0), in, out, indent);
      })
      .Case([&](SliceOp s) -> FailureOr<std::string> {
        Index in;
        for (size_t d = 0; d < shape.size(); ++d) {
          std::string j = at.coords()[d];
          int64_t step = s.getStep()[d];
          std::string scaled =
              step == 1 || j == "0" ? j : "(" + j + ") * " + indexLiteral(step);
          in.coords.push_back(plus(scaled, s.getStart()[d]));
        }
        return valueAt(op->getOperand(0), in, out, indent);
      })
      .Case([&](FlipOp f) -> FailureOr<std::string> {
        Index in{at.coords(), ""};
        for (int64_t d : f.getDims())
          if (shape[d] != 1)
            in.coords[d] =
                indexLiteral(shape[d] - 1) + " - (" + at.coords()[d] + ")";
        return valueAt(op->getOperand(0), in, out, indent);
      })
      .Case([&](PadOp p) -> FailureOr<std::string> {
        Value input = op->getOperand(0);
        ArrayRef<int64_t> inShape = tensorType(input).getShape();
        Index in;
        std::string inside;
        for (size_t d = 0; d < shape.size(); ++d) {
          int64_t low = p.getLow()[d], high = p.getHigh()[d];
          std::string c = plus(at.coords()[d], -low);
          in.coords.push_back(c);
          auto also = [&](const std::string &cond) {
            inside += (inside.empty() ? "" : " && ") + cond;
          };
          if (low > 0)
            also("(" + c + ") >= 0");
          if (high > 0 || inShape[d] == 0)
            also("(" + c + ") < " + indexLiteral(inShape[d]));
        }
        double v = p.getValue().convertToDouble();
        std::string value = isFloat ? floatLiteral(roundedToType(v, type))
                            : isInt ? intLiteral(static_cast<int64_t>(v))
                                    : (v != 0 ? "true" : "false");
        if (inside.empty())
          return load(input, in);
        return "((" + inside + ") ? " + load(input, in) + " : " + value + ")";
      })
      .Case([&](ConcatOp c) -> FailureOr<std::string> {
        int64_t dim = c.getDim();
        std::string j = at.coords()[dim];
        // Innermost first: the last input is the final else.
        SmallVector<int64_t> offsets;
        int64_t offset = 0;
        for (Value input : c.getInputs()) {
          offsets.push_back(offset);
          offset += tensorType(input).getShape()[dim];
        }
        std::string text;
        for (size_t n = c.getInputs().size(); n-- > 0;) {
          Value input = c.getInputs()[n];
          Index in{at.coords(), ""};
          in.coords[dim] = plus(j, -offsets[n]);
          std::string value = load(input, in);
          if (text.empty()) {
            text = value;
            continue;
          }
          text = "((" + j + ") < " + indexLiteral(offsets[n + 1]) + " ? " +
                 value + " : " + text + ")";
        }
        return text;
      })
      .Case([&](EmbeddingOp e) -> FailureOr<std::string> {
        Value table = e.getTable(), indices = e.getIndices();
        int64_t rows = tensorType(table).getShape()[0];
        int64_t width = tensorType(table).getShape()[1];
        Index rowIndex{SmallVector<std::string>(at.coords().begin(),
                                                at.coords().end() - 1),
                       ""};
        std::string row = name + "_row";
        out +=
            pad + "const int " + row + " = " + load(indices, rowIndex) + ";\n";
        std::string column = at.coords().back();
        std::string element = width == 1
                                  ? "(" + indexType + ")" + row
                                  : "(" + indexType + ")" + row + " * " +
                                        indexLiteral(width) +
                                        (column == "0" ? "" : " + " + column);
        // Out-of-range rows read nothing and give NaN (as the reference).
        return "((" + row + " >= 0 && " + row + " < " + std::to_string(rows) +
               ") ? " + loadAtFlat(table, element) + " : " + floatLiteral(NAN) +
               ")";
      })
      .Case([&](RopeOp r) -> FailureOr<std::string> {
        Value input = op->getOperand(0);
        int64_t width = shape[3], half = width / 2;
        std::string &table = globalNames[op];
        if (table.empty()) {
          // theta^(-2i/D) in f64, as the reference computes it.
          table = prefix + "rope_freq_" + std::to_string(globalCounter++);
          double theta = r.getTheta().convertToDouble();
          std::string text = "static __device__ const double " + table + "[" +
                             std::to_string(half) + "] = {";
          for (int64_t i = 0; i < half; ++i)
            text += std::string(i % 4 == 0 ? "\n    " : " ") +
                    doubleLiteral(
                        std::pow(theta, -2.0 * double(i) / double(width))) +
                    ",";
          globalText += text + "\n};\n";
        }
        std::string d = at.coords()[3];
        std::string lower = name + "_lower", i = name + "_i",
                    base = name + "_base";
        std::string s = name + "_sin", cosine = name + "_cos";
        Index rowStart{{at.coords()[0], at.coords()[1], at.coords()[2], "0"},
                       ""};
        out += pad + "const bool " + lower + " = (" + d + ") < " +
               indexLiteral(half) + ";\n";
        out += pad + "const " + indexType + " " + i + " = " + lower + " ? (" +
               d + ") : (" + d + ") - " + indexLiteral(half) + ";\n";
        out += pad + "float " + s + ", " + cosine + ";\n";
        out += pad + "kiln_rope_sincos((long long)(" + at.coords()[1] + ") + " +
               indexLiteral(r.getPositionOffset()) + "LL, " + table + "[" + i +
               "], &" + s + ", &" + cosine + ");\n";
        std::string x0, x1;
        if (buffers.count(input)) {
          out += pad + "const " + indexType + " " + base + " = " +
                 flatFromCoords(shape, rowStart.coords) + ";\n";
          x0 = loadAtFlat(input, base + " + " + i);
          x1 = loadAtFlat(input, base + " + " + i + " + " + indexLiteral(half));
        } else {
          // The element and its rotation partner, each computed there.
          Index first{{at.coords()[0], at.coords()[1], at.coords()[2], i}, ""};
          Index second{{at.coords()[0], at.coords()[1], at.coords()[2],
                        "(" + i + " + " + indexLiteral(half) + ")"},
                       ""};
          FailureOr<std::string> e0 = valueAt(input, first, out, indent);
          if (failed(e0))
            return failure();
          FailureOr<std::string> e1 = valueAt(input, second, out, indent);
          if (failed(e1))
            return failure();
          x0 = *e0;
          x1 = *e1;
        }
        out += pad + "const float " + name + "_x0 = " + x0 + ";\n";
        out += pad + "const float " + name + "_x1 = " + x1 + ";\n";
        return rounded("(" + lower + " ? " + name + "_x0 * " + cosine + " - " +
                       name + "_x1 * " + s + " : " + name + "_x1 * " + cosine +
                       " + " + name + "_x0 * " + s + ")");
      })
      .Default([&](Operation *) -> FailureOr<std::string> {
        op->emitOpError("codegen: not a pointwise op");
        return failure();
      });
}

} // namespace mlir::kiln::codegen
