#include "samples/data_import/tensor_files.h"

#include <zip.h>

#include <cstring>
#include <fstream>
#include <iterator>
#include <memory>
#include <set>

#include "absl/status/status.h"
#include "absl/strings/ascii.h"
#include "absl/strings/match.h"
#include "absl/strings/numbers.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_join.h"
#include "absl/strings/str_split.h"
#include "absl/strings/strip.h"
#include "kiln/dtype.h"
#include "nlohmann/json.hpp"

namespace kiln::data_import {
namespace {

absl::Status Bad(absl::string_view where, absl::string_view what) {
  return absl::InvalidArgumentError(absl::StrCat(where, ": ", what));
}

// Checks that `tensor` holds exactly its shape's bytes.
absl::Status CheckSize(absl::string_view where, const SourceTensor& tensor,
                       uint64_t bytes) {
  uint64_t expected = static_cast<uint64_t>(tensor.element_bytes);
  for (int64_t d : tensor.shape) {
    if (d < 0 || (d > 0 && expected > UINT64_MAX / static_cast<uint64_t>(d))) {
      return Bad(where, "the shape's size overflows");
    }
    expected *= static_cast<uint64_t>(d);
  }
  if (bytes != expected) {
    return Bad(where,
               absl::StrCat("holds ", bytes, " bytes of data, its shape ",
                            absl::StrJoin(tensor.shape, "x"), " of ",
                            tensor.dtype, " needs ", expected));
  }
  return absl::OkStatus();
}

// Sets kind and size from a kind letter (f, i, u, b) and a byte count; false
// for anything else.
bool SetKind(char letter, int bytes, SourceTensor* t) {
  t->element_bytes = bytes;
  switch (letter) {
    case 'f':
      t->kind = ElementKind::kFloat;
      return bytes == 2 || bytes == 4 || bytes == 8;
    case 'i':
    case 'u':
      t->kind = letter == 'i' ? ElementKind::kSigned : ElementKind::kUnsigned;
      return bytes == 1 || bytes == 2 || bytes == 4 || bytes == 8;
    case 'b':
      t->kind = ElementKind::kBool;
      return bytes == 1;
  }
  return false;
}

//===- .npy ---------------------------------------------------------------===//

// The value after `'key':` in a .npy header (a Python dict literal), up to
// the next top-level comma or the closing brace.
absl::StatusOr<absl::string_view> DictValue(absl::string_view where,
                                            absl::string_view dict,
                                            absl::string_view key) {
  const std::string quoted = absl::StrCat("'", key, "':");
  size_t at = dict.find(quoted);
  if (at == absl::string_view::npos) {
    return Bad(where, absl::StrCat("the .npy header has no '", key, "'"));
  }
  absl::string_view value = dict.substr(at + quoted.size());
  int depth = 0;
  size_t end = 0;
  for (; end < value.size(); ++end) {
    const char c = value[end];
    if (c == '(' || c == '[') ++depth;
    if (c == ')' || c == ']') --depth;
    if (depth == 0 && (c == ',' || c == '}')) break;
  }
  return absl::StripAsciiWhitespace(value.substr(0, end));
}

absl::Status ParseNpyHeader(absl::string_view where, absl::string_view dict,
                            SourceTensor* t) {
  absl::StatusOr<absl::string_view> descr = DictValue(where, dict, "descr");
  if (!descr.ok()) return descr.status();
  if (descr->size() < 4 || descr->front() != '\'' || descr->back() != '\'') {
    return Bad(where, absl::StrCat("structured arrays (descr ", *descr,
                                   ") are not supported"));
  }
  t->dtype = std::string(descr->substr(1, descr->size() - 2));
  int bytes = 0;
  const char order = t->dtype[0];
  if (order == '>' && t->dtype.substr(2) != "1") {
    return Bad(where, absl::StrCat("big-endian arrays (", t->dtype,
                                   ") are not supported: save as '<'"));
  }
  if (!absl::SimpleAtoi(t->dtype.substr(2), &bytes) ||
      !SetKind(t->dtype[1], bytes, t)) {
    return Bad(where, absl::StrCat("dtype '", t->dtype,
                                   "' is not supported (want floats, ints, "
                                   "unsigned ints or bools)"));
  }
  absl::StatusOr<absl::string_view> fortran =
      DictValue(where, dict, "fortran_order");
  if (!fortran.ok()) return fortran.status();
  if (*fortran != "False") {
    return Bad(where,
               "Fortran-ordered arrays are not supported (save a "
               "C-ordered array: np.ascontiguousarray)");
  }
  absl::StatusOr<absl::string_view> shape = DictValue(where, dict, "shape");
  if (!shape.ok()) return shape.status();
  absl::string_view inside = *shape;
  if (!absl::ConsumePrefix(&inside, "(") ||
      !absl::ConsumeSuffix(&inside, ")")) {
    return Bad(where, absl::StrCat("shape ", *shape, " is not a tuple"));
  }
  for (absl::string_view extent :
       absl::StrSplit(inside, ',', absl::SkipWhitespace())) {
    int64_t value = 0;
    if (!absl::SimpleAtoi(absl::StripAsciiWhitespace(extent), &value) ||
        value < 0) {
      return Bad(where, absl::StrCat("shape ", *shape,
                                     " is not a tuple of "
                                     "extents"));
    }
    t->shape.push_back(value);
  }
  return absl::OkStatus();
}

//===- .npz ---------------------------------------------------------------===//

struct ZipCloser {
  void operator()(zip_t* z) const { zip_discard(z); }
};
struct ZipFileCloser {
  void operator()(zip_file_t* f) const { zip_fclose(f); }
};

absl::StatusOr<std::vector<SourceTensor>> ReadNpz(const std::string& path) {
  int error = 0;
  std::unique_ptr<zip_t, ZipCloser> archive(
      zip_open(path.c_str(), ZIP_RDONLY | ZIP_CHECKCONS, &error));
  if (!archive) {
    zip_error_t e;
    zip_error_init_with_code(&e, error);
    absl::Status status =
        Bad(path, absl::StrCat("not a readable .npz (zip) file: ",
                               zip_error_strerror(&e)));
    zip_error_fini(&e);
    return status;
  }
  std::vector<SourceTensor> tensors;
  const zip_int64_t entries = zip_get_num_entries(archive.get(), 0);
  for (zip_int64_t i = 0; i < entries; ++i) {
    zip_stat_t st;
    if (zip_stat_index(archive.get(), i, 0, &st) != 0) {
      return Bad(path, zip_strerror(archive.get()));
    }
    absl::string_view name = st.name;
    const std::string where = absl::StrCat(path, ": member '", name, "'");
    if (!absl::ConsumeSuffix(&name, ".npy")) {
      return Bad(where, "is not an .npy array");
    }
    std::unique_ptr<zip_file_t, ZipFileCloser> member(
        zip_fopen_index(archive.get(), i, 0));
    if (!member) return Bad(where, zip_strerror(archive.get()));
    std::string bytes(st.size, '\0');
    const zip_int64_t got = zip_fread(member.get(), bytes.data(), st.size);
    if (got != static_cast<zip_int64_t>(st.size)) {
      return Bad(where, absl::StrCat("cannot be read: ",
                                     zip_file_strerror(member.get())));
    }
    absl::StatusOr<SourceTensor> tensor = ParseNpy(where, bytes);
    SourceTensor unreadable;
    if (!tensor.ok()) unreadable.error = std::string(tensor.status().message());
    SourceTensor& t = tensor.ok() ? *tensor : unreadable;
    t.name = std::string(name);
    tensors.push_back(std::move(t));
  }
  return tensors;
}

//===- safetensors --------------------------------------------------------===//

bool SetSafetensorsKind(const std::string& dtype, SourceTensor* t) {
  t->dtype = dtype;
  if (dtype == "BF16") {
    t->bfloat16 = true;
    return SetKind('f', 2, t);
  }
  if (dtype == "BOOL") return SetKind('b', 1, t);
  int bits = 0;
  if (dtype.size() < 2 || !absl::SimpleAtoi(dtype.substr(1), &bits) ||
      bits % 8 != 0) {
    return false;
  }
  const char letter = absl::ascii_tolower(dtype[0]);
  return (letter == 'f' || letter == 'i' || letter == 'u') &&
         SetKind(letter, bits / 8, t);
}

uint64_t ReadU64(const char* p) {
  uint64_t v = 0;
  for (int i = 7; i >= 0; --i) v = (v << 8) | static_cast<uint8_t>(p[i]);
  return v;
}

absl::StatusOr<std::string> ReadWholeFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  if (!in) return absl::NotFoundError(absl::StrCat("cannot read ", path));
  return std::string((std::istreambuf_iterator<char>(in)),
                     std::istreambuf_iterator<char>());
}

}  // namespace

int64_t SourceTensor::elements() const {
  int64_t n = 1;
  for (int64_t d : shape) n *= d;
  return n;
}

double SourceTensor::FloatAt(int64_t i) const {
  const uint8_t* p = data.data() + i * element_bytes;
  switch (element_bytes) {
    case 2: {
      uint16_t bits;
      std::memcpy(&bits, p, 2);
      return bfloat16 ? Bf16ToF32(bits) : F16ToF32(bits);
    }
    case 4: {
      float v;
      std::memcpy(&v, p, 4);
      return v;
    }
    default: {
      double v;
      std::memcpy(&v, p, 8);
      return v;
    }
  }
}

absl::int128 SourceTensor::IntegerAt(int64_t i) const {
  const uint8_t* p = data.data() + i * element_bytes;
  uint64_t bits = 0;
  std::memcpy(&bits, p, element_bytes);  // little endian
  if (kind != ElementKind::kSigned || element_bytes == 8) {
    return kind == ElementKind::kSigned
               ? absl::int128(static_cast<int64_t>(bits))
               : absl::int128(bits);
  }
  // Sign-extend the narrower signed integers.
  const int shift = 64 - 8 * element_bytes;
  return absl::int128(static_cast<int64_t>(bits << shift) >> shift);
}

std::string ElementIndex(const std::vector<int64_t>& shape, int64_t flat) {
  std::vector<int64_t> index(shape.size());
  for (size_t d = shape.size(); d-- > 0;) {
    index[d] = shape[d] > 0 ? flat % shape[d] : 0;
    flat = shape[d] > 0 ? flat / shape[d] : 0;
  }
  return absl::StrCat("[", absl::StrJoin(index, ", "), "]");
}

absl::StatusOr<SourceTensor> ParseNpy(absl::string_view where,
                                      absl::string_view bytes) {
  if (bytes.size() < 10 || bytes.substr(0, 6) != "\x93NUMPY") {
    return Bad(where, "not a .npy file (no \\x93NUMPY magic)");
  }
  const int major = static_cast<uint8_t>(bytes[6]);
  const size_t length_bytes = major == 1 ? 2 : 4;
  if (major < 1 || major > 3 || bytes.size() < 8 + length_bytes) {
    return Bad(where,
               absl::StrCat(".npy version ", major, " is not 1, 2 or 3"));
  }
  uint64_t header_bytes = 0;
  for (size_t i = length_bytes; i-- > 0;)
    header_bytes = (header_bytes << 8) | static_cast<uint8_t>(bytes[8 + i]);
  const size_t data_at = 8 + length_bytes + header_bytes;
  if (data_at > bytes.size()) return Bad(where, "the .npy header is cut off");
  SourceTensor t;
  absl::Status header =
      ParseNpyHeader(where, bytes.substr(8 + length_bytes, header_bytes), &t);
  if (!header.ok()) return header;
  absl::Status size = CheckSize(where, t, bytes.size() - data_at);
  if (!size.ok()) return size;
  t.data.assign(bytes.begin() + data_at, bytes.end());
  return t;
}

absl::StatusOr<std::vector<SourceTensor>> ParseSafetensorsFile(
    absl::string_view where, absl::string_view bytes) {
  if (bytes.size() < 8) return Bad(where, "too short for a safetensors file");
  const uint64_t header_bytes = ReadU64(bytes.data());
  if (header_bytes > bytes.size() - 8) {
    return Bad(where, absl::StrCat("header of ", header_bytes,
                                   " bytes does not fit in the file"));
  }
  const absl::string_view buffer = bytes.substr(8 + header_bytes);
  nlohmann::json header = nlohmann::json::parse(
      bytes.substr(8, header_bytes), nullptr, /*allow_exceptions=*/false);
  if (!header.is_object()) {
    return Bad(where, "the header is not a JSON object");
  }
  std::vector<SourceTensor> tensors;
  for (const auto& [name, entry] : header.items()) {
    if (name == "__metadata__") continue;
    const std::string at = absl::StrCat(where, ": tensor '", name, "'");
    SourceTensor t;
    t.name = name;
    if (!entry.is_object() || !entry.contains("dtype") ||
        !entry["dtype"].is_string() || !entry.contains("shape") ||
        !entry["shape"].is_array() || !entry.contains("data_offsets") ||
        !entry["data_offsets"].is_array() ||
        entry["data_offsets"].size() != 2) {
      return Bad(at, "wants dtype, shape and data_offsets [begin, end]");
    }
    if (!SetSafetensorsKind(entry["dtype"].get<std::string>(), &t)) {
      t.error = absl::StrCat(at, ": dtype ", entry["dtype"].get<std::string>(),
                             " is not supported (want F64, F32, F16, BF16, "
                             "I64 ... I8, U64 ... U8 or BOOL)");
      tensors.push_back(std::move(t));
      continue;
    }
    for (const auto& extent : entry["shape"]) {
      if (!extent.is_number_unsigned()) return Bad(at, "bad shape");
      t.shape.push_back(extent.get<int64_t>());
    }
    const auto& offsets = entry["data_offsets"];
    if (!offsets[0].is_number_unsigned() || !offsets[1].is_number_unsigned()) {
      return Bad(at, "bad data_offsets");
    }
    const uint64_t begin = offsets[0].get<uint64_t>();
    const uint64_t end = offsets[1].get<uint64_t>();
    if (begin > end || end > buffer.size()) {
      return Bad(at, absl::StrCat("data_offsets [", begin, ", ", end,
                                  "] are outside the ", buffer.size(),
                                  " bytes of data"));
    }
    absl::Status size = CheckSize(at, t, end - begin);
    if (!size.ok()) return size;
    t.data.assign(buffer.begin() + begin, buffer.begin() + end);
    tensors.push_back(std::move(t));
  }
  return tensors;
}

absl::StatusOr<std::vector<SourceTensor>> ReadTensorFile(
    const std::string& path) {
  if (absl::EndsWith(path, ".npz")) return ReadNpz(path);
  const bool npy = absl::EndsWith(path, ".npy");
  if (!npy && !absl::EndsWith(path, ".safetensors")) {
    return Bad(path, "is not .safetensors, .npy, .npz or .csv");
  }
  absl::StatusOr<std::string> bytes = ReadWholeFile(path);
  if (!bytes.ok()) return bytes.status();
  if (!npy) return ParseSafetensorsFile(path, *bytes);
  absl::StatusOr<SourceTensor> tensor = ParseNpy(path, *bytes);
  if (!tensor.ok()) return tensor.status();
  return std::vector<SourceTensor>{*std::move(tensor)};
}

}  // namespace kiln::data_import
