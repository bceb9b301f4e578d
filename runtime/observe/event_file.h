// TensorBoard event files: scalars a training run logs, written as TFRecord
// files of serialized Event protos (event.proto, TensorFlow's field
// numbers), read back by TensorBoard (or by ReadEventFile here).
//
// Record framing (TFRecord): uint64 length, masked CRC32C of those 8 bytes,
// the data, masked CRC32C of the data; integers little-endian.
//
//   KILN_ASSIGN_OR_RETURN(auto events, EventFileWriter::Open("logs/run1"));
//   KILN_RETURN_IF_ERROR(events->AddScalars(step, {{"loss", loss},
//                                                  {"learning_rate", lr}}));
#ifndef KILN_RUNTIME_OBSERVE_EVENT_FILE_H_
#define KILN_RUNTIME_OBSERVE_EVENT_FILE_H_

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <utility>
#include <vector>

#include "absl/status/status.h"
#include "absl/status/statusor.h"
#include "absl/strings/string_view.h"

namespace kiln::observe {

// The file version TensorBoard expects in a file's first event.
inline constexpr char kFileVersion[] = "brain.Event:2";

// One TFRecord: the framed bytes of `data`.
std::string FrameRecord(absl::string_view data);

// The records of TFRecord bytes, each CRC checked. An error names the
// record, its offset and what is wrong (a truncated record, a length or data
// CRC mismatch).
absl::StatusOr<std::vector<std::string>> SplitRecords(absl::string_view bytes);

// The name TensorBoard looks for: events.out.tfevents.<seconds>.<host>.
std::string EventFileName(int64_t unix_seconds, absl::string_view host);

class EventFileWriter {
 public:
  // Creates `dir` (and its parents) where needed and a new event file in it,
  // whose first event holds the file version. Events are flushed to the
  // file by every Add call, so TensorBoard follows a run as it goes.
  static absl::StatusOr<std::unique_ptr<EventFileWriter>> Open(
      const std::string& dir);
  ~EventFileWriter();

  // One event with a scalar summary of each (tag, value) at `step`,
  // stamped with the wall time now (or `wall_time`, seconds since the
  // epoch, when given).
  absl::Status AddScalars(
      int64_t step, const std::vector<std::pair<std::string, double>>& scalars,
      double wall_time = -1);
  absl::Status AddScalar(int64_t step, const std::string& tag, double value) {
    return AddScalars(step, {{tag, value}});
  }
  // Flushes and closes the file; later Add calls fail.
  absl::Status Close();

  const std::string& path() const { return path_; }

 private:
  EventFileWriter(std::string path, std::FILE* file)
      : path_(std::move(path)), file_(file) {}
  absl::Status WriteEvent(const std::string& serialized);

  std::string path_;
  std::FILE* file_;
};

// What ReadEventFile decodes: the file version and every scalar, in order.
struct ScalarEvent {
  int64_t step = 0;
  double wall_time = 0;
  std::string tag;
  float value = 0;
};
struct EventFileContents {
  std::string file_version;  // of the first event
  int64_t events = 0;        // every event, the file version's included
  std::vector<ScalarEvent> scalars;
};

// Reads an event file, checking every record's CRCs and every event's
// encoding.
absl::StatusOr<EventFileContents> ReadEventFile(const std::string& path);

}  // namespace kiln::observe

#endif  // KILN_RUNTIME_OBSERVE_EVENT_FILE_H_
