//===- EinsumImporters.cpp - ONNX Einsum as batched matrix products -------===//
//
// Einsum of one operand (sums and a transpose) or two operands without a
// repeated index inside one operand: what attention code exports
// ("bhqd,bhkd->bhqk", "bhqk,bhkd->bhqd", "bij,bjk->bik", "...ij,...jk->...ik").
// Indices only one operand has and the output lacks are summed first; then
// the indices both operands and the output share are batch dimensions,
// those both operands share and the output lacks are contracted, and the
// rest are the rows and columns of one kiln.matmul (with its operand
// transposes where an operand is already laid out that way), reshaped and
// transposed into the output's order. Diagonals (an index twice in one
// operand) and more than two operands are rejected by name.
//
//===----------------------------------------------------------------------===//

#include "compiler/import/onnx/GraphImporter.h"

#include "llvm/ADT/STLExtras.h"
#include "llvm/ADT/StringExtras.h"

#include <numeric>

namespace mlir::kiln::onnx_import {
namespace {

/// An index: a letter, or one dimension the ellipsis stands for (numbered
/// from the right, so that the ellipses of the operands align as numpy
/// broadcasting does).
using Label = int;
constexpr Label kEllipsisBase = 1000;

using Labels = llvm::SmallVector<Label, 8>;

/// One term of the equation, e.g. "b...ij".
struct Term {
  Labels letters; // the ellipsis's place marked by kEllipsisBase - 1
  bool hasEllipsis = false;
};

FailureOr<Term> parseTerm(OnnxNode &node, llvm::StringRef text) {
  Term term;
  for (size_t i = 0; i < text.size(); ++i) {
    if (text.substr(i).starts_with("...")) {
      if (term.hasEllipsis)
        return node.emitError()
                   << "Einsum's term '" << text << "' has two ellipses",
               failure();
      term.hasEllipsis = true;
      term.letters.push_back(kEllipsisBase - 1);
      i += 2;
    } else if (llvm::isAlpha(text[i])) {
      term.letters.push_back(text[i]);
    } else {
      return node.emitError() << "Einsum's term '" << text
                              << "' has the character '" << text[i] << "'",
             failure();
    }
  }
  return term;
}

/// The labels of `term` for an operand of rank `rank`, the ellipsis
/// expanded to `rank - letters` dimensions.
FailureOr<Labels> expand(OnnxNode &node, const Term &term, int64_t rank,
                         llvm::StringRef text) {
  int64_t letters = term.letters.size() - (term.hasEllipsis ? 1 : 0);
  int64_t spread = rank - letters;
  if (spread < 0 || (!term.hasEllipsis && spread != 0))
    return node.emitError() << "Einsum's term '" << text << "' does not fit "
                            << "an operand of rank " << rank,
           failure();
  Labels labels;
  for (Label l : term.letters) {
    if (l != kEllipsisBase - 1) {
      labels.push_back(l);
      continue;
    }
    for (int64_t i = spread; i > 0; --i)
      labels.push_back(kEllipsisBase + i - 1);
  }
  return labels;
}

int64_t product(llvm::ArrayRef<int64_t> dims) {
  return std::accumulate(dims.begin(), dims.end(), int64_t{1},
                         std::multiplies<int64_t>());
}

/// An operand with the label of each of its dimensions.
struct Operand {
  Value value;
  Labels labels;

  int64_t size(Label l) const {
    return KilnBuilder::typeOf(value).getDimSize(llvm::find(labels, l) -
                                                 labels.begin());
  }
  bool has(Label l) const { return llvm::is_contained(labels, l); }
};

/// Sums `operand` over the labels `keep` does not hold.
void sumOthers(OnnxNode &node, Operand &operand,
               llvm::function_ref<bool(Label)> keep) {
  llvm::SmallVector<int64_t> dims;
  Labels kept;
  for (auto [d, l] : llvm::enumerate(operand.labels)) {
    if (keep(l))
      kept.push_back(l);
    else
      dims.push_back(d);
  }
  if (dims.empty())
    return;
  operand.value = node.builder().create<ReduceSumOp>(node.loc(), operand.value,
                                                     dims, false);
  operand.labels = kept;
}

/// `operand` transposed into `order` (no op when it is in it already).
void arrange(OnnxNode &node, Operand &operand, const Labels &order) {
  if (operand.labels == order)
    return;
  llvm::SmallVector<int64_t> perm;
  for (Label l : order)
    perm.push_back(llvm::find(operand.labels, l) - operand.labels.begin());
  operand.value = node.kb().transpose(operand.value, perm);
  operand.labels = order;
}

Labels concat(std::initializer_list<llvm::ArrayRef<Label>> groups) {
  Labels all;
  for (llvm::ArrayRef<Label> g : groups)
    all.append(g.begin(), g.end());
  return all;
}

/// One kiln.matmul for two operands already summed over their own indices.
Operand contract(OnnxNode &node, Operand a, Operand b, const Labels &out) {
  Labels batch, contracted, rows, columns;
  for (Label l : out) {
    if (a.has(l) && b.has(l))
      batch.push_back(l);
    else if (a.has(l))
      rows.push_back(l);
    else
      columns.push_back(l);
  }
  for (Label l : a.labels)
    if (b.has(l) && !llvm::is_contained(out, l))
      contracted.push_back(l);
  // An operand laid out [batch, K, M] (or [batch, N, K]) uses matmul's
  // transpose instead of a transpose op.
  bool transposeA = a.labels == concat({batch, contracted, rows});
  bool transposeB = b.labels == concat({batch, columns, contracted});
  if (!transposeA)
    arrange(node, a, concat({batch, rows, contracted}));
  if (!transposeB)
    arrange(node, b, concat({batch, contracted, columns}));
  auto sizes = [](const Operand &o, const Labels &labels) {
    llvm::SmallVector<int64_t> s;
    for (Label l : labels)
      s.push_back(o.size(l));
    return s;
  };
  llvm::SmallVector<int64_t> batchSizes = sizes(a, batch);
  int64_t m = product(sizes(a, rows)), k = product(sizes(a, contracted)),
          n = product(sizes(b, columns));
  auto matrix = [&](Value v, int64_t first, int64_t second) {
    llvm::SmallVector<int64_t> shape(batchSizes);
    shape.append({first, second});
    return node.reshape(v, shape);
  };
  Value lhs = transposeA ? matrix(a.value, k, m) : matrix(a.value, m, k);
  Value rhs = transposeB ? matrix(b.value, n, k) : matrix(b.value, k, n);
  Value product = node.kb().matmul(lhs, rhs, transposeA, transposeB);
  llvm::SmallVector<int64_t> shape(batchSizes);
  llvm::append_range(shape, sizes(a, rows));
  llvm::append_range(shape, sizes(b, columns));
  return Operand{node.reshape(product, shape), concat({batch, rows, columns})};
}

LogicalResult importEinsum(OnnxNode &node) {
  std::string equation = node.stringAttr("equation", "");
  llvm::erase_if(equation, [](char c) { return c == ' '; });
  llvm::StringRef text(equation);
  auto [lhsText, outText] = text.split("->");
  bool explicitOutput = text.contains("->");
  llvm::SmallVector<llvm::StringRef> termTexts;
  lhsText.split(termTexts, ',');
  if (termTexts.size() != node.numInputs())
    return node.emitError()
           << "Einsum's equation '" << equation << "' has " << termTexts.size()
           << " terms for " << node.numInputs() << " inputs";
  if (termTexts.size() > 2)
    return node.unsupported("an Einsum of " + std::to_string(termTexts.size()) +
                            " operands");

  llvm::SmallVector<Operand> operands;
  int64_t spread = 0;
  for (auto [i, termText] : llvm::enumerate(termTexts)) {
    Value v = node.input(i);
    if (!v)
      return failure();
    if (!llvm::isa<FloatType>(KilnBuilder::elementOf(v)))
      return node.unsupported("an integer Einsum (kiln.matmul is floating "
                              "point)");
    auto term = parseTerm(node, termText);
    if (failed(term))
      return failure();
    auto labels =
        expand(node, *term, KilnBuilder::typeOf(v).getRank(), termText);
    if (failed(labels))
      return failure();
    for (Label l : *labels)
      if (llvm::count(*labels, l) > 1)
        return node.unsupported("the index '" + std::string(1, char(l)) +
                                "' twice in the term '" + termText.str() +
                                "' (a diagonal)");
    for (Label l : *labels)
      if (l >= kEllipsisBase)
        spread = std::max<int64_t>(spread, l - kEllipsisBase + 1);
    operands.push_back(Operand{v, *labels});
  }

  // The output's labels: as written, or (implicit mode) the ellipsis's
  // dimensions then the letters that occur once, alphabetically.
  Labels out;
  if (explicitOutput) {
    auto term = parseTerm(node, outText);
    if (failed(term))
      return failure();
    for (Label l : term->letters) {
      if (l != kEllipsisBase - 1) {
        out.push_back(l);
        continue;
      }
      for (int64_t i = spread; i > 0; --i)
        out.push_back(kEllipsisBase + i - 1);
    }
  } else {
    for (int64_t i = spread; i > 0; --i)
      out.push_back(kEllipsisBase + i - 1);
    Labels once;
    for (const Operand &o : operands)
      for (Label l : o.labels)
        if (l < kEllipsisBase)
          once.push_back(l);
    llvm::sort(once);
    for (Label l : once)
      if (llvm::count(once, l) == 1)
        out.push_back(l);
  }
  for (Label l : out) {
    bool known =
        llvm::any_of(operands, [&](const Operand &o) { return o.has(l); });
    if (!known || llvm::count(out, l) > 1)
      return node.emitError() << "Einsum's output '" << outText
                              << "' names an index no input has, or one "
                                 "twice";
  }
  // Shared indices must have one size (kiln's Einsum does not broadcast).
  if (operands.size() == 2)
    for (Label l : operands[0].labels)
      if (operands[1].has(l) && operands[0].size(l) != operands[1].size(l))
        return node.unsupported("indices of different sizes (" +
                                std::to_string(operands[0].size(l)) + " and " +
                                std::to_string(operands[1].size(l)) +
                                "): broadcasting");

  // Indices one operand alone has and the output lacks are summed first.
  for (auto [i, o] : llvm::enumerate(operands)) {
    const Operand *other = operands.size() == 2 ? &operands[1 - i] : nullptr;
    sumOthers(node, o, [&](Label l) {
      return llvm::is_contained(out, l) || (other && other->has(l));
    });
  }
  Operand result = operands.size() == 2
                       ? contract(node, operands[0], operands[1], out)
                       : operands[0];
  arrange(node, result, out);
  node.setResult(0, result.value);
  return success();
}

} // namespace

void registerEinsumImporters(OpImporterRegistry &registry) {
  registry.add("Einsum", importEinsum);
}

} // namespace mlir::kiln::onnx_import
