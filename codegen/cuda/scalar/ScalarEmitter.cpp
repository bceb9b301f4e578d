//===- ScalarEmitter.cpp - C statements for pointwise kiln ops ------------===//
//
// Each supported op becomes one `const <type> name = <expression>;` (a few
// more statements for the gathers), computed at the element the op's result
// is evaluated at. Most ops are one call of a device function of
// kernels/scalar_ops.cuh (the table of device functions); the others, which
// need structure (constants, position-dependent sources, cast, compare,
// select, the index remapping of layout ops), have a case each. The formulas
// follow the ops' ODS descriptions and the reference evaluators in
// compiler/interpreter (ElementwiseEval.cpp, ShapeEval.cpp, NNEval.cpp).
//
//===----------------------------------------------------------------------===//

#include "codegen/cuda/scalar/ScalarEmitter.h"

#include "compiler/transforms/OpClasses.h"

#include "llvm/ADT/APFloat.h"
#include "llvm/ADT/TypeSwitch.h"
#include "llvm/Support/Format.h"
#include "llvm/Support/raw_ostream.h"

#include <cmath>
#include <cstring>
#include <functional>

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
  if (!op->hasTrait<OpTrait::kiln::ScalarForm>())
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

SmallVector<Value> ScalarEmitter::remappedOperands(Operation *op) {
  if (remapsOperands(op))
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
  nested.tablesByContents = tablesByContents;
  FailureOr<std::string> expr = nested.emit(operand, out, indent);
  globalText += nested.globalText;
  globalNames = std::move(nested.globalNames);
  tablesByContents = std::move(nested.tablesByContents);
  return expr;
}

//===----------------------------------------------------------------------===//
// Bindings and scopes
//===----------------------------------------------------------------------===//

void ScalarEmitter::bindBuffer(Value value, std::string pointer,
                               std::string lane, std::string partner) {
  buffers[value] =
      Buffer{std::move(pointer), std::move(lane), std::move(partner)};
}

void ScalarEmitter::bindValue(Value value, std::string expr) {
  bound[value] = expr;
  names[value] = std::move(expr);
}

bool ScalarEmitter::isBound(Value value) const {
  return bound.count(value) || buffers.count(value);
}

void ScalarEmitter::resetScope() {
  names = bound;
  ropeAngles.clear();
}

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
    SmallVector<Value> remapped = remappedOperands(op);
    for (Value operand : op->getOperands()) {
      if (llvm::is_contained(remapped, operand)) {
        // Loaded or computed at the remapped positions by expression(); a
        // value bound as one element's expression holds no other position.
        if (!buffers.count(operand) &&
            (isa<BlockArgument>(operand) ||
             (bound.count(operand) &&
              tensorType(operand).getNumElements() != 1))) {
          op->emitOpError("codegen: it reads a value bound at one element "
                          "at other positions");
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

//===----------------------------------------------------------------------===//
// The table of device functions
//===----------------------------------------------------------------------===//

namespace {

/// An op whose element is one call of a device function of
/// kiln/scalar_ops.cuh on the elements of its operands, in operand order.
struct DeviceFunction {
  /// The function (overloaded for float and, where the op takes i32, int).
  const char *name;
  /// Whether a bf16/f16 result is rounded once after the call (not where
  /// the result is always representable in the operands' type).
  bool rounded;
  /// Arguments after the operands, from the op's attributes (C literals).
  std::string (*attributes)(Operation *op) = nullptr;
  /// The function, where an attribute chooses it (overrides `name`).
  const char *(*chosen)(Operation *op) = nullptr;
};

} // namespace

static const llvm::DenseMap<TypeID, DeviceFunction> &deviceFunctions() {
  static const auto *table = new llvm::DenseMap<TypeID, DeviceFunction>{
      {TypeID::get<NegOp>(), {"kiln::op::neg", false}},
      {TypeID::get<AbsOp>(), {"kiln::op::abs", false}},
      {TypeID::get<SignOp>(), {"kiln::op::sign", false}},
      {TypeID::get<ReluOp>(), {"kiln::op::relu", false}},
      {TypeID::get<ExpOp>(), {"kiln::op::exp", true}},
      {TypeID::get<LogOp>(), {"kiln::op::log", true}},
      {TypeID::get<SqrtOp>(), {"kiln::op::sqrt", true}},
      {TypeID::get<RsqrtOp>(), {"kiln::op::rsqrt", true}},
      {TypeID::get<SinOp>(), {"kiln::op::sin", true}},
      {TypeID::get<CosOp>(), {"kiln::op::cos", true}},
      {TypeID::get<TanhOp>(), {"kiln::op::tanh", true}},
      {TypeID::get<ErfOp>(), {"kiln::op::erf", true}},
      {TypeID::get<SigmoidOp>(), {"kiln::op::sigmoid", true}},
      {TypeID::get<SiluOp>(), {"kiln::op::silu", true}},
      {TypeID::get<GeluOp>(),
       {"kiln::op::gelu", true, nullptr,
        [](Operation *op) {
          return cast<GeluOp>(op).getApproximate() == GeluApproximation::tanh
                     ? "kiln::op::gelu_tanh"
                     : "kiln::op::gelu";
        }}},
      {TypeID::get<LeakyReluOp>(),
       {"kiln::op::leaky_relu", true,
        [](Operation *op) {
          // alpha is rounded to f32 before use.
          return floatLiteral(static_cast<float>(
              cast<LeakyReluOp>(op).getAlpha().convertToDouble()));
        }}},
      // floor, ceil and round of a bf16/f16 value are representable in it.
      {TypeID::get<FloorOp>(), {"kiln::op::floor", false}},
      {TypeID::get<CeilOp>(), {"kiln::op::ceil", false}},
      {TypeID::get<RoundOp>(), {"kiln::op::round", false}},
      // Binary (an i32 result is never rounded).
      {TypeID::get<AddOp>(), {"kiln::op::add", true}},
      {TypeID::get<SubOp>(), {"kiln::op::sub", true}},
      {TypeID::get<MulOp>(), {"kiln::op::mul", true}},
      {TypeID::get<DivOp>(), {"kiln::op::div", true}},
      {TypeID::get<PowOp>(), {"kiln::op::pow", true}},
      {TypeID::get<MaxOp>(), {"kiln::op::max", false}},
      {TypeID::get<MinOp>(), {"kiln::op::min", false}},
  };
  return *table;
}

//===----------------------------------------------------------------------===//
// The op being emitted
//===----------------------------------------------------------------------===//

/// The op whose expression is being written, and what its cases read.
struct ScalarEmitter::OpEmission {
  OpEmission(ScalarEmitter &self, Operation *op, const std::string &name,
             std::string &out, int indent)
      : self(self), op(op), name(name), out(out), indent(indent),
        pad(indent, ' '), result(op->getResult(0)), type(elementType(result)),
        shape(tensorType(result).getShape()), isFloat(isFloatType(type)),
        isInt(type.isInteger(32)) {}

  ScalarEmitter &self;
  Operation *op;
  const std::string &name;
  /// Where statements before the expression go, each line indented by
  /// `indent` (`pad`).
  std::string &out;
  int indent;
  std::string pad;
  Value result;
  Type type;
  ArrayRef<int64_t> shape;
  bool isFloat, isInt;

  /// The expression of operand `i` at the current index.
  std::string x(unsigned i) { return self.operandExpr(op->getOperand(i)); }
  /// `e` rounded once to the result's element type.
  std::string rounded(const std::string &e) { return roundTo(type, e); }
  /// The result's own position, computed (and its root coordinates marked
  /// as used) only by the cases that need it. One coordinate marks only
  /// that root dimension as used.
  std::string coord(size_t dim) {
    if (haveCoords)
      return coordsCache[dim];
    size_t offset = self.rootShape.size() - shape.size();
    return shape[dim] == 1 ? std::string("0") : self.rootCoord(offset + dim);
  }
  const SmallVector<std::string> &coords() {
    if (!haveCoords) {
      coordsCache = self.projectedCoords(result);
      haveCoords = true;
    }
    return coordsCache;
  }
  std::string flat() { return self.projectedFlat(result); }

  using Compute =
      llvm::function_ref<FailureOr<std::string>(size_t, std::string &, int)>;
  /// A variable that holds case n's value, for the first n whose condition
  /// holds (the last case where none does): each case's statements run in
  /// a C block of their own, only where it is chosen. The remapping ops
  /// compute an operand so only at positions that lie inside it.
  FailureOr<std::string> branches(ArrayRef<std::string> conditions,
                                  Compute compute) {
    std::string var = name + "_v";
    out += pad + computeCType(type).str() + " " + var + ";\n";
    for (size_t n = 0; n <= conditions.size(); ++n) {
      out += pad + (n == 0 ? "" : "} else ") +
             (n < conditions.size() ? "if (" + conditions[n] + ") " : "") +
             "{\n";
      FailureOr<std::string> value = compute(n, out, indent + 2);
      if (failed(value))
        return failure();
      out += pad + "  " + var + " = " + *value + ";\n";
    }
    out += pad + "}\n";
    return var;
  }
  /// The value `compute` gives where `condition` holds, else `fallback`.
  FailureOr<std::string>
  guarded(const std::string &condition, const std::string &fallback,
          llvm::function_ref<FailureOr<std::string>(std::string &, int)>
              compute) {
    return branches({condition},
                    [&](size_t n, std::string &into,
                        int at) -> FailureOr<std::string> {
                      if (n == 0)
                        return compute(into, at);
                      return fallback;
                    });
  }

private:
  SmallVector<std::string> coordsCache;
  bool haveCoords = false;
};

//===----------------------------------------------------------------------===//
// Ops that need more than a call
//===----------------------------------------------------------------------===//

/// One function per op whose expression needs structure of its own: the
/// constant tables, the sources that read their position (iota, random
/// ops, dropout, triu, tril), cast, compare, select, and the index
/// remapping of the layout ops and reshape.
struct ScalarCases {
  using OpEmission = ScalarEmitter::OpEmission;
  using Index = ScalarEmitter::Index;
  using Result = FailureOr<std::string>;
  using Case = Result (*)(OpEmission &);

  static Result constant(OpEmission &e);
  static Result iota(OpEmission &e);
  static Result randomUniform(OpEmission &e);
  static Result randomNormal(OpEmission &e);
  static Result castOp(OpEmission &e);
  static Result compare(OpEmission &e);
  static Result select(OpEmission &e);
  static Result broadcastTo(OpEmission &e);
  static Result dropout(OpEmission &e);
  static Result triangular(OpEmission &e);
  static Result reshape(OpEmission &e);
  static Result transpose(OpEmission &e);
  static Result slice(OpEmission &e);
  static Result flip(OpEmission &e);
  static Result pad(OpEmission &e);
  static Result concat(OpEmission &e);
  static Result embedding(OpEmission &e);
  static Result rope(OpEmission &e);
  static Result resize(OpEmission &e);

  static const llvm::DenseMap<TypeID, Case> &table() {
    static const auto *cases = new llvm::DenseMap<TypeID, Case>{
        {TypeID::get<ConstantOp>(), constant},
        {TypeID::get<IotaOp>(), iota},
        {TypeID::get<RandomUniformOp>(), randomUniform},
        {TypeID::get<RandomNormalOp>(), randomNormal},
        {TypeID::get<CastOp>(), castOp},
        {TypeID::get<CompareOp>(), compare},
        {TypeID::get<SelectOp>(), select},
        {TypeID::get<BroadcastToOp>(), broadcastTo},
        {TypeID::get<DropoutOp>(), dropout},
        {TypeID::get<TriuOp>(), triangular},
        {TypeID::get<TrilOp>(), triangular},
        {TypeID::get<ReshapeOp>(), reshape},
        {TypeID::get<TransposeOp>(), transpose},
        {TypeID::get<SliceOp>(), slice},
        {TypeID::get<FlipOp>(), flip},
        {TypeID::get<PadOp>(), pad},
        {TypeID::get<ConcatOp>(), concat},
        {TypeID::get<EmbeddingOp>(), embedding},
        {TypeID::get<RopeOp>(), rope},
        {TypeID::get<ResizeOp>(), resize},
    };
    return *cases;
  }
};

bool ScalarEmitter::hasScalarLowering(OperationName name) {
  TypeID id = name.getTypeID();
  return deviceFunctions().count(id) || ScalarCases::table().count(id);
}

FailureOr<std::string> ScalarEmitter::expression(Operation *op,
                                                 const std::string &name,
                                                 std::string &out, int indent) {
  OpEmission e(*this, op, name, out, indent);
  TypeID id = op->getName().getTypeID();
  if (auto it = deviceFunctions().find(id); it != deviceFunctions().end()) {
    const DeviceFunction &function = it->second;
    std::string call = function.chosen ? function.chosen(op) : function.name;
    call += "(";
    for (unsigned i = 0, n = op->getNumOperands(); i < n; ++i)
      call += (i ? ", " : "") + e.x(i);
    if (function.attributes)
      call += ", " + function.attributes(op);
    call += ")";
    return function.rounded ? e.rounded(call) : call;
  }
  if (auto it = ScalarCases::table().find(id); it != ScalarCases::table().end())
    return it->second(e);
  op->emitOpError("codegen: not a pointwise op");
  return failure();
}

// Constants and sources that read their position.

FailureOr<std::string> ScalarCases::constant(OpEmission &e) {
  ScalarEmitter &self = e.self;
  auto dense = cast<DenseElementsAttr>(cast<ConstantOp>(e.op).getValue());
  // Tables with inf or NaN hold bit patterns: a static initialiser must be a
  // constant expression, and CUDA C has no literal for them.
  bool bits = false;
  if (e.isFloat)
    for (const APFloat &v : dense.getValues<APFloat>())
      bits |= !v.isFinite();
  std::string &table = self.globalNames[e.op];
  if (table.empty()) {
    table = self.prefix + "const_" + std::to_string(self.globalCounter++);
    std::string text;
    llvm::raw_string_ostream os(text);
    // An empty table is never read, but C++ has no zero-length array.
    int64_t length = std::max<int64_t>(dense.getNumElements(), 1);
    os << "static __device__ const "
       << (bits ? llvm::StringRef("unsigned") : computeCType(e.type)) << " "
       << table << "[" << length << "] = {";
    int64_t i = 0;
    for (Attribute element : dense.getValues<Attribute>()) {
      os << (i % 8 == 0 ? "\n    " : " ");
      if (bits) {
        float f =
            static_cast<float>(cast<FloatAttr>(element).getValueAsDouble());
        uint32_t word;
        std::memcpy(&word, &f, sizeof word);
        os << llvm::format("0x%08x", word) << "u";
      } else {
        os << elementLiteral(element, e.type);
      }
      os << ",";
      ++i;
    }
    if (i == 0)
      os << "0";
    os << "\n};\n";
    self.globalText += text;
  }
  if (bits)
    return "__uint_as_float(" + table + "[" + e.flat() + "])";
  return table + "[" + e.flat() + "]";
}

FailureOr<std::string> ScalarCases::iota(OpEmission &e) {
  std::string c = e.coord(cast<IotaOp>(e.op).getDim());
  if (e.isInt)
    return "(int)(" + c + ")";
  if (e.type.isF32())
    return "kiln_i64_to_f32((long long)(" + c + "))";
  return std::string(e.type.isBF16() ? "kiln_i64_to_bf16" : "kiln_i64_to_f16") +
         "((long long)(" + c + "))";
}

FailureOr<std::string> ScalarCases::randomUniform(OpEmission &e) {
  auto r = cast<RandomUniformOp>(e.op);
  float lo = static_cast<float>(r.getLow().convertToDouble());
  float hi = static_cast<float>(r.getHigh().convertToDouble());
  std::string offset = r.getOffset() ? e.x(0) : "";
  return e.rounded(
      "kiln_random_uniform(" +
      philoxArguments(r.getSeed(), r.getStream(), offset, e.flat()) + ", " +
      floatLiteral(lo) + ", " + floatLiteral(hi) + ")");
}

FailureOr<std::string> ScalarCases::randomNormal(OpEmission &e) {
  auto r = cast<RandomNormalOp>(e.op);
  std::string offset = r.getOffset() ? e.x(0) : "";
  std::string v =
      "kiln_random_normal(" +
      philoxArguments(r.getSeed(), r.getStream(), offset, e.flat()) + ", " +
      doubleLiteral(r.getMean().convertToDouble()) + ", " +
      doubleLiteral(r.getStd().convertToDouble()) + ")";
  // One rounding from f64 to the element type.
  if (e.type.isF32())
    return "__double2float_rn(" + v + ")";
  if (e.type.isBF16())
    return "__bfloat162float(__double2bfloat16(" + v + "))";
  return "__half2float(__double2half(" + v + "))";
}

FailureOr<std::string> ScalarCases::dropout(OpEmission &e) {
  auto d = cast<DropoutOp>(e.op);
  double rate = d.getRate().convertToDouble();
  double scale = 1.0 / (1.0 - rate);
  std::string offset = d.getOffset() ? e.x(1) : "";
  return e.rounded(
      "kiln::op::dropout(" + e.x(0) + ", " +
      philoxArguments(d.getSeed(), d.getStream(), offset, e.flat()) + ", " +
      doubleLiteral(rate) + ", " + doubleLiteral(scale) + ")");
}

/// triu and tril keep the elements on one side of a diagonal of the last two
/// dimensions.
FailureOr<std::string> ScalarCases::triangular(OpEmission &e) {
  size_t rank = e.shape.size();
  std::string i = e.coord(rank - 2), j = e.coord(rank - 1);
  bool upper = isa<TriuOp>(e.op);
  int64_t diagonal = upper ? cast<TriuOp>(e.op).getDiagonal()
                           : cast<TrilOp>(e.op).getDiagonal();
  return "(((" + j + ") - (" + i + ") " + (upper ? ">= " : "<= ") +
         indexLiteral(diagonal) + ") ? " + e.x(0) + " : " + zeroOf(e.type) +
         ")";
}

// Element-wise ops with a structure of their own.

FailureOr<std::string> ScalarCases::castOp(OpEmission &e) {
  Type from = elementType(e.op->getOperand(0));
  std::string v = e.x(0);
  if (from == e.type)
    return v;
  if (e.type.isInteger(1))
    return "(" + v + (isFloatType(from) ? " != 0.0f)" : " != 0)");
  if (from.isInteger(1))
    return "(" + v + (e.isFloat ? " ? 1.0f : 0.0f)" : " ? 1 : 0)");
  if (e.isInt) // from a float
    return "kiln_float_to_i32(" + v + ")";
  if (from.isInteger(32))
    return std::string(e.type.isF32()    ? "kiln_i64_to_f32"
                       : e.type.isBF16() ? "kiln_i64_to_bf16"
                                         : "kiln_i64_to_f16") +
           "(" + v + ")";
  return e.rounded(v); // float to float: one rounding
}

FailureOr<std::string> ScalarCases::compare(OpEmission &e) {
  return "(" + e.x(0) + " " + comparison(cast<CompareOp>(e.op).getPredicate()) +
         " " + e.x(1) + ")";
}

FailureOr<std::string> ScalarCases::select(OpEmission &e) {
  return "(" + e.x(0) + " ? " + e.x(1) + " : " + e.x(2) + ")";
}

FailureOr<std::string> ScalarCases::broadcastTo(OpEmission &e) {
  return e.x(0);
}

// Index remapping: loads of the buffer operands, or their computation at the
// remapped positions.

FailureOr<std::string> ScalarCases::reshape(OpEmission &e) {
  ScalarEmitter &self = e.self;
  Value input = e.op->getOperand(0);
  if (self.buffers.count(input))
    return self.loadProjected(input, e.result);
  return self.valueAt(input, Index{{}, self.projectedFlat(e.result)}, e.out,
                      e.indent);
}

FailureOr<std::string> ScalarCases::transpose(OpEmission &e) {
  Index in;
  in.coords.resize(e.shape.size());
  for (auto [k, p] : llvm::enumerate(cast<TransposeOp>(e.op).getPerm()))
    in.coords[p] = e.coords()[k];
  return e.self.valueAt(e.op->getOperand(0), in, e.out, e.indent);
}

FailureOr<std::string> ScalarCases::slice(OpEmission &e) {
  auto s = cast<SliceOp>(e.op);
  Index in;
  for (size_t d = 0; d < e.shape.size(); ++d) {
    std::string j = e.coords()[d];
    int64_t step = s.getStep()[d];
    std::string scaled =
        step == 1 || j == "0" ? j : "(" + j + ") * " + indexLiteral(step);
    in.coords.push_back(plus(scaled, s.getStart()[d]));
  }
  return e.self.valueAt(e.op->getOperand(0), in, e.out, e.indent);
}

FailureOr<std::string> ScalarCases::flip(OpEmission &e) {
  Index in{e.coords(), ""};
  for (int64_t d : cast<FlipOp>(e.op).getDims())
    if (e.shape[d] != 1)
      in.coords[d] =
          indexLiteral(e.shape[d] - 1) + " - (" + e.coords()[d] + ")";
  return e.self.valueAt(e.op->getOperand(0), in, e.out, e.indent);
}

FailureOr<std::string> ScalarCases::pad(OpEmission &e) {
  auto p = cast<PadOp>(e.op);
  Value input = p.getInput();
  ArrayRef<int64_t> inShape = tensorType(input).getShape();
  Index in;
  std::string inside;
  for (size_t d = 0; d < e.shape.size(); ++d) {
    int64_t low = p.getLow()[d], high = p.getHigh()[d];
    std::string c = plus(e.coords()[d], -low);
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
  std::string value = e.isFloat ? floatLiteral(roundedToType(v, e.type))
                      : e.isInt ? intLiteral(static_cast<int64_t>(v))
                                : (v != 0 ? "true" : "false");
  if (!e.self.buffers.count(input)) {
    // Computed in the fusion: only at positions inside the operand.
    return e.guarded(inside.empty() ? "true" : inside, value,
                     [&](std::string &out, int indent) {
                       return e.self.valueAt(input, in, out, indent);
                     });
  }
  std::string element = e.self.load(input, in);
  if (inside.empty())
    return element;
  return "((" + inside + ") ? " + element + " : " + value + ")";
}

FailureOr<std::string> ScalarCases::concat(OpEmission &e) {
  auto c = cast<ConcatOp>(e.op);
  int64_t dim = c.getDim();
  std::string j = e.coords()[dim];
  SmallVector<int64_t> offsets;
  int64_t offset = 0;
  for (Value input : c.getInputs()) {
    offsets.push_back(offset);
    offset += tensorType(input).getShape()[dim];
  }
  auto at = [&](size_t n) {
    Index in{e.coords(), ""};
    in.coords[dim] = plus(j, -offsets[n]);
    return in;
  };
  bool allBuffers = llvm::all_of(c.getInputs(), [&](Value input) {
    return e.self.buffers.count(input) != 0;
  });
  if (!allBuffers) {
    // Some inputs are computed in the fusion: only the one the position
    // falls in is.
    SmallVector<std::string> conditions;
    for (size_t n = 1; n < offsets.size(); ++n)
      conditions.push_back("(" + j + ") < " + indexLiteral(offsets[n]));
    return e.branches(conditions, [&](size_t n, std::string &out, int indent) {
      return e.self.valueAt(c.getInputs()[n], at(n), out, indent);
    });
  }
  // Innermost first: the last input is the final else.
  std::string text;
  for (size_t n = c.getInputs().size(); n-- > 0;) {
    std::string value = e.self.load(c.getInputs()[n], at(n));
    if (text.empty()) {
      text = value;
      continue;
    }
    text = "((" + j + ") < " + indexLiteral(offsets[n + 1]) + " ? " + value +
           " : " + text + ")";
  }
  return text;
}

FailureOr<std::string> ScalarCases::embedding(OpEmission &e) {
  ScalarEmitter &self = e.self;
  auto op = cast<EmbeddingOp>(e.op);
  Value table = op.getTable(), indices = op.getIndices();
  int64_t rows = tensorType(table).getShape()[0];
  int64_t width = tensorType(table).getShape()[1];
  const SmallVector<std::string> &at = e.coords();
  Index rowIndex{SmallVector<std::string>(at.begin(), at.end() - 1), ""};
  FailureOr<std::string> index = self.valueAt(indices, rowIndex, e.out,
                                              e.indent);
  if (failed(index))
    return failure();
  std::string row = e.name + "_row";
  e.out += e.pad + "const int " + row + " = " + *index + ";\n";
  std::string column = at.back();
  // Out-of-range rows read nothing and give NaN (as the reference).
  std::string inRange =
      row + " >= 0 && " + row + " < " + std::to_string(rows);
  std::string rowAt = "(" + self.indexType + ")" + row;
  if (!self.buffers.count(table)) {
    Index element{{rowAt, column}, ""};
    return e.guarded(inRange, floatLiteral(NAN),
                     [&](std::string &out, int indent) {
                       return self.valueAt(table, element, out, indent);
                     });
  }
  std::string element = width == 1 ? rowAt
                                   : rowAt + " * " + indexLiteral(width) +
                                         (column == "0" ? "" : " + " + column);
  return "((" + inRange + ") ? " + self.loadAtFlat(table, element) + " : " +
         floatLiteral(NAN) + ")";
}

FailureOr<std::string> ScalarCases::rope(OpEmission &e) {
  ScalarEmitter &self = e.self;
  auto r = cast<RopeOp>(e.op);
  Value input = r.getInput();
  const std::string &name = e.name, &pad = e.pad;
  std::string &out = e.out;
  const SmallVector<bool> usedBefore = self.coordUsed;
  const SmallVector<std::string> &at = e.coords();
  int64_t width = e.shape[3], half = width / 2;
  auto buffer = self.buffers.find(input);
  // At the root with the element and its partner in registers (the vector
  // path): only the position and the head-dim coordinate are read.
  bool inRegisters = buffer != self.buffers.end() &&
                     !buffer->second.partner.empty() &&
                     !buffer->second.lane.empty() &&
                     llvm::equal(at, self.coords);
  if (inRegisters) {
    self.coordUsed = usedBefore;
    self.rootCoord(1);
    self.rootCoord(3);
  }
  std::string &table = self.globalNames[e.op];
  if (table.empty()) {
    // theta^(-2i/D) in f64, as the reference computes it.
    double theta = r.getTheta().convertToDouble();
    std::string values = "[" + std::to_string(half) + "] = {";
    for (int64_t i = 0; i < half; ++i)
      values += std::string(i % 4 == 0 ? "\n    " : " ") +
                doubleLiteral(std::pow(theta, -2.0 * double(i) / double(width))) +
                ",";
    values += "\n};\n";
    std::string &shared = self.tablesByContents[values];
    if (shared.empty()) {
      shared = self.prefix + "rope_freq_" + std::to_string(self.globalCounter++);
      self.globalText += "static __device__ const double " + shared + values;
    }
    table = shared;
  }
  std::string d = at[3];
  std::string lower = name + "_lower", i = name + "_i", base = name + "_base";
  out += pad + "const bool " + lower + " = (" + d + ") < " +
         indexLiteral(half) + ";\n";
  // The pair index: for the angle unless this scope has it, and for loads.
  auto declarePair = [&] {
    out += pad + "const " + self.indexType + " " + i + " = " + lower +
           " ? (" + d + ") : (" + d + ") - " + indexLiteral(half) + ";\n";
  };
  // The angle of (position, pair), once per scope; 16-bit results take the
  // hardware's sine and cosine of the reduced angle (absolute error about
  // 2^-21, far below their rounding).
  std::string position = "(long long)(" + at[1] + ") + " +
                         indexLiteral(r.getPositionOffset()) + "LL";
  std::string &angle =
      self.ropeAngles[table + "|" + position + "|" + d + "|" +
                      std::to_string(half)];
  if (angle.empty() || !inRegisters)
    declarePair();
  if (angle.empty()) {
    angle = name;
    Type element = tensorType(r.getResult()).getElementType();
    bool approximate = element.isBF16() || element.isF16();
    out += pad + "float " + name + "_sin, " + name + "_cos;\n";
    out += pad + (approximate ? "kiln_rope_sincos_approx(" : "kiln_rope_sincos(") +
           position + ", " + table + "[" + i + "], &" + name + "_sin, &" +
           name + "_cos);\n";
  }
  std::string s = angle + "_sin", cosine = angle + "_cos";
  std::string x0, x1;
  if (inRegisters) {
    const ScalarEmitter::Buffer &b = buffer->second;
    x0 = "(" + lower + " ? " + b.lane + " : " + b.partner + ")";
    x1 = "(" + lower + " ? " + b.partner + " : " + b.lane + ")";
  } else if (buffer != self.buffers.end()) {
    Index rowStart{{at[0], at[1], at[2], "0"}, ""};
    out += pad + "const " + self.indexType + " " + base + " = " +
           flatFromCoords(e.shape, rowStart.coords) + ";\n";
    x0 = self.loadAtFlat(input, base + " + " + i);
    x1 = self.loadAtFlat(input, base + " + " + i + " + " + indexLiteral(half));
  } else {
    // The element and its rotation partner, each computed there.
    Index first{{at[0], at[1], at[2], i}, ""};
    Index second{
        {at[0], at[1], at[2], "(" + i + " + " + indexLiteral(half) + ")"}, ""};
    FailureOr<std::string> e0 = self.valueAt(input, first, out, e.indent);
    if (failed(e0))
      return failure();
    FailureOr<std::string> e1 = self.valueAt(input, second, out, e.indent);
    if (failed(e1))
      return failure();
    x0 = *e0;
    x1 = *e1;
  }
  out += pad + "const float " + name + "_x0 = " + x0 + ";\n";
  out += pad + "const float " + name + "_x1 = " + x1 + ";\n";
  // The inverse rotates by -a: the sine's sign flips.
  const char *minus = r.getInverse() ? " + " : " - ";
  const char *plus = r.getInverse() ? " - " : " + ";
  return e.rounded("(" + lower + " ? " + name + "_x0 * " + cosine + minus +
                   name + "_x1 * " + s + " : " + name + "_x1 * " + cosine +
                   plus + name + "_x0 * " + s + ")");
}

/// kiln.resize: per resized dim, the input index (nearest) or the two
/// indices and weights (linear) from kiln/resize_layout.cuh, which the
/// reference calls too; linear taps blend dim after dim, the first resized
/// dim outermost, as the reference nests them.
FailureOr<std::string> ScalarCases::resize(OpEmission &e) {
  auto r = cast<ResizeOp>(e.op);
  Value input = r.getInput();
  ArrayRef<int64_t> inShape = tensorType(input).getShape();
  SmallVector<int64_t> dims = r.getResizedDims();
  bool linear = r.getMode() == ResizeMode::linear;
  const std::string coordinates =
      std::to_string(static_cast<int>(r.getCoordinates()));
  struct Tap {
    std::string first, second, keep, take; // indices; weights of each
  };
  SmallVector<Tap> taps;
  for (auto [k, d] : llvm::enumerate(dims)) {
    std::string name = e.name + "_" + std::to_string(k);
    std::string arguments = "(long long)(" + e.coords()[d] + "), " +
                            std::to_string(inShape[d]) + "LL, " +
                            std::to_string(e.shape[d]) + "LL, " +
                            doubleLiteral(r.getScales()[d]);
    if (!linear) {
      e.out += e.pad + "const long long " + name +
               " = kiln::resize::nearest_index(" + coordinates + ", " +
               std::to_string(static_cast<int>(r.getRounding())) + ", " +
               arguments + ");\n";
      taps.push_back({name, "", "", ""});
      continue;
    }
    e.out += e.pad + "const kiln::resize::linear_tap " + name +
             " = kiln::resize::linear_taps(" + coordinates + ", " + arguments +
             ");\n";
    e.out += e.pad + "const float " + name + "_keep = (float)(1.0 - " + name +
             ".w1);\n";
    e.out += e.pad + "const float " + name + "_take = (float)" + name +
             ".w1;\n";
    taps.push_back({name + ".i0", name + ".i1", name + "_keep", name + "_take"});
  }
  // The input is a buffer, or a constant the kernel took a copy of, which
  // valueAt reads at the tap's position as well.
  Index at{e.coords(), ""};
  std::function<FailureOr<std::string>(size_t)> blend =
      [&](size_t k) -> FailureOr<std::string> {
    if (k == dims.size())
      return e.self.valueAt(input, at, e.out, e.indent);
    int64_t d = dims[k];
    at.coords[d] = taps[k].first;
    FailureOr<std::string> first = blend(k + 1);
    if (failed(first) || !linear)
      return first;
    at.coords[d] = taps[k].second;
    FailureOr<std::string> second = blend(k + 1);
    if (failed(second))
      return failure();
    return "(" + taps[k].keep + " * " + *first + " + " + taps[k].take +
           " * " + *second + ")";
  };
  FailureOr<std::string> value = blend(0);
  if (failed(value))
    return failure();
  return e.rounded(*value);
}

} // namespace mlir::kiln::codegen
