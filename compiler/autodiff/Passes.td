//===- Passes.td - the autodiff pass -----------------------------*- tablegen -*-===//

#ifndef KILN_AUTODIFF_PASSES_TD
#define KILN_AUTODIFF_PASSES_TD

include "mlir/Pass/PassBase.td"

def KilnAutodiff : Pass<"kiln-autodiff", "mlir::ModuleOp"> {
  let summary = "Builds the reverse-mode gradient function of a loss function";
  let description = [{
    For a function whose first result is a scalar (rank-0) float loss, adds a
    function `<name>_grad` with the same arguments that returns the loss
    followed by the gradient of every differentiated argument, in argument
    order. By default the differentiated arguments are those marked
    `kiln.param`; `wrt` picks argument positions instead. Each gradient result
    is named `grad.<argument name>` (`kiln.name`). Gradients come from the
    rules the ops carry (GradientOpInterface); ops marked non-differentiable
    pass no gradient, and an op on the path from an argument to the loss
    without a rule is an error.
  }];
  let options = [
    Option<"function", "function", "std::string", /*default=*/"\"\"",
           "Name of the loss function (default: the only function, or @loss)">,
    ListOption<"wrt", "wrt", "unsigned",
               "Argument positions to differentiate (default: kiln.param args)">,
  ];
  let dependentDialects = ["::mlir::kiln::KilnDialect"];
}

#endif // KILN_AUTODIFF_PASSES_TD
