//===- ir_fuzz_dictionary.cpp - the IR fuzzers' dictionary of tokens ------===//
//
// Writes a libFuzzer dictionary of kiln IR's tokens to stdout, generated
// from the dialect itself so that it follows every new op: the names of the
// registered ops (kiln, func, arith) and of their attributes from the
// registry; the keywords of the ops' assembly formats and of hand-written
// attribute parsers, the enum cases and the attribute mnemonics from the
// dialect's generated and parser sources named on the command line; and
// the builtin types kiln tensors take.
//
// Each entry's name says its class, which the mutation drivers use to swap
// a token for another of its class (tests/fuzz/dictionary.h):
//   op_<form>   an op name; ops of one form (operand and result counts,
//               attribute names) are likely to share their syntax
//   attr        an attribute name     keyword   an assembly keyword
//   enum_<E>    a case of enum E      type      an element type
//   mnemonic    #kiln.<mnemonic>      number    a number worth trying
//   number_dim  a tensor dimension worth trying
// libFuzzer itself ignores the names (tools/fuzz/run_ir_fuzzer.sh -dict=).
//
// Usage: ir_fuzz_dictionary SOURCE...   (generated .inc files, parser .cpp)
//
//===----------------------------------------------------------------------===//

#include "dialects/kiln/IR/KilnDialect.h"

#include "mlir/Dialect/Arith/IR/Arith.h"
#include "mlir/Dialect/Func/IR/FuncOps.h"
#include "mlir/IR/MLIRContext.h"
#include "mlir/IR/OpDefinition.h"
#include "mlir/IR/OperationSupport.h"

#include <cstdio>
#include <fstream>
#include <map>
#include <regex>
#include <set>
#include <sstream>
#include <string>
#include <utility>
#include <vector>

namespace {

/// Whether ops of `name` have exactly N operands, for N in [2, 8).
template <unsigned N = 2>
int fixedOperandCount(mlir::RegisteredOperationName name) {
  if constexpr (N < 8) {
    if (name.hasTrait<mlir::OpTrait::NOperands<N>::template Impl>())
      return N;
    return fixedOperandCount<N + 1>(name);
  }
  return -1;
}

/// What an op's syntax likely depends on: its operand and result counts
/// and its attribute names ("2:1:" for kiln.add, "1:1:dims,keepdim").
std::string formOf(mlir::RegisteredOperationName name) {
  std::string operands = name.hasTrait<mlir::OpTrait::ZeroOperands>() ? "0"
                         : name.hasTrait<mlir::OpTrait::OneOperand>() ? "1"
                         : name.hasTrait<mlir::OpTrait::VariadicOperands>()
                             ? "v"
                             : std::to_string(fixedOperandCount(name));
  std::string results = name.hasTrait<mlir::OpTrait::ZeroResults>() ? "0"
                        : name.hasTrait<mlir::OpTrait::OneResult>() ? "1"
                                                                    : "n";
  std::string form = operands + ":" + results + ":";
  for (mlir::StringAttr attr : name.getAttributeNames())
    form += attr.getValue().str() + ",";
  return form;
}

/// The sub-matches of every match of `pattern` in `text`.
std::vector<std::smatch> extract(const std::string &text,
                                 const std::regex &pattern) {
  return {std::sregex_iterator(text.begin(), text.end(), pattern),
          std::sregex_iterator()};
}

} // namespace

int main(int argc, char **argv) {
  mlir::DialectRegistry registry;
  registry.insert<mlir::kiln::KilnDialect, mlir::func::FuncDialect,
                  mlir::arith::ArithDialect>();
  mlir::MLIRContext context(registry);
  context.loadAllAvailableDialects();

  // Class name -> tokens, sorted, each once.
  std::map<std::string, std::set<std::string>> entries;
  std::map<std::string, int> forms;
  for (mlir::RegisteredOperationName op : context.getRegisteredOperations()) {
    if (op.getDialectNamespace() == "builtin")
      continue;
    auto [form, fresh] = forms.try_emplace(formOf(op), forms.size());
    entries["op_" + std::to_string(form->second)].insert(
        op.getStringRef().str());
    for (mlir::StringAttr attr : op.getAttributeNames())
      entries["attr"].insert(attr.getValue().str());
  }
  for (llvm::StringRef attr : {mlir::kiln::KilnDialect::kParamAttrName,
                               mlir::kiln::KilnDialect::kStateAttrName,
                               mlir::kiln::KilnDialect::kNameAttrName})
    entries["attr"].insert(attr.str());

  const std::regex keyword(R"re(parse(?:Optional)?Keyword\("(\w+)"\))re");
  const std::regex enumCase(R"re(case (\w+)::\w+: return "(\w+)";)re");
  const std::regex mnemonic(R"re(getMnemonic\(\) \{\s*return \{"(\w+)"\};)re");
  for (int i = 1; i < argc; ++i) {
    std::ifstream file(argv[i]);
    if (!file) {
      std::fprintf(stderr, "ir_fuzz_dictionary: cannot read %s\n", argv[i]);
      return 1;
    }
    std::stringstream contents;
    contents << file.rdbuf();
    const std::string text = contents.str();
    for (const std::smatch &m : extract(text, keyword))
      entries["keyword"].insert(m[1]);
    for (const std::smatch &m : extract(text, enumCase))
      entries["enum_" + m[1].str()].insert(m[2]);
    for (const std::smatch &m : extract(text, mnemonic))
      entries["mnemonic"].insert("#kiln." + m[1].str());
  }
  // The builtin types of kiln's tensors, and numbers at the edges of what
  // shapes, indices and floats hold.
  entries["type"] = {"f32", "bf16", "f16", "f64",  "i1",
                     "i8",  "i32",  "i64", "index"};
  entries["number"] = {
      "0",          "1",          "-1",          "2",
      "3",          "7",          "64",          "65537",
      "2147483647", "2147483648", "-2147483649", "9223372036854775807",
      "1.0e+39",    "-0.0",       "1.0e-45",     "0x7FC00000"};
  entries["number_dim"] = {"0",  "1",     "2",          "3",
                           "7",  "64",    "65537",      "2147483648",
                           "4611686018427387904", "9223372036854775807"};

  std::printf("# The kiln IR fuzzers' dictionary, generated by "
              "//tests/fuzz:ir_fuzz_dictionary\n# from the registered ops "
              "and the dialect's sources: do not edit.\n");
  for (const auto &[kind, tokens] : entries)
    for (const std::string &token : tokens)
      std::printf("%s=\"%s\"\n", kind.c_str(), token.c_str());
  return 0;
}
