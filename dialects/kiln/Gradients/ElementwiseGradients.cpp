//===- ElementwiseGradients.cpp - gradient rules of elementwise ops -------===//
//
// Reverse-mode rules of the differentiable elementwise ops. Unary rules map
// the result gradient `g` to the operand gradient; binary rules compute both
// operand gradients at the broadcast shape and sum them back to each
// operand's shape (sumToShape). Forward results are reused where the
// derivative is naturally written in terms of them (exp, sqrt, tanh, ...).
// constant, iota, the random ops, sign, floor, ceil, round and compare are
// NonDifferentiable and have no rule.
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/Gradients/GradientUtils.h"
#include "dialects/kiln/IR/KilnBuilder.h"

#include <cmath>
#include <utility>

namespace mlir::kiln {
namespace {

/// A rule for a one-operand op: `Derived::gradient(kb, op, g)` returns the
/// operand gradient for a non-null result gradient `g` (or null for none).
template <typename Derived, typename OpTy>
struct UnaryGradient
    : public GradientOpInterface::ExternalModel<Derived, OpTy> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    Value g = resultGrads[0];
    if (!g) {
      operandGrads.push_back(Value());
      return success();
    }
    KilnBuilder kb(builder, op->getLoc());
    operandGrads.push_back(Derived::gradient(kb, cast<OpTy>(op), g));
    return success();
  }
};

/// A rule for a broadcasting two-operand op: `Derived::gradients(kb, op, g)`
/// returns both gradients at the broadcast shape; they are then summed back
/// to the operands' shapes.
template <typename Derived, typename OpTy>
struct BinaryGradient
    : public GradientOpInterface::ExternalModel<Derived, OpTy> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    Value g = resultGrads[0];
    if (!g) {
      operandGrads.append(2, Value());
      return success();
    }
    KilnBuilder kb(builder, op->getLoc());
    auto [lhsGrad, rhsGrad] = Derived::gradients(kb, cast<OpTy>(op), g);
    for (auto [operand, grad] :
         llvm::zip(op->getOperands(), std::array<Value, 2>{lhsGrad, rhsGrad}))
      operandGrads.push_back(
          grad ? sumToShape(builder, op->getLoc(), grad,
                            cast<RankedTensorType>(operand.getType()))
               : Value());
    return success();
  }
};

Value one(KilnBuilder &kb, Value like) { return kb.scalarLike(1.0, like); }
Value zero(KilnBuilder &kb, Value like) { return kb.scalarLike(0.0, like); }

//===----------------------------------------------------------------------===//
// Unary
//===----------------------------------------------------------------------===//

/// d(-x) = -g.
struct NegGradient : UnaryGradient<NegGradient, NegOp> {
  static Value gradient(KilnBuilder &kb, NegOp, Value g) { return kb.neg(g); }
};

/// d|x| = g * sign(x); sign(0) = 0 picks the subgradient 0 at the kink.
struct AbsGradient : UnaryGradient<AbsGradient, AbsOp> {
  static Value gradient(KilnBuilder &kb, AbsOp op, Value g) {
    Value sign = kb.builder().create<SignOp>(kb.location(), op.getInput());
    return kb.mul(g, sign);
  }
};

/// d(exp x) = g * exp(x), reusing the forward result.
struct ExpGradient : UnaryGradient<ExpGradient, ExpOp> {
  static Value gradient(KilnBuilder &kb, ExpOp op, Value g) {
    return kb.mul(g, op.getResult());
  }
};

/// d(log x) = g / x.
struct LogGradient : UnaryGradient<LogGradient, LogOp> {
  static Value gradient(KilnBuilder &kb, LogOp op, Value g) {
    return kb.div(g, op.getInput());
  }
};

/// d(sqrt x) = g * 0.5 / sqrt(x), reusing the forward result.
struct SqrtGradient : UnaryGradient<SqrtGradient, SqrtOp> {
  static Value gradient(KilnBuilder &kb, SqrtOp op, Value g) {
    return kb.div(kb.scale(g, 0.5), op.getResult());
  }
};

/// d(x^-1/2) = g * -0.5 * x^-3/2 = g * -0.5 * y^3 with y the forward result.
struct RsqrtGradient : UnaryGradient<RsqrtGradient, RsqrtOp> {
  static Value gradient(KilnBuilder &kb, RsqrtOp op, Value g) {
    Value y = op.getResult();
    return kb.mul(kb.scale(g, -0.5), kb.mul(y, kb.mul(y, y)));
  }
};

/// d(sin x) = g * cos(x).
struct SinGradient : UnaryGradient<SinGradient, SinOp> {
  static Value gradient(KilnBuilder &kb, SinOp op, Value g) {
    return kb.mul(g, kb.builder().create<CosOp>(kb.location(), op.getInput()));
  }
};

/// d(cos x) = -g * sin(x).
struct CosGradient : UnaryGradient<CosGradient, CosOp> {
  static Value gradient(KilnBuilder &kb, CosOp op, Value g) {
    Value sin = kb.builder().create<SinOp>(kb.location(), op.getInput());
    return kb.neg(kb.mul(g, sin));
  }
};

/// d(tanh x) = g * (1 - y^2).
struct TanhGradient : UnaryGradient<TanhGradient, TanhOp> {
  static Value gradient(KilnBuilder &kb, TanhOp op, Value g) {
    Value y = op.getResult();
    return kb.mul(g, kb.sub(one(kb, y), kb.mul(y, y)));
  }
};

/// d(erf x) = g * 2 / sqrt(pi) * exp(-x^2).
struct ErfGradient : UnaryGradient<ErfGradient, ErfOp> {
  static Value gradient(KilnBuilder &kb, ErfOp op, Value g) {
    Value x = op.getInput();
    Value density = kb.exp(kb.neg(kb.mul(x, x)));
    return kb.mul(g, kb.scale(density, 2.0 / std::sqrt(M_PI)));
  }
};

/// d(sigmoid x) = g * y * (1 - y).
struct SigmoidGradient : UnaryGradient<SigmoidGradient, SigmoidOp> {
  static Value gradient(KilnBuilder &kb, SigmoidOp op, Value g) {
    Value y = op.getResult();
    return kb.mul(g, kb.mul(y, kb.sub(one(kb, y), y)));
  }
};

/// d(relu x) = g where x > 0, else 0 (0 at the kink, as documented; a NaN
/// input passes no gradient).
struct ReluGradient : UnaryGradient<ReluGradient, ReluOp> {
  static Value gradient(KilnBuilder &kb, ReluOp op, Value g) {
    Value x = op.getInput();
    Value positive = kb.compare(CmpPredicate::gt, x, zero(kb, x));
    return kb.select(positive, g, zero(kb, g));
  }
};

/// d(x * s(x)) with s = sigmoid: s + x s (1 - s) = s + y (1 - s).
struct SiluGradient : UnaryGradient<SiluGradient, SiluOp> {
  static Value gradient(KilnBuilder &kb, SiluOp op, Value g) {
    Value s = kb.sigmoid(op.getInput());
    Value y = op.getResult();
    return kb.mul(g, kb.add(s, kb.mul(y, kb.sub(one(kb, s), s))));
  }
};

/// Exact: d(x Phi(x)) = Phi(x) + x phi(x), with phi the standard normal
/// density. Phi(x) is recovered from the forward result as y / x (no second
/// erf); near 0, where that quotient loses precision (0 / 0 at
/// x = 0), Phi(x) is taken as 0.5, which is within half an ulp of f32 there
/// (|x| <= 2^-30).
/// tanh form: with u = k (x + c x^3), t = tanh(u):
///   d = 0.5 (1 + t) + 0.5 x (1 - t^2) k (1 + 3 c x^2).
/// Like the forward op, bf16 and f16 compute in f32 (so that k, c and
/// 1/sqrt(2 pi) keep f32 precision) and round the gradient once.
struct GeluGradient : UnaryGradient<GeluGradient, GeluOp> {
  static Value gradient(KilnBuilder &kb, GeluOp op, Value g) {
    Type element = KilnBuilder::elementOf(g), f32 = kb.builder().getF32Type();
    Value x = kb.cast(op.getInput(), f32);
    Value xx = kb.mul(x, x);
    Value derivative;
    if (op.getApproximate() == GeluApproximation::tanh) {
      const double k = std::sqrt(2.0 / M_PI), c = 0.044715;
      Value inner = kb.mul(x, kb.add(one(kb, x), kb.scale(xx, c)));
      Value t = kb.tanh(kb.scale(inner, k));
      Value innerSlope = kb.add(one(kb, x), kb.scale(xx, 3 * c));
      Value sech2 = kb.sub(one(kb, t), kb.mul(t, t));
      derivative =
          kb.add(kb.scale(kb.add(one(kb, t), t), 0.5),
                 kb.mul(kb.scale(x, 0.5 * k), kb.mul(sech2, innerSlope)));
    } else {
      Value nearZero = kb.compare(CmpPredicate::le, kb.abs(x),
                                  kb.scalar(std::ldexp(1.0, -30), f32));
      Value cdf = kb.select(nearZero, kb.scalar(0.5, f32),
                            kb.div(kb.cast(op.getResult(), f32), x));
      Value pdf =
          kb.scale(kb.exp(kb.scale(xx, -0.5)), 1.0 / std::sqrt(2.0 * M_PI));
      derivative = kb.add(cdf, kb.mul(x, pdf));
    }
    return kb.cast(kb.mul(kb.cast(g, f32), derivative), element);
  }
};

/// d(leaky_relu x) = g where x > 0, else alpha * g, with alpha rounded to f32
/// as in the forward op; bf16 and f16 gradients are scaled in f32 and
/// rounded once.
struct LeakyReluGradient : UnaryGradient<LeakyReluGradient, LeakyReluOp> {
  static Value gradient(KilnBuilder &kb, LeakyReluOp op, Value g) {
    Value x = op.getInput();
    double alpha = static_cast<float>(op.getAlpha().convertToDouble());
    Type element = KilnBuilder::elementOf(g);
    Type f32 = kb.builder().getF32Type();
    Value scaled = kb.cast(kb.scale(kb.cast(g, f32), alpha), element);
    Value positive = kb.compare(CmpPredicate::gt, x, zero(kb, x));
    return kb.select(positive, g, scaled);
  }
};

/// float -> float: the gradient is cast back to the input type. Casts from or
/// to i32 and i1 pass no gradient.
struct CastGradient : UnaryGradient<CastGradient, CastOp> {
  static Value gradient(KilnBuilder &kb, CastOp op, Value g) {
    Type from = KilnBuilder::elementOf(op.getInput());
    Type to = KilnBuilder::elementOf(op.getResult());
    if (!isa<FloatType>(from) || !isa<FloatType>(to))
      return Value();
    return kb.cast(g, from);
  }
};

//===----------------------------------------------------------------------===//
// Binary
//===----------------------------------------------------------------------===//

using GradientPair = std::pair<Value, Value>;

/// d(a + b) = (g, g).
struct AddGradient : BinaryGradient<AddGradient, AddOp> {
  static GradientPair gradients(KilnBuilder &, AddOp, Value g) {
    return {g, g};
  }
};

/// d(a - b) = (g, -g).
struct SubGradient : BinaryGradient<SubGradient, SubOp> {
  static GradientPair gradients(KilnBuilder &kb, SubOp, Value g) {
    return {g, kb.neg(g)};
  }
};

/// d(a * b) = (g * b, g * a).
struct MulGradient : BinaryGradient<MulGradient, MulOp> {
  static GradientPair gradients(KilnBuilder &kb, MulOp op, Value g) {
    return {kb.mul(g, op.getRhs()), kb.mul(g, op.getLhs())};
  }
};

/// d(a / b) = (g / b, -g a / b^2) = (g / b, -(g / b) * y), reusing y = a / b.
struct DivGradient : BinaryGradient<DivGradient, DivOp> {
  static GradientPair gradients(KilnBuilder &kb, DivOp op, Value g) {
    Value lhsGrad = kb.div(g, op.getRhs());
    return {lhsGrad, kb.neg(kb.mul(lhsGrad, op.getResult()))};
  }
};

/// d(a^b) = (g * b * a^(b - 1), g * y * log(a)). The exponent's gradient is
/// that of a positive base; where the base is 0 it is taken as 0 (the limit
/// for positive exponents, as torch does), and negative bases give NaN.
struct PowGradient : BinaryGradient<PowGradient, PowOp> {
  static GradientPair gradients(KilnBuilder &kb, PowOp op, Value g) {
    Value a = op.getLhs(), b = op.getRhs();
    Value lhsGrad = kb.mul(kb.mul(g, b), kb.pow(a, kb.sub(b, one(kb, b))));
    Value rhsGrad = kb.mul(kb.mul(g, op.getResult()), kb.log(a));
    Value zeroBase = kb.compare(CmpPredicate::eq, a, zero(kb, a));
    return {lhsGrad, kb.select(zeroBase, zero(kb, g), rhsGrad)};
  }
};

/// max and min pass the gradient to the chosen operand. On ties (a == b) each
/// operand gets half of it, as torch.maximum/torch.minimum do, so that the
/// two halves add up to g and the rule is symmetric. Where either operand is
/// NaN no gradient flows.
template <typename Derived, typename OpTy, CmpPredicate lhsWins,
          CmpPredicate rhsWins>
struct ExtremumGradient : BinaryGradient<Derived, OpTy> {
  static GradientPair gradients(KilnBuilder &kb, OpTy op, Value g) {
    Value a = op.getLhs(), b = op.getRhs();
    Value tie = kb.select(kb.compare(CmpPredicate::eq, a, b), kb.scale(g, 0.5),
                          zero(kb, g));
    return {kb.select(kb.compare(lhsWins, a, b), g, tie),
            kb.select(kb.compare(rhsWins, a, b), g, tie)};
  }
};
struct MaxGradient
    : ExtremumGradient<MaxGradient, MaxOp, CmpPredicate::gt, CmpPredicate::lt> {
};
struct MinGradient
    : ExtremumGradient<MinGradient, MinOp, CmpPredicate::lt, CmpPredicate::gt> {
};

/// d(c ? t : f) = (none, g where c, g where !c), each summed back to its
/// operand's shape.
struct SelectGradient
    : public GradientOpInterface::ExternalModel<SelectGradient, SelectOp> {
  LogicalResult buildGradients(Operation *op, OpBuilder &builder,
                               ValueRange resultGrads,
                               SmallVectorImpl<Value> &operandGrads) const {
    auto select = cast<SelectOp>(op);
    Value g = resultGrads[0];
    operandGrads.push_back(Value()); // the condition
    if (!g) {
      operandGrads.append(2, Value());
      return success();
    }
    KilnBuilder kb(builder, op->getLoc());
    Value c = select.getCondition(), zeros = zero(kb, g);
    operandGrads.push_back(
        sumToShape(builder, op->getLoc(), kb.select(c, g, zeros),
                   cast<RankedTensorType>(select.getTrueValue().getType())));
    operandGrads.push_back(
        sumToShape(builder, op->getLoc(), kb.select(c, zeros, g),
                   cast<RankedTensorType>(select.getFalseValue().getType())));
    return success();
  }
};

} // namespace

void registerElementwiseGradientRules(MLIRContext *context) {
  NegOp::attachInterface<NegGradient>(*context);
  AbsOp::attachInterface<AbsGradient>(*context);
  ExpOp::attachInterface<ExpGradient>(*context);
  LogOp::attachInterface<LogGradient>(*context);
  SqrtOp::attachInterface<SqrtGradient>(*context);
  RsqrtOp::attachInterface<RsqrtGradient>(*context);
  SinOp::attachInterface<SinGradient>(*context);
  ErfOp::attachInterface<ErfGradient>(*context);
  CosOp::attachInterface<CosGradient>(*context);
  TanhOp::attachInterface<TanhGradient>(*context);
  SigmoidOp::attachInterface<SigmoidGradient>(*context);
  ReluOp::attachInterface<ReluGradient>(*context);
  SiluOp::attachInterface<SiluGradient>(*context);
  GeluOp::attachInterface<GeluGradient>(*context);
  LeakyReluOp::attachInterface<LeakyReluGradient>(*context);
  CastOp::attachInterface<CastGradient>(*context);
  AddOp::attachInterface<AddGradient>(*context);
  SubOp::attachInterface<SubGradient>(*context);
  MulOp::attachInterface<MulGradient>(*context);
  DivOp::attachInterface<DivGradient>(*context);
  PowOp::attachInterface<PowGradient>(*context);
  MaxOp::attachInterface<MaxGradient>(*context);
  MinOp::attachInterface<MinGradient>(*context);
  SelectOp::attachInterface<SelectGradient>(*context);
}

} // namespace mlir::kiln
