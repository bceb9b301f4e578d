#include "runtime/observe/event_file.h"

#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include "absl/strings/str_cat.h"
#include "absl/time/clock.h"
#include "absl/time/time.h"
#include "runtime/observe/crc32c.h"
#include "runtime/observe/event.pb.h"

namespace kiln::observe {
namespace {

void AppendLittleEndian(uint64_t value, int bytes, std::string* out) {
  for (int i = 0; i < bytes; ++i) {
    out->push_back(static_cast<char>((value >> (8 * i)) & 0xff));
  }
}

uint64_t ReadLittleEndian(const char* p, int bytes) {
  uint64_t value = 0;
  for (int i = bytes - 1; i >= 0; --i) {
    value = (value << 8) | static_cast<unsigned char>(p[i]);
  }
  return value;
}

// mkdir -p.
absl::Status MakeDirectories(const std::string& dir) {
  std::string prefix;
  for (size_t i = 0; i <= dir.size(); ++i) {
    if (i == dir.size() || (dir[i] == '/' && i > 0)) {
      prefix = dir.substr(0, i);
      if (::mkdir(prefix.c_str(), 0777) != 0 && errno != EEXIST) {
        return absl::InternalError(absl::StrCat(
            "cannot create directory ", prefix, ": ", std::strerror(errno)));
      }
    }
  }
  struct stat st;
  if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) {
    return absl::InvalidArgumentError(absl::StrCat(dir, " is not a directory"));
  }
  return absl::OkStatus();
}

std::string HostName() {
  char name[256] = {};
  if (::gethostname(name, sizeof(name) - 1) != 0 || name[0] == '\0') {
    return "localhost";
  }
  return name;
}

double NowSeconds() {
  return absl::ToDoubleSeconds(absl::Now() - absl::UnixEpoch());
}

}  // namespace

std::string FrameRecord(absl::string_view data) {
  std::string out;
  out.reserve(data.size() + 16);
  AppendLittleEndian(data.size(), 8, &out);
  AppendLittleEndian(MaskCrc(Crc32c(out)), 4, &out);
  out.append(data.data(), data.size());
  AppendLittleEndian(MaskCrc(Crc32c(data)), 4, &out);
  return out;
}

absl::StatusOr<std::vector<std::string>> SplitRecords(absl::string_view bytes) {
  std::vector<std::string> records;
  size_t offset = 0;
  while (offset < bytes.size()) {
    auto bad = [&](absl::string_view what) {
      return absl::DataLossError(absl::StrCat(
          "record ", records.size(), " at offset ", offset, ": ", what));
    };
    if (bytes.size() - offset < 12) return bad("truncated header");
    const char* p = bytes.data() + offset;
    const uint64_t length = ReadLittleEndian(p, 8);
    if (MaskCrc(Crc32c(absl::string_view(p, 8))) !=
        ReadLittleEndian(p + 8, 4)) {
      return bad("length CRC mismatch");
    }
    if (length > bytes.size() - offset - 12 ||
        bytes.size() - offset - 12 - length < 4) {
      return bad(absl::StrCat("truncated data (", length, " bytes announced)"));
    }
    absl::string_view data(p + 12, length);
    if (MaskCrc(Crc32c(data)) != ReadLittleEndian(p + 12 + length, 4)) {
      return bad("data CRC mismatch");
    }
    records.emplace_back(data);
    offset += 16 + length;
  }
  return records;
}

std::string EventFileName(int64_t unix_seconds, absl::string_view host) {
  return absl::StrCat("events.out.tfevents.", unix_seconds, ".", host);
}

absl::StatusOr<std::unique_ptr<EventFileWriter>> EventFileWriter::Open(
    const std::string& dir) {
  if (dir.empty()) return absl::InvalidArgumentError("no event directory");
  if (absl::Status made = MakeDirectories(dir); !made.ok()) return made;
  const double now = NowSeconds();
  const std::string path = absl::StrCat(
      dir, "/", EventFileName(static_cast<int64_t>(now), HostName()));
  // "a": a second writer of the same second and host appends its events
  // rather than destroying the first one's.
  std::FILE* file = std::fopen(path.c_str(), "ab");
  if (file == nullptr) {
    return absl::InternalError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::unique_ptr<EventFileWriter> writer(new EventFileWriter(path, file));
  tensorboard::Event event;
  event.set_wall_time(now);
  event.set_file_version(kFileVersion);
  if (absl::Status written = writer->WriteEvent(event.SerializeAsString());
      !written.ok()) {
    return written;
  }
  return writer;
}

EventFileWriter::~EventFileWriter() { Close().IgnoreError(); }

absl::Status EventFileWriter::WriteEvent(const std::string& serialized) {
  if (file_ == nullptr) {
    return absl::FailedPreconditionError(absl::StrCat(path_, " is closed"));
  }
  const std::string record = FrameRecord(serialized);
  if (std::fwrite(record.data(), 1, record.size(), file_) != record.size() ||
      std::fflush(file_) != 0) {
    return absl::InternalError(
        absl::StrCat("cannot write ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::Status EventFileWriter::AddScalars(
    int64_t step, const std::vector<std::pair<std::string, double>>& scalars,
    double wall_time) {
  tensorboard::Event event;
  event.set_wall_time(wall_time >= 0 ? wall_time : NowSeconds());
  event.set_step(step);
  tensorboard::Summary* summary = event.mutable_summary();
  for (const auto& [tag, value] : scalars) {
    tensorboard::Summary::Value* v = summary->add_value();
    v->set_tag(tag);
    v->set_simple_value(static_cast<float>(value));
  }
  return WriteEvent(event.SerializeAsString());
}

absl::Status EventFileWriter::Close() {
  if (file_ == nullptr) return absl::OkStatus();
  const bool ok = std::fclose(file_) == 0;
  file_ = nullptr;
  if (!ok) {
    return absl::InternalError(
        absl::StrCat("cannot close ", path_, ": ", std::strerror(errno)));
  }
  return absl::OkStatus();
}

absl::StatusOr<EventFileContents> ReadEventFile(const std::string& path) {
  std::FILE* file = std::fopen(path.c_str(), "rb");
  if (file == nullptr) {
    return absl::NotFoundError(
        absl::StrCat("cannot open ", path, ": ", std::strerror(errno)));
  }
  std::string bytes;
  char buffer[1 << 16];
  size_t n;
  while ((n = std::fread(buffer, 1, sizeof(buffer), file)) > 0) {
    bytes.append(buffer, n);
  }
  std::fclose(file);
  absl::StatusOr<std::vector<std::string>> records = SplitRecords(bytes);
  if (!records.ok()) {
    return absl::DataLossError(
        absl::StrCat(path, ": ", records.status().message()));
  }
  EventFileContents contents;
  for (size_t i = 0; i < records->size(); ++i) {
    tensorboard::Event event;
    if (!event.ParseFromString((*records)[i])) {
      return absl::DataLossError(
          absl::StrCat(path, ": record ", i, " is not an Event"));
    }
    ++contents.events;
    if (i == 0) contents.file_version = event.file_version();
    if (!event.has_summary()) continue;
    for (const tensorboard::Summary::Value& v : event.summary().value()) {
      if (!v.has_simple_value()) continue;
      contents.scalars.push_back(
          {event.step(), event.wall_time(), v.tag(), v.simple_value()});
    }
  }
  return contents;
}

}  // namespace kiln::observe
