#include "runtime/io/safetensors.h"

#include <algorithm>
#include <cstring>
#include <set>
#include <tuple>
#include <utility>

#include "absl/strings/escaping.h"
#include "absl/strings/match.h"
#include "absl/strings/str_cat.h"
#include "absl/strings/str_format.h"
#include "nlohmann/json.hpp"
#include "runtime/artifact/checksum.h"
#include "runtime/io/atomic_file.h"

namespace kiln {
namespace io {
namespace {

using nlohmann::json;

constexpr absl::string_view kMetadataKey = "__metadata__";
// Metadata key prefix of each tensor's data checksum (16 hex digits).
constexpr absl::string_view kChecksumPrefix = "kiln.fnv1a64.";

std::string ChecksumOf(const std::vector<uint8_t>& data) {
  return absl::StrFormat("%016x", Fnv1a64(data.data(), data.size()));
}

template <typename... Args>
absl::Status Invalid(const Args&... args) {
  return absl::InvalidArgumentError(absl::StrCat(args...));
}

// A JSON string literal for `s`; an error if `s` is not valid UTF-8.
absl::StatusOr<std::string> Quote(const std::string& s) {
  try {
    return json(s).dump(-1, ' ', false, json::error_handler_t::strict);
  } catch (const json::exception&) {
    return Invalid("\"", absl::CEscape(s), "\" is not valid UTF-8");
  }
}

}  // namespace

bool operator==(const Safetensors& a, const Safetensors& b) {
  return a.tensors == b.tensors && a.metadata == b.metadata;
}

absl::StatusOr<std::string> SerializeSafetensors(const Safetensors& st) {
  // Data order: larger elements first, then by name (the map's order).
  std::vector<const std::pair<const std::string, HostTensor>*> order;
  for (const auto& kv : st.tensors) order.push_back(&kv);
  std::stable_sort(order.begin(), order.end(),
                   [](const auto* a, const auto* b) {
                     return ::kiln::DTypeSize(a->second.dtype) >
                            ::kiln::DTypeSize(b->second.dtype);
                   });

  // The caller's metadata, then every tensor's checksum (replacing any the
  // caller carried over from a file read earlier).
  std::map<std::string, std::string> metadata;
  for (const auto& [key, value] : st.metadata) {
    if (!absl::StartsWith(key, kChecksumPrefix)) metadata[key] = value;
  }
  for (const auto& [name, t] : st.tensors) {
    metadata[absl::StrCat(kChecksumPrefix, name)] = ChecksumOf(t.data);
  }
  std::string header = "{";
  bool first = true;
  if (!metadata.empty()) {
    absl::StrAppend(&header, "\"", kMetadataKey, "\":{");
    for (const auto& [key, value] : metadata) {
      absl::StatusOr<std::string> k = Quote(key);
      if (!k.ok()) return Invalid("__metadata__ key: ", k.status().message());
      absl::StatusOr<std::string> v = Quote(value);
      if (!v.ok()) {
        return Invalid("__metadata__.", *k, ": ", v.status().message());
      }
      absl::StrAppend(&header, first ? "" : ",", *k, ":", *v);
      first = false;
    }
    header += "}";
    first = false;
  }
  uint64_t offset = 0;
  for (const auto* kv : order) {
    const std::string& name = kv->first;
    const HostTensor& t = kv->second;
    if (name.empty() || name == kMetadataKey) {
      return Invalid("tensor name \"", name, "\" is not allowed");
    }
    absl::StatusOr<std::string> quoted = Quote(name);
    if (!quoted.ok())
      return Invalid("tensor name: ", quoted.status().message());
    absl::StatusOr<uint64_t> bytes = TensorBytes(t.dtype, t.shape);
    if (!bytes.ok()) return Invalid(*quoted, ": ", bytes.status().message());
    if (*bytes != t.data.size()) {
      return Invalid(*quoted, ": ", t.data.size(), " data bytes, but ",
                     SafetensorsDTypeName(t.dtype), ShapeString(t.shape),
                     " needs ", *bytes);
    }
    absl::StrAppend(&header, first ? "" : ",", *quoted, ":{\"dtype\":\"",
                    SafetensorsDTypeName(t.dtype),
                    "\",\"shape\":", ShapeString(t.shape),
                    ",\"data_offsets\":[", offset, ",", offset + *bytes, "]}");
    first = false;
    offset += *bytes;
  }
  header += "}";
  // Pad so that the data buffer (at 8 + header length) is 8-byte aligned.
  header.append((8 - header.size() % 8) % 8, ' ');

  std::string out;
  out.reserve(8 + header.size() + offset);
  uint64_t n = header.size();
  for (int i = 0; i < 8; ++i) out.push_back(static_cast<char>(n >> (8 * i)));
  out += header;
  for (const auto* kv : order) {
    const std::vector<uint8_t>& d = kv->second.data;
    out.append(reinterpret_cast<const char*>(d.data()), d.size());
  }
  return out;
}

namespace {

// Parses JSON and reports duplicate keys in any object, which nlohmann's
// parser would otherwise resolve silently (last one wins).
absl::StatusOr<json> ParseStrictJson(absl::string_view text) {
  std::vector<std::set<std::string>> keys;
  std::string duplicate;
  bool has_duplicate = false;
  json::parser_callback_t cb = [&](int depth, json::parse_event_t event,
                                   json& parsed) {
    switch (event) {
      case json::parse_event_t::object_start:
        keys.emplace_back();
        break;
      case json::parse_event_t::object_end:
        if (!keys.empty()) keys.pop_back();
        break;
      case json::parse_event_t::key:
        if (!keys.empty() && parsed.is_string() &&
            !keys.back().insert(parsed.get<std::string>()).second &&
            !has_duplicate) {
          has_duplicate = true;
          duplicate = parsed.get<std::string>();
        }
        break;
      default:
        break;
    }
    return true;
  };
  json j = json::parse(text.begin(), text.end(), cb,
                       /*allow_exceptions=*/false);
  if (j.is_discarded()) return Invalid("header: not valid JSON");
  if (has_duplicate) {
    return Invalid("header: duplicate key \"", absl::CEscape(duplicate), "\"");
  }
  return j;
}

struct Slot {
  std::string name;
  uint64_t begin;
  uint64_t end;
};

}  // namespace

absl::StatusOr<Safetensors> ParseSafetensors(absl::string_view bytes,
                                             const SafetensorsLimits& limits) {
  if (bytes.size() < 8) {
    return Invalid("file: ", bytes.size(),
                   " bytes is too small for the 8-byte header length");
  }
  uint64_t n = 0;
  for (int i = 0; i < 8; ++i) {
    n |= uint64_t{static_cast<uint8_t>(bytes[i])} << (8 * i);
  }
  if (n > limits.max_header_bytes) {
    return Invalid("header: length ", n, " exceeds the limit ",
                   limits.max_header_bytes);
  }
  if (n > bytes.size() - 8) {
    return Invalid("header: length ", n, " exceeds the ", bytes.size() - 8,
                   " bytes after the length");
  }
  const absl::string_view text = bytes.substr(8, n);
  if (text.empty() || text[0] != '{') {
    return Invalid("header: must begin with '{'");
  }
  absl::StatusOr<json> parsed = ParseStrictJson(text);
  if (!parsed.ok()) return parsed.status();
  const json& header = *parsed;
  if (!header.is_object()) return Invalid("header: not a JSON object");

  const absl::string_view data = bytes.substr(8 + n);
  Safetensors out;
  std::vector<Slot> slots;
  for (const auto& [name, value] : header.items()) {
    const std::string where =
        absl::StrCat("header[\"", absl::CEscape(name), "\"]");
    if (name == kMetadataKey) {
      if (!value.is_object()) return Invalid(where, ": must be an object");
      for (const auto& [k, v] : value.items()) {
        if (!v.is_string()) {
          return Invalid(where, "[\"", absl::CEscape(k),
                         "\"]: metadata values must be strings");
        }
        out.metadata[k] = v.get<std::string>();
      }
      continue;
    }
    if (name.empty()) return Invalid(where, ": empty tensor name");
    if (!value.is_object()) return Invalid(where, ": must be an object");
    for (const auto& [k, v] : value.items()) {
      if (k != "dtype" && k != "shape" && k != "data_offsets") {
        return Invalid(where, ": unexpected key \"", absl::CEscape(k), "\"");
      }
    }
    HostTensor t;
    const auto dtype = value.find("dtype");
    if (dtype == value.end() || !dtype->is_string()) {
      return Invalid(where, ".dtype: missing or not a string");
    }
    absl::StatusOr<DType> d = ParseSafetensorsDType(dtype->get<std::string>());
    if (!d.ok()) return Invalid(where, ".dtype: ", d.status().message());
    t.dtype = *d;
    const auto shape = value.find("shape");
    if (shape == value.end() || !shape->is_array()) {
      return Invalid(where, ".shape: missing or not an array");
    }
    for (const json& dim : *shape) {
      if (!dim.is_number_unsigned() ||
          dim.get<uint64_t>() > static_cast<uint64_t>(INT64_MAX)) {
        return Invalid(where, ".shape: extents must be non-negative integers");
      }
      t.shape.push_back(static_cast<int64_t>(dim.get<uint64_t>()));
    }
    const auto offsets = value.find("data_offsets");
    if (offsets == value.end() || !offsets->is_array() ||
        offsets->size() != 2 || !(*offsets)[0].is_number_unsigned() ||
        !(*offsets)[1].is_number_unsigned()) {
      return Invalid(where,
                     ".data_offsets: must be [begin, end], non-negative "
                     "integers");
    }
    const uint64_t begin = (*offsets)[0].get<uint64_t>();
    const uint64_t end = (*offsets)[1].get<uint64_t>();
    if (begin > end) {
      return Invalid(where, ".data_offsets: begin ", begin, " > end ", end);
    }
    if (end > data.size()) {
      return Invalid(where, ".data_offsets: end ", end,
                     " exceeds the data buffer of ", data.size(), " bytes");
    }
    absl::StatusOr<uint64_t> expected = TensorBytes(t.dtype, t.shape);
    if (!expected.ok())
      return Invalid(where, ".shape: ", expected.status().message());
    if (*expected != end - begin) {
      return Invalid(where, ": data_offsets [", begin, ", ", end, ") hold ",
                     end - begin, " bytes, but ", SafetensorsDTypeName(t.dtype),
                     ShapeString(t.shape), " needs ", *expected);
    }
    t.data.assign(data.begin() + begin, data.begin() + end);
    t.file_offset = 8 + n + begin;
    slots.push_back({name, begin, end});
    out.tensors.emplace(name, std::move(t));
  }
  // The tensors must tile the data buffer: sorted by offsets, each starts where
  // the previous ended.
  std::sort(slots.begin(), slots.end(), [](const Slot& a, const Slot& b) {
    return std::tie(a.begin, a.end) < std::tie(b.begin, b.end);
  });
  uint64_t covered = 0;
  for (size_t i = 0; i < slots.size(); ++i) {
    if (slots[i].begin < covered) {
      return Invalid("data: tensors \"", absl::CEscape(slots[i - 1].name),
                     "\" [", slots[i - 1].begin, ", ", slots[i - 1].end,
                     ") and \"", absl::CEscape(slots[i].name), "\" [",
                     slots[i].begin, ", ", slots[i].end, ") overlap");
    }
    if (slots[i].begin > covered) {
      return Invalid("data: bytes [", covered, ", ", slots[i].begin,
                     ") belong to no tensor");
    }
    covered = slots[i].end;
  }
  if (covered != data.size()) {
    return Invalid("data: bytes [", covered, ", ", data.size(),
                   ") belong to no tensor");
  }
  // Checksums (files kiln wrote; others have none): every one names a
  // tensor whose bytes it matches. They are checked, not returned.
  for (auto it = out.metadata.begin(); it != out.metadata.end();) {
    if (!absl::StartsWith(it->first, kChecksumPrefix)) {
      ++it;
      continue;
    }
    const std::string name = it->first.substr(kChecksumPrefix.size());
    const auto tensor = out.tensors.find(name);
    if (tensor == out.tensors.end()) {
      return Invalid("__metadata__[\"", absl::CEscape(it->first),
                     "\"]: a checksum of no tensor");
    }
    if (ChecksumOf(tensor->second.data) != it->second) {
      const auto slot =
          std::find_if(slots.begin(), slots.end(),
                       [&](const Slot& x) { return x.name == name; });
      return Invalid("tensor \"", absl::CEscape(name), "\": its ",
                     slot->end - slot->begin, " bytes at file offset ",
                     8 + n + slot->begin,
                     " do not match their checksum (the data is damaged)");
    }
    it = out.metadata.erase(it);
  }
  return out;
}

absl::Status WriteSafetensorsFile(const std::string& path,
                                  const Safetensors& st) {
  absl::StatusOr<std::string> bytes = SerializeSafetensors(st);
  if (!bytes.ok()) return bytes.status();
  return WriteFileAtomically(path, *bytes);
}

absl::StatusOr<Safetensors> ReadSafetensorsFile(
    const std::string& path, const SafetensorsLimits& limits) {
  absl::StatusOr<std::string> bytes = ReadFile(path);
  if (!bytes.ok()) return bytes.status();
  absl::StatusOr<Safetensors> st = ParseSafetensors(*bytes, limits);
  if (!st.ok()) {
    return absl::Status(st.status().code(),
                        absl::StrCat(path, ": ", st.status().message()));
  }
  return st;
}

}  // namespace io
}  // namespace kiln
