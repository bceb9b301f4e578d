//===- KilnAttrs.td - attributes and enums of the kiln dialect -*- tablegen -*-===//

#ifndef KILN_ATTRS_TD
#define KILN_ATTRS_TD

include "dialects/kiln/IR/KilnBase.td"

//===----------------------------------------------------------------------===//
// Enums (printed as bare keywords inside op assembly)
//===----------------------------------------------------------------------===//

def Kiln_CmpPredicate : I32EnumAttr<"CmpPredicate", "comparison predicate", [
    I32EnumAttrCase<"eq", 0>, I32EnumAttrCase<"ne", 1>,
    I32EnumAttrCase<"lt", 2>, I32EnumAttrCase<"le", 3>,
    I32EnumAttrCase<"gt", 4>, I32EnumAttrCase<"ge", 5>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_CmpPredicateAttr : EnumAttr<Kiln_Dialect, Kiln_CmpPredicate, "cmp">;

def Kiln_GeluApproximation : I32EnumAttr<"GeluApproximation",
    "GELU formula: exact (erf) or the tanh approximation", [
    I32EnumAttrCase<"none", 0>, I32EnumAttrCase<"tanh", 1>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_GeluApproximationAttr
    : EnumAttr<Kiln_Dialect, Kiln_GeluApproximation, "gelu_approximation">;

def Kiln_ConvLayout : I32EnumAttr<"ConvLayout",
    "activation layout of conv2d and pooling", [
    I32EnumAttrCase<"nchw", 0>, I32EnumAttrCase<"nhwc", 1>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ConvLayoutAttr : EnumAttr<Kiln_Dialect, Kiln_ConvLayout, "layout">;

def Kiln_ResizeMode : I32EnumAttr<"ResizeMode",
    "how kiln.resize reads its input", [
    I32EnumAttrCase<"nearest", 0>, I32EnumAttrCase<"linear", 1>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ResizeModeAttr : EnumAttr<Kiln_Dialect, Kiln_ResizeMode, "resize_mode">;

// The values are those of kiln::resize::coordinates in
// codegen/cuda/kernels/resize_layout.cuh.
def Kiln_ResizeCoordinates : I32EnumAttr<"ResizeCoordinates",
    "ONNX Resize's coordinate transformation", [
    I32EnumAttrCase<"half_pixel", 0>, I32EnumAttrCase<"pytorch_half_pixel", 1>,
    I32EnumAttrCase<"align_corners", 2>, I32EnumAttrCase<"asymmetric", 3>,
    I32EnumAttrCase<"half_pixel_symmetric", 4>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ResizeCoordinatesAttr
    : EnumAttr<Kiln_Dialect, Kiln_ResizeCoordinates, "resize_coordinates">;

// The values are those of kiln::resize::rounding.
def Kiln_ResizeRounding : I32EnumAttr<"ResizeRounding",
    "how nearest-neighbour resizing rounds a coordinate", [
    I32EnumAttrCase<"round_prefer_floor", 0>,
    I32EnumAttrCase<"round_prefer_ceil", 1>, I32EnumAttrCase<"floor", 2>,
    I32EnumAttrCase<"ceil", 3>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ResizeRoundingAttr
    : EnumAttr<Kiln_Dialect, Kiln_ResizeRounding, "resize_rounding">;

def Kiln_RnnFunction : I32EnumAttr<"RnnFunction",
    "cell function of kiln.rnn", [
    I32EnumAttrCase<"lstm", 0>, I32EnumAttrCase<"gru", 1>,
    I32EnumAttrCase<"elman", 2>, I32EnumAttrCase<"slstm", 3>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_RnnFunctionAttr : EnumAttr<Kiln_Dialect, Kiln_RnnFunction, "rnn_function">;

def Kiln_Reduction : I32EnumAttr<"Reduction",
    "how a loss reduces over the batch", [
    I32EnumAttrCase<"mean", 0>, I32EnumAttrCase<"sum", 1>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}
def Kiln_ReductionAttr : EnumAttr<Kiln_Dialect, Kiln_Reduction, "reduction">;

def Kiln_InitKind : I32EnumAttr<"InitKind", "parameter initialiser", [
    I32EnumAttrCase<"zeros", 0>, I32EnumAttrCase<"ones", 1>,
    I32EnumAttrCase<"constant", 2>, I32EnumAttrCase<"normal", 3>,
    I32EnumAttrCase<"uniform", 4>, I32EnumAttrCase<"xavier", 5>,
    I32EnumAttrCase<"kaiming", 6>]> {
  let cppNamespace = "::mlir::kiln";
  let genSpecializedAttr = 0;
}

//===----------------------------------------------------------------------===//
// Parameter initialiser
//===----------------------------------------------------------------------===//

def Kiln_InitAttr : AttrDef<Kiln_Dialect, "Init"> {
  let mnemonic = "init";
  let summary = "How a parameter is initialised";
  let description = [{
    The value of a `kiln.param` argument attribute. Forms and defaults:

    ```
    #kiln.init<zeros>
    #kiln.init<ones>
    #kiln.init<constant, value = 0.5>          // value required
    #kiln.init<normal, mean = 0.0, std = 0.02>  // mean 0, std 1
    #kiln.init<uniform, low = -0.1, high = 0.1> // low 0, high 1
    #kiln.init<xavier, gain = 1.0>              // U(+-gain*sqrt(6/(fan_in+fan_out)))
    #kiln.init<kaiming, gain = 1.4142135>       // N(0, gain/sqrt(fan_in))
    ```

    Fans: for a rank-2 weight `[in, out]` (kiln's matmul convention `x @ W`),
    fan_in = in and fan_out = out; for rank >= 3 the shape is read as
    `[O, I, k...]` (an NCHW filter `[O, C, KH, KW]`): fan_in = I*prod(k) and
    fan_out = O*prod(k); for rank <= 1 both are the number of elements. An
    NHWC filter `[O, KH, KW, C]` gets the right fan_in, KH*KW*C, but fan_out
    O*KW*C: draw NHWC filters with `kaiming` (fan_in only) or explicit
    `normal`/`uniform` bounds rather than `xavier`. Random initialisers draw from the Philox stream derived from
    the run's seed and the argument's position, so one seed gives one model.
  }];
  let parameters = (ins "InitKind":$kind, APFloatParameter<"">:$first,
                        APFloatParameter<"">:$second);
  let hasCustomAssemblyFormat = 1;
  let genVerifyDecl = 1;
  let extraClassDeclaration = [{
    /// Names of the numeric keys `kind` accepts, in storage order
    /// (`first`, `second`); empty names are unused slots.
    static std::pair<::llvm::StringRef, ::llvm::StringRef> keyNames(InitKind kind);
    /// Default values of those keys.
    static std::pair<double, double> defaults(InitKind kind);
    /// Convenience getters: the defaults of `kind` filled in, or given values.
    static InitAttr get(::mlir::MLIRContext *context, InitKind kind);
    static InitAttr get(::mlir::MLIRContext *context, InitKind kind,
                        double first, double second);
    double getFirstValue() const { return getFirst().convertToDouble(); }
    double getSecondValue() const { return getSecond().convertToDouble(); }
  }];
}

#endif // KILN_ATTRS_TD
