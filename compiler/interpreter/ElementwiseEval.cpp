//===- ElementwiseEval.cpp - evaluators of constants and elementwise ops --===//
//
// Every op of KilnElementwiseOps.td, computed in double per its description.
// Rounding to the storage type is the driver's job (F32 mode), except where
// the rounding is part of an op's definition: the random ops, iota and
// conversions to a float type produce exactly the values their descriptions
// name for the result type, so that the reference and the GPU agree bit for
// bit on them.
//
//===----------------------------------------------------------------------===//

#include "compiler/interpreter/EvalUtils.h"
#include "runtime/random/philox.h"

#include "dialects/kiln/IR/KilnDialect.h"

#include "llvm/ADT/APFloat.h"

#include <cmath>
#include <cstdint>
#include <limits>

// The uniform mapping is specified without fused multiply-add.
#ifdef __clang__
#pragma STDC FP_CONTRACT OFF
#endif

namespace mlir::kiln::ref {

namespace {
constexpr double kInt32Min = -2147483648.0;
constexpr double kInt32Max = 2147483647.0;
} // namespace

/// `value` rounded once (to nearest even) to a float kind; other kinds pass.
static double roundOnce(double value, ElementKind kind) {
  const llvm::fltSemantics *semantics = nullptr;
  switch (kind) {
  case ElementKind::F32:
    return static_cast<double>(static_cast<float>(value));
  case ElementKind::BF16:
    semantics = &llvm::APFloat::BFloat();
    break;
  case ElementKind::F16:
    semantics = &llvm::APFloat::IEEEhalf();
    break;
  default:
    return value;
  }
  // Directly from double, not through f32: one rounding, not two.
  llvm::APFloat number(value);
  bool losesInfo = false;
  number.convert(*semantics, llvm::APFloat::rmNearestTiesToEven, &losesInfo);
  return number.convertToDouble();
}

/// An i32 value from a 64-bit integer, wrapping modulo 2^32.
static double wrapInt32(int64_t value) {
  return static_cast<double>(static_cast<int32_t>(
      static_cast<uint32_t>(static_cast<uint64_t>(value))));
}

/// Picks the integer or the float version of an evaluator by operand 0's kind.
static Evaluator byKind(Evaluator floatEvaluator, Evaluator intEvaluator) {
  return [floatEvaluator, intEvaluator](
             Operation *op, llvm::ArrayRef<const Tensor *> operands,
             llvm::MutableArrayRef<Tensor> results, EvalContext &context) {
    return operands[0]->kind == ElementKind::I32
               ? intEvaluator(op, operands, results, context)
               : floatEvaluator(op, operands, results, context);
  };
}

//===----------------------------------------------------------------------===//
// Constants and randomness
//===----------------------------------------------------------------------===//

static LogicalResult evalConstant(Operation *op, llvm::ArrayRef<const Tensor *>,
                                  llvm::MutableArrayRef<Tensor> results,
                                  EvalContext &) {
  auto value = dyn_cast<DenseElementsAttr>(cast<ConstantOp>(op).getValue());
  if (!value)
    return op->emitOpError("the reference interpreter needs a dense value");
  std::vector<double> &out = results[0].data;
  if (isa<FloatType>(value.getElementType())) {
    size_t i = 0;
    for (const APFloat &x : value.getValues<APFloat>())
      out[i++] = x.convertToDouble() /* exact: f32/bf16/f16 widen exactly */;
  } else {
    bool isBool = value.getElementType().isInteger(1);
    size_t i = 0;
    for (const APInt &x : value.getValues<APInt>())
      out[i++] = isBool ? double(x.getBoolValue()) : double(x.getSExtValue());
  }
  return success();
}

static LogicalResult evalIota(Operation *op, llvm::ArrayRef<const Tensor *>,
                              llvm::MutableArrayRef<Tensor> results,
                              EvalContext &) {
  Tensor &out = results[0];
  int64_t dim = static_cast<int64_t>(cast<IotaOp>(op).getDim());
  int64_t outer = 1, inner = 1;
  for (int64_t d = 0; d < dim; ++d)
    outer *= out.shape[d];
  for (int64_t d = dim + 1; d < out.rank(); ++d)
    inner *= out.shape[d];
  int64_t count = out.shape[dim];
  double *element = out.data.data();
  for (int64_t o = 0; o < outer; ++o)
    for (int64_t j = 0; j < count; ++j) {
      double value = roundOnce(static_cast<double>(j), out.kind);
      for (int64_t k = 0; k < inner; ++k)
        *element++ = value;
    }
  return success();
}

/// Calls `body(block, first, count)` for each Philox block of an N-element
/// random tensor: block `b` serves elements [4b, 4b + count).
template <typename Body>
static void forEachPhiloxBlock(uint64_t seed, uint64_t stream, uint32_t offset,
                               int64_t size, Body body) {
  std::array<uint32_t, 2> key = {static_cast<uint32_t>(seed),
                                 static_cast<uint32_t>(seed >> 32)};
  for (int64_t first = 0; first < size; first += 4) {
    uint64_t index = static_cast<uint64_t>(first) / 4;
    ::kiln::PhiloxBlock block = ::kiln::Philox4x32_10(
        {static_cast<uint32_t>(index), static_cast<uint32_t>(stream), offset,
         static_cast<uint32_t>(index >> 32)},
        key);
    body(block, first, std::min<int64_t>(4, size - first));
  }
}

/// The optional `offset` operand read as an unsigned 32-bit word.
static uint32_t counterOffset(llvm::ArrayRef<const Tensor *> operands) {
  if (operands.empty())
    return 0;
  return static_cast<uint32_t>(
      static_cast<int32_t>(static_cast<int64_t>(operands[0]->data[0])));
}

static LogicalResult evalRandomUniform(Operation *op,
                                       llvm::ArrayRef<const Tensor *> operands,
                                       llvm::MutableArrayRef<Tensor> results,
                                       EvalContext &) {
  auto random = cast<RandomUniformOp>(op);
  Tensor &out = results[0];
  // The mapping is defined in f32 arithmetic, one rounding per operation.
  float low = static_cast<float>(random.getLow().convertToDouble());
  float high = static_cast<float>(random.getHigh().convertToDouble());
  float span = high - low;
  float belowHigh =
      std::nextafter(high, -std::numeric_limits<float>::infinity());
  forEachPhiloxBlock(
      random.getSeed(), random.getStream(), counterOffset(operands), out.size(),
      [&](const ::kiln::PhiloxBlock &block, int64_t first, int64_t count) {
        for (int64_t lane = 0; lane < count; ++lane) {
          float fraction = static_cast<float>(block[lane] >> 8) * 0x1p-24f;
          float scaled = span * fraction; // separate statements: no FMA
          float value = low + scaled;
          if (value >= high)
            value = belowHigh;
          out.data[first + lane] = roundOnce(value, out.kind);
        }
      });
  return success();
}

static LogicalResult evalRandomNormal(Operation *op,
                                      llvm::ArrayRef<const Tensor *> operands,
                                      llvm::MutableArrayRef<Tensor> results,
                                      EvalContext &) {
  auto random = cast<RandomNormalOp>(op);
  Tensor &out = results[0];
  double mean = random.getMean().convertToDouble();
  double stddev = random.getStd().convertToDouble();
  forEachPhiloxBlock(
      random.getSeed(), random.getStream(), counterOffset(operands), out.size(),
      [&](const ::kiln::PhiloxBlock &block, int64_t first, int64_t count) {
        // Box-Muller on lanes (0, 1) and (2, 3): the even lane of a pair
        // takes the cosine, the odd one the sine.
        for (int64_t pair = 0; 2 * pair < count; ++pair) {
          double u1 = double((block[2 * pair] >> 8) + 1) * 0x1p-24;
          double u2 = double(block[2 * pair + 1] >> 8) * 0x1p-24;
          double radius = std::sqrt(-2.0 * std::log(u1));
          double angle = 6.283185307179586 * u2;
          for (int64_t lane = 2 * pair;
               lane < std::min<int64_t>(count, 2 * pair + 2); ++lane) {
            double z =
                radius * (lane % 2 == 0 ? std::cos(angle) : std::sin(angle));
            double spread = stddev * z; // separate statements: no FMA
            out.data[first + lane] = roundOnce(mean + spread, out.kind);
          }
        }
      });
  return success();
}

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

static double gelu(double x) {
  return 0.5 * x * (1.0 + std::erf(x * M_SQRT1_2));
}

static double geluTanh(double x) {
  const double k = std::sqrt(2.0 / M_PI);
  return 0.5 * x * (1.0 + std::tanh(k * (x + 0.044715 * x * x * x)));
}

static LogicalResult evalGelu(Operation *op,
                              llvm::ArrayRef<const Tensor *> operands,
                              llvm::MutableArrayRef<Tensor> results,
                              EvalContext &context) {
  static const Evaluator exact = unaryEvaluator(gelu);
  static const Evaluator approximate = unaryEvaluator(geluTanh);
  bool useTanh = cast<GeluOp>(op).getApproximate() == GeluApproximation::tanh;
  return (useTanh ? approximate : exact)(op, operands, results, context);
}

static LogicalResult evalLeakyRelu(Operation *op,
                                   llvm::ArrayRef<const Tensor *> operands,
                                   llvm::MutableArrayRef<Tensor> results,
                                   EvalContext &) {
  // alpha is rounded to f32 before use, per the op description.
  double alpha =
      static_cast<float>(cast<LeakyReluOp>(op).getAlpha().convertToDouble());
  const std::vector<double> &in = operands[0]->data;
  std::vector<double> &out = results[0].data;
  for (size_t i = 0, e = out.size(); i < e; ++i)
    out[i] = in[i] > 0 ? in[i] : alpha * in[i]; // NaN: alpha * NaN = NaN
  return success();
}

/// relu with NaN propagation (a NaN input is not "below 0").
static double relu(double x) { return x > 0 || std::isnan(x) ? x : 0.0; }

static double sign(double x) { return x < 0 ? -1.0 : x > 0 ? 1.0 : x; }

static LogicalResult evalCast(Operation *,
                              llvm::ArrayRef<const Tensor *> operands,
                              llvm::MutableArrayRef<Tensor> results,
                              EvalContext &context) {
  const Tensor &in = *operands[0];
  Tensor &out = results[0];
  bool fromFloat = isFloatKind(in.kind);
  for (size_t i = 0, e = out.data.size(); i < e; ++i) {
    double x = in.data[i];
    double y;
    if (out.kind == ElementKind::I1) {
      y = x != 0 ? 1.0 : 0.0; // NaN is nonzero
    } else if (out.kind == ElementKind::I32) {
      if (!fromFloat)
        y = x; // i32 or i1: already an integer in range
      else if (std::isnan(x))
        y = 0;
      else
        y = std::trunc(std::fmin(std::fmax(x, kInt32Min), kInt32Max));
    } else {
      // To a float type: round to nearest even once. In F64 mode values keep
      // full precision, as every float value does there.
      y = context.precision == Precision::F32 ? roundOnce(x, out.kind) : x;
    }
    out.data[i] = y;
  }
  return success();
}

//===----------------------------------------------------------------------===//
// Binary, compare, select
//===----------------------------------------------------------------------===//

/// max/min with NaN propagation from either operand.
static double maxNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a > b ? a : b;
}
static double minNaN(double a, double b) {
  if (std::isnan(a) || std::isnan(b))
    return std::numeric_limits<double>::quiet_NaN();
  return a < b ? a : b;
}

/// i32 division: truncating, with x / 0 = 0 and -2^31 / -1 = -2^31.
static double divInt32(double a, double b) {
  int64_t x = static_cast<int64_t>(a), y = static_cast<int64_t>(b);
  if (y == 0)
    return 0;
  return wrapInt32(x / y); // -2^31 / -1 = 2^31 wraps to -2^31
}

static LogicalResult evalCompare(Operation *op,
                                 llvm::ArrayRef<const Tensor *> operands,
                                 llvm::MutableArrayRef<Tensor> results,
                                 EvalContext &context) {
  // C++ comparisons are IEEE ordered already: false with NaN, except !=.
  static const Evaluator evaluators[] = {
      binaryEvaluator([](double a, double b) { return double(a == b); }),
      binaryEvaluator([](double a, double b) { return double(a != b); }),
      binaryEvaluator([](double a, double b) { return double(a < b); }),
      binaryEvaluator([](double a, double b) { return double(a <= b); }),
      binaryEvaluator([](double a, double b) { return double(a > b); }),
      binaryEvaluator([](double a, double b) { return double(a >= b); }),
  };
  auto predicate = static_cast<size_t>(cast<CompareOp>(op).getPredicate());
  return evaluators[predicate](op, operands, results, context);
}

static LogicalResult evalSelect(Operation *,
                                llvm::ArrayRef<const Tensor *> operands,
                                llvm::MutableArrayRef<Tensor> results,
                                EvalContext &) {
  const Tensor &condition = *operands[0], &onTrue = *operands[1],
               &onFalse = *operands[2];
  Tensor &out = results[0];
  std::array<Shape, 3> strides = {broadcastStrides(condition.shape, out.shape),
                                  broadcastStrides(onTrue.shape, out.shape),
                                  broadcastStrides(onFalse.shape, out.shape)};
  forEachStrided<3>(
      out.shape, strides, [&](int64_t i, const std::array<int64_t, 3> &in) {
        out.data[i] = condition.data[in[0]] != 0 ? onTrue.data[in[1]]
                                                 : onFalse.data[in[2]];
      });
  return success();
}

void registerElementwiseEvaluators(EvaluatorRegistry &registry) {
  registry.add<ConstantOp>(evalConstant);
  registry.add<IotaOp>(evalIota);
  registry.add<RandomUniformOp>(evalRandomUniform);
  registry.add<RandomNormalOp>(evalRandomNormal);

  // Unary on f32, bf16, f16 and i32 (i32 wraps where the float op would not).
  registry.add<NegOp>(byKind(unaryEvaluator([](double x) { return -x; }),
                             unaryEvaluator([](double x) {
                               return wrapInt32(-static_cast<int64_t>(x));
                             })));
  registry.add<AbsOp>(
      byKind(unaryEvaluator([](double x) { return std::fabs(x); }),
             unaryEvaluator([](double x) {
               return wrapInt32(std::llabs(static_cast<int64_t>(x)));
             })));
  registry.add<SignOp>(unaryEvaluator(sign));
  registry.add<ReluOp>(unaryEvaluator(relu));

  // Unary on floats.
  registry.add<ExpOp>(unaryEvaluator([](double x) { return std::exp(x); }));
  registry.add<LogOp>(unaryEvaluator([](double x) { return std::log(x); }));
  registry.add<SqrtOp>(unaryEvaluator([](double x) { return std::sqrt(x); }));
  registry.add<RsqrtOp>(
      unaryEvaluator([](double x) { return 1.0 / std::sqrt(x); }));
  registry.add<SinOp>(unaryEvaluator([](double x) { return std::sin(x); }));
  registry.add<CosOp>(unaryEvaluator([](double x) { return std::cos(x); }));
  registry.add<TanhOp>(unaryEvaluator([](double x) { return std::tanh(x); }));
  registry.add<ErfOp>(unaryEvaluator([](double x) { return std::erf(x); }));
  registry.add<SigmoidOp>(
      unaryEvaluator([](double x) { return 1.0 / (1.0 + std::exp(-x)); }));
  registry.add<SiluOp>(
      unaryEvaluator([](double x) { return x / (1.0 + std::exp(-x)); }));
  registry.add<GeluOp>(evalGelu);
  registry.add<LeakyReluOp>(evalLeakyRelu);
  registry.add<FloorOp>(unaryEvaluator([](double x) { return std::floor(x); }));
  registry.add<CeilOp>(unaryEvaluator([](double x) { return std::ceil(x); }));
  // nearbyint in the default rounding mode rounds half to even.
  registry.add<RoundOp>(
      unaryEvaluator([](double x) { return std::nearbyint(x); }));
  registry.add<CastOp>(evalCast);

  // Binary; i32 results wrap modulo 2^32 (exact 64-bit arithmetic first).
  registry.add<AddOp>(byKind(
      binaryEvaluator([](double a, double b) { return a + b; }),
      binaryEvaluator([](double a, double b) {
        return wrapInt32(static_cast<int64_t>(a) + static_cast<int64_t>(b));
      })));
  registry.add<SubOp>(byKind(
      binaryEvaluator([](double a, double b) { return a - b; }),
      binaryEvaluator([](double a, double b) {
        return wrapInt32(static_cast<int64_t>(a) - static_cast<int64_t>(b));
      })));
  registry.add<MulOp>(byKind(
      binaryEvaluator([](double a, double b) { return a * b; }),
      binaryEvaluator([](double a, double b) {
        return wrapInt32(static_cast<int64_t>(a) * static_cast<int64_t>(b));
      })));
  registry.add<DivOp>(
      byKind(binaryEvaluator([](double a, double b) { return a / b; }),
             binaryEvaluator(divInt32)));
  registry.add<PowOp>(
      binaryEvaluator([](double a, double b) { return std::pow(a, b); }));
  registry.add<MaxOp>(binaryEvaluator(maxNaN));
  registry.add<MinOp>(binaryEvaluator(minNaN));
  registry.add<CompareOp>(evalCompare);
  registry.add<SelectOp>(evalSelect);
}

} // namespace mlir::kiln::ref
