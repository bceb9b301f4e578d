#include "tools/kiln-run/describe.h"

#include <algorithm>
#include <cstdio>
#include <cstring>
#include <map>
#include <set>
#include <vector>

#include "absl/strings/ascii.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "absl/strings/str_join.h"
#include "runtime/artifact/interface.h"

namespace kiln {
namespace {

using artifact::Artifact;
using artifact::BufferRole;
using artifact::TensorBinding;

std::string TypeText(DType dtype, const std::vector<int64_t>& shape) {
  return absl::StrCat(DTypeName(dtype), "[", absl::StrJoin(shape, ","), "]");
}

// Rows of cells as lines, each column as wide as its widest cell, every line
// indented by `indent`.
std::string Table(const std::vector<std::vector<std::string>>& rows,
                  const std::string& indent) {
  std::vector<size_t> widths;
  for (const auto& row : rows) {
    widths.resize(std::max(widths.size(), row.size()));
    for (size_t c = 0; c < row.size(); ++c) {
      widths[c] = std::max(widths[c], row[c].size());
    }
  }
  std::string out;
  for (const auto& row : rows) {
    std::string line = indent;
    for (size_t c = 0; c < row.size(); ++c) {
      absl::StrAppend(&line, row[c]);
      if (c + 1 < row.size()) line.append(widths[c] - row[c].size() + 2, ' ');
    }
    absl::StripTrailingAsciiWhitespace(&line);
    absl::StrAppend(&out, line, "\n");
  }
  return out;
}

std::string InitText(const artifact::Parameter& p) {
  switch (p.init) {
    case InitKind::kZeros:
      return "zeros";
    case InitKind::kOnes:
      return "ones";
    case InitKind::kConstant:
      return absl::StrCat("constant ", p.init_a);
    case InitKind::kNormal:
      return absl::StrCat("normal (mean ", p.init_a, ", std ", p.init_b, ")");
    case InitKind::kUniform:
      return absl::StrCat("uniform [", p.init_a, ", ", p.init_b, ")");
    case InitKind::kXavier:
      return absl::StrCat("xavier (gain ", p.init_a, ")");
    case InitKind::kKaiming:
      return absl::StrCat("kaiming (gain ", p.init_a, ")");
  }
  return "?";
}

// Element `at` of a buffer of `dtype`, for the eye.
double ElementValue(DType dtype, const char* at) {
  auto load = [at](auto value) {
    std::memcpy(&value, at, sizeof(value));
    return value;
  };
  switch (dtype) {
    case DType::kF32:
      return load(float{});
    case DType::kBF16:
      return Bf16ToF32(load(uint16_t{}));
    case DType::kF16:
      return F16ToF32(load(uint16_t{}));
    case DType::kI32:
      return load(int32_t{});
    case DType::kI64:
      return static_cast<double>(load(int64_t{}));
    case DType::kI1:
      return load(uint8_t{});
  }
  return 0;
}

// The first few elements of an initial value: "carried: 0.0123, -0.5, 1,
// ...".
std::string FirstValues(const artifact::ResidentBuffer& b) {
  constexpr size_t kShown = 3;
  const size_t width = DTypeSize(b.dtype);
  const absl::string_view bytes = b.initial_value->bytes;
  const size_t count = bytes.size() / width;
  std::vector<std::string> values;
  for (size_t i = 0; i < std::min(count, kShown); ++i) {
    values.push_back(absl::StrFormat(
        "%.4g", ElementValue(b.dtype, bytes.data() + i * width)));
  }
  if (count > kShown) values.push_back("...");
  return absl::StrCat("carried: ", absl::StrJoin(values, ", "));
}

// The values the artifact carries for its resident buffers (an imported
// model's weights, large constants).
std::string CarriedText(const Artifact& a) {
  size_t buffers = 0;
  uint64_t bytes = 0;
  for (const artifact::ResidentBuffer& b : a.resident_buffers) {
    if (!b.initial_value) continue;
    ++buffers;
    bytes += b.initial_value->bytes.size();
  }
  if (buffers == 0) {
    return "weights: none carried (parameters start from their "
           "initialisers)\n";
  }
  return absl::StrCat(
      "weights: ", buffers, buffers == 1 ? " buffer starts" : " buffers start",
      " from values the artifact carries, ", BytesText(bytes), "\n");
}

// What compiled it, for which devices, with which storage types.
std::string Header(const Artifact& a, const std::string& path,
                   uint64_t file_bytes) {
  std::string out = absl::StrFormat(
      "%s: kiln artifact, format %d, %s, checksum %016x\n", path,
      a.format_version, BytesText(file_bytes), a.checksum);
  absl::StrAppend(
      &out, "compiled by: ",
      a.producer.empty() ? "not recorded (an older kilnc)" : a.producer, "\n");
  size_t cubins = 0;
  std::set<std::string> image_archs;
  for (const artifact::Kernel& k : a.kernels) {
    bool cubin = false;
    for (const artifact::KernelImage& image : k.images) {
      image_archs.insert(image.arch);
      cubin = cubin || !image.cubin.empty();
    }
    cubins += cubin;
  }
  absl::StrAppend(&out, "target: ", absl::StrJoin(a.target_archs, ", "),
                  " (PTX for ", absl::StrJoin(image_archs, ", "), "; ", cubins,
                  " of ", a.kernels.size(), " kernels with a cubin)\n");
  std::set<std::string> params, masters;
  for (const artifact::ResidentBuffer& b : a.resident_buffers) {
    if (b.role == BufferRole::kParameter) {
      params.insert(std::string(DTypeName(b.dtype)));
    }
    if (b.role == BufferRole::kMasterWeight) {
      masters.insert(std::string(DTypeName(b.dtype)));
    }
  }
  std::string precision =
      params.empty()
          ? "no parameters"
          : absl::StrCat(absl::StrJoin(params, " and "), " parameters");
  if (!masters.empty()) {
    absl::StrAppend(&precision, " with ", absl::StrJoin(masters, " and "),
                    " master weights");
  }
  absl::StrAppend(&out, "precision: ", precision, "\n", CarriedText(a));
  return out;
}

std::string Entries(const Artifact& a) {
  std::string out;
  for (const artifact::Entry& e : a.entries) {
    absl::StrAppend(&out, "\nentry ", e.name, ": ", e.launches.size(),
                    e.launches.size() == 1 ? " launch" : " launches",
                    ", arena ", BytesText(e.arena_size), "\n");
    std::vector<std::vector<std::string>> rows;
    for (const TensorBinding& b : e.inputs) {
      rows.push_back(
          {"in", b.name, TypeText(b.dtype, b.shape), InputRole(a, b)});
    }
    for (const TensorBinding& b : e.outputs) {
      rows.push_back(
          {"out", b.name, TypeText(b.dtype, b.shape), OutputRole(a, b)});
    }
    absl::StrAppend(&out, Table(rows, "  "));
  }
  return out;
}

std::string Buffers(const Artifact& a) {
  std::map<uint32_t, const artifact::Parameter*> inits;
  for (const artifact::Parameter& p : a.parameters) inits[p.buffer] = &p;
  std::vector<std::vector<std::string>> rows;
  uint64_t total = 0;
  for (size_t i = 0; i < a.resident_buffers.size(); ++i) {
    const artifact::ResidentBuffer& b = a.resident_buffers[i];
    total += b.byte_size;
    auto init = inits.find(static_cast<uint32_t>(i));
    rows.push_back({b.name, TypeText(b.dtype, b.shape), RoleText(b.role),
                    b.initial_value       ? FirstValues(b)
                    : init == inits.end() ? ""
                                          : InitText(*init->second)});
  }
  return absl::StrCat("\nparameters and state: ", a.resident_buffers.size(),
                      " resident buffers, ", BytesText(total), "\n",
                      Table(rows, "  "));
}

std::string Kernels(const Artifact& a) {
  std::map<std::string, std::vector<std::string>> families;
  for (const artifact::Kernel& k : a.kernels) {
    families[KernelFamily(k.name)].push_back(k.name);
  }
  std::string out = absl::StrCat("\nkernels: ", a.kernels.size(), " in ",
                                 families.size(), " families\n");
  for (const auto& [family, names] : families) {
    absl::StrAppend(&out, "  ", family, " (", names.size(),
                    "): ", absl::StrJoin(names, " "), "\n");
  }
  return out;
}

std::string Memory(const Artifact& a) {
  std::map<BufferRole, uint64_t> by_role;
  uint64_t resident = 0;
  for (const artifact::ResidentBuffer& b : a.resident_buffers) {
    by_role[b.role] += b.byte_size;
    resident += b.byte_size;
  }
  std::vector<std::string> parts;
  for (const auto& [role, bytes] : by_role) {
    parts.push_back(absl::StrCat(RoleText(role), " ", BytesText(bytes)));
  }
  std::string out = absl::StrCat("\nmemory: resident ", BytesText(resident));
  if (!parts.empty())
    absl::StrAppend(&out, " (", absl::StrJoin(parts, ", "), ")");
  absl::StrAppend(&out, "\n");
  std::vector<std::vector<std::string>> rows;
  for (const artifact::Entry& e : a.entries) {
    rows.push_back(
        {e.name, "arena " + BytesText(e.arena_size),
         "with the resident buffers " + BytesText(resident + e.arena_size)});
  }
  return out + Table(rows, "  ");
}

}  // namespace

std::string BytesText(uint64_t bytes) {
  if (bytes < 1024) return absl::StrCat(bytes, " bytes");
  static constexpr const char* kUnits[] = {"KiB", "MiB", "GiB", "TiB"};
  double value = static_cast<double>(bytes) / 1024;
  int unit = 0;
  while (value >= 1024 && unit < 3) {
    value /= 1024;
    ++unit;
  }
  return absl::StrFormat("%d bytes (%.3g %s)", bytes, value, kUnits[unit]);
}

std::string KernelFamily(const std::string& kernel_name) {
  const size_t cut = kernel_name.rfind('_');
  if (cut == std::string::npos || cut + 1 == kernel_name.size()) {
    return kernel_name;
  }
  for (size_t i = cut + 1; i < kernel_name.size(); ++i) {
    if (!absl::ascii_isxdigit(static_cast<unsigned char>(kernel_name[i]))) {
      return kernel_name;
    }
  }
  return kernel_name.substr(0, cut);
}

std::string RoleText(BufferRole role) {
  switch (role) {
    case BufferRole::kParameter:
      return "parameter";
    case BufferRole::kState:
      return "model state";
    case BufferRole::kOptimizerState:
      return "optimizer moment";
    case BufferRole::kGradient:
      return "gradient";
    case BufferRole::kMasterWeight:
      return "master weight";
    case BufferRole::kConstant:
      return "constant";
  }
  return "unknown role";
}

std::string InputRole(const Artifact& a, const TensorBinding& input) {
  switch (artifact::SourceOf(input)) {
    case artifact::InputSource::kResident:
      return RoleText(a.resident_buffers[input.buffer.index].role) +
             ", supplied by the runtime";
    case artifact::InputSource::kLr:
      return "learning rate, supplied by the runtime";
    case artifact::InputSource::kStep:
      return "update number, supplied by the runtime";
    case artifact::InputSource::kCaller:
      break;
  }
  if (!input.valid_range) return "batch input";
  return absl::StrCat("batch input, values in ", input.valid_range->ToString(),
                      " (", input.valid_range->use, ")");
}

std::string OutputRole(const Artifact& a, const TensorBinding& output) {
  if (output.buffer.space == artifact::MemorySpace::kResident) {
    return RoleText(a.resident_buffers[output.buffer.index].role) +
           ", updated in place";
  }
  return "returned";
}

std::string DescribeArtifact(const Artifact& artifact, const std::string& path,
                             uint64_t file_bytes) {
  return absl::StrCat(Header(artifact, path, file_bytes), Entries(artifact),
                      Buffers(artifact), Kernels(artifact), Memory(artifact));
}

}  // namespace kiln
