// Writes a sample task's data as a memory-mapped KILNDATA file for
// `kiln-run --dataset`.
//
//   make_dataset --task sine|regression|order --records N --seed S --out FILE
//   make_dataset --task wide --features F --records N --seed S --out FILE
//   make_dataset --task text --text FILE --out TRAIN --heldout-out HELDOUT
//                [--length 128] [--stride 64] [--heldout-fraction 0.1]
//                [--seed S] [--records N]
//   make_dataset --task digits --csv FILE --out TRAIN --heldout-out HELDOUT
//                [--heldout-fraction 0.1] [--seed S]
//   make_dataset --from FILE --out TRAIN [--heldout-out HELDOUT]
//                [--heldout-fraction 0.1] [--shuffle] [--seed S]
//                [--classes-out FILE] FIELD...
//
// --from: the user's own data, a safetensors, NumPy .npy/.npz or CSV file;
// each FIELD argument, NAME[=SOURCE][:f32|i32|class][@SHAPE], picks a
// tensor or CSV columns for one field (docs/data-formats.md,
// samples/data_import/).
//
// sine, regression: one record per sequence (sine: x, y of shape [32, 1]) or
// per sample (regression: x [8], y [1]), each drawn fresh, so one epoch of N
// records gives N / batch steps that never see the same noise twice.
//
// wide (tests/gpu/reliability/wide_regression.mlir): x [F] uniform in
// [-1, 1), y [1] = w . x / sqrt(F) + noise for one w drawn under --seed: wide
// records, so that a file larger than the host's memory is a few thousand
// batches. Made for streaming tests.
//
// order (samples/transformer_classifier.mlir): 64 bytes of random lowercase
// letters in which the markers 'A', 'B' and 'C' each appear once, at random
// positions; the label (0-5) is the order in which they appear (ABC, ACB,
// BAC, BCA, CAB, CBA). Every class has the same distribution of byte counts,
// so a model of the bag of bytes cannot beat chance (1/6): the label is in
// the positions alone. Fields: tokens [64] i32, labels [] i32.
//
// text (samples/byte_lm.mlir): next-byte prediction windows of a text. The
// last --heldout-fraction of its bytes is held out: HELDOUT gets the windows
// that start there, one after another (stride = length, so every held-out
// byte after the first is predicted once); TRAIN gets the windows at
// --stride that end before it, in a random order under --seed (so file order
// is already shuffled; --records keeps the first N of them). Fields: tokens
// [length] i32 (bytes p .. p+length-1), targets [length] i32 (bytes p+1 ..
// p+length).
//
// digits: the 8x8 handwritten digits that scikit-learn ships (Debian's
// python3-sklearn: sklearn/datasets/data/digits.csv.gz, uncompressed), one
// image per line as 64 pixel values 0-16 and the label 0-9. The images are
// shuffled under --seed and the last --heldout-fraction of them held out.
// Fields: images [1, 8, 8] f32 (pixel / 16, NCHW), labels [] i32.
//
// Both token tasks also write dropout_offset [] i32, the record's index: the
// models take the first record's value of a batch as the counter offset of
// their dropout masks, so that every batch draws fresh masks.

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <random>
#include <string>
#include <utility>
#include <vector>

#include "absl/flags/flag.h"
#include "kiln/dataset.h"
#include "runtime/io/dtype.h"
#include "samples/data/sine_task.h"
#include "samples/data_import/import.h"
#include "tools/common/command_line.h"

ABSL_FLAG(std::string, task, "sine",
          "sine | regression | order | wide | text | digits");
ABSL_FLAG(std::string, out, "",
          "the KILNDATA file (text, digits: the training split; --from: a "
          "name ending in .safetensors writes a tensor per field instead); "
          "required");
ABSL_FLAG(int64_t, records, 0,
          "records to write (0: the task's, 4000; text: all windows)");
ABSL_FLAG(int64_t, seed, 1, "seed of the data (and of the split's order)");
ABSL_FLAG(int, features, 4096, "wide: features per record");
ABSL_FLAG(int, sine_length, 32,
          "sine: time steps per sequence (the sine block's 32; the 1024-wide "
          "transformer block's 1024)");
ABSL_FLAG(std::string, text, "", "text: the text file to cut into windows");
ABSL_FLAG(std::string, csv, "",
          "digits: scikit-learn's digits.csv (64 pixels 0-16 and a label per "
          "line)");
ABSL_FLAG(std::string, heldout_out, "",
          "text, digits: the held-out split's KILNDATA file");
ABSL_FLAG(int, length, 128, "text: bytes per window");
ABSL_FLAG(int, stride, 64, "text: bytes between training windows");
ABSL_FLAG(double, heldout_fraction, 0.1,
          "text, digits, --from: the fraction held out, in (0, 1)");
ABSL_FLAG(std::string, from, "",
          "a safetensors, .npy, .npz or .csv file whose records to write, "
          "field by field as the FIELD arguments say");
ABSL_FLAG(bool, shuffle, false,
          "--from: shuffle the records under --seed (default: file order)");
ABSL_FLAG(std::string, classes_out, "",
          "--from: write the ids of class fields' names here "
          "(FIELD<TAB>ID<TAB>NAME lines)");

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

// Uniform in [0, n), from the raw 64-bit draws of the engine (which the C++
// standard fixes), so the files are the same whatever the standard library.
uint64_t Below(std::mt19937_64& rng, uint64_t n) {
  return static_cast<uint64_t>((static_cast<unsigned __int128>(rng()) * n) >>
                               64);
}

struct Flags {
  std::string task = "sine";
  std::string out;
  long records = 0;  // 0: the task's default
  uint64_t seed = 1;
  std::string text;
  std::string csv;
  std::string heldout_out;
  int length = 128;
  int sine_length = 32;
  int stride = 64;
  int features = 4096;
  double heldout_fraction = 0.1;
  std::string from;
  bool shuffle = false;
  std::string classes_out;
  std::vector<std::string> fields;  // --from's FIELD arguments
};

kiln::cli::Usage MakeDatasetUsage() {
  kiln::cli::Usage usage;
  usage.program = "make_dataset";
  usage.header =
      "usage: make_dataset --task sine|regression|order --records N --seed S "
      "--out FILE\n"
      "       make_dataset --task wide --features F --records N --seed S "
      "--out FILE\n"
      "       make_dataset --task text --text FILE --out TRAIN --heldout-out "
      "HELDOUT\n"
      "                    [--length 128] [--stride 64] [--heldout-fraction "
      "0.1] [--seed S] [--records N]\n"
      "       make_dataset --task digits --csv FILE --out TRAIN --heldout-out "
      "HELDOUT\n"
      "                    [--heldout-fraction 0.1] [--seed S]\n"
      "       make_dataset --from FILE --out TRAIN [--heldout-out HELDOUT] "
      "[--heldout-fraction 0.1]\n"
      "                    [--shuffle] [--seed S] [--classes-out FILE] "
      "FIELD...\n"
      "\n"
      "Writes a sample task's data, or the records of a safetensors, .npy, "
      ".npz\n"
      "or CSV file, as a memory-mapped KILNDATA file. A FIELD is\n"
      "NAME[=SOURCE][:f32|i32|class][@SHAPE]: SOURCE a tensor's name or CSV\n"
      "columns (a,b or a..b), NAME when left out (docs/data-formats.md).";
  usage.sections = {
      {"Options:", {"task", "out", "records", "seed"}},
      {"wide:", {"features"}},
      {"sine:", {"sine_length"}},
      {"text and digits:",
       {"text", "csv", "heldout_out", "length", "stride", "heldout_fraction"}},
      {"your own data:", {"from", "shuffle", "classes_out"}},
  };
  usage.metavars = {
      {"task", "NAME"},  {"out", "FILE"},  {"seed", "S"},
      {"text", "FILE"},  {"csv", "FILE"},  {"heldout_out", "FILE"},
      {"features", "F"}, {"from", "FILE"}, {"classes_out", "FILE"}};
  return usage;
}

// The parsed command line; a bad one exits with status 2 and a message.
Flags ParseFlags(int argc, char** argv) {
  const kiln::cli::Usage usage = MakeDatasetUsage();
  const std::vector<std::string> positional =
      kiln::cli::ParseCommandLine(argc, argv, usage);
  auto bad = [&](const std::string& m) { kiln::cli::UsageError(usage, m); };
  Flags f;
  f.from = absl::GetFlag(FLAGS_from);
  f.shuffle = absl::GetFlag(FLAGS_shuffle);
  f.classes_out = absl::GetFlag(FLAGS_classes_out);
  if (f.from.empty() && !positional.empty()) {
    bad("unexpected argument '" + positional[0] +
        "' (FIELD arguments go "
        "with --from)");
  }
  if (!f.from.empty() && positional.empty()) {
    bad("--from needs FIELD arguments: NAME[=SOURCE][:f32|i32|class][@SHAPE]");
  }
  if (f.from.empty() && (f.shuffle || !f.classes_out.empty())) {
    bad("--shuffle and --classes-out go with --from");
  }
  f.fields = positional;
  f.task = absl::GetFlag(FLAGS_task);
  f.out = absl::GetFlag(FLAGS_out);
  f.records = static_cast<long>(absl::GetFlag(FLAGS_records));
  f.seed = static_cast<uint64_t>(absl::GetFlag(FLAGS_seed));
  f.text = absl::GetFlag(FLAGS_text);
  f.csv = absl::GetFlag(FLAGS_csv);
  f.heldout_out = absl::GetFlag(FLAGS_heldout_out);
  f.length = absl::GetFlag(FLAGS_length);
  f.sine_length = absl::GetFlag(FLAGS_sine_length);
  if (f.sine_length < 1) bad("--sine-length must be >= 1");
  f.stride = absl::GetFlag(FLAGS_stride);
  f.features = absl::GetFlag(FLAGS_features);
  f.heldout_fraction = absl::GetFlag(FLAGS_heldout_fraction);
  if (f.out.empty()) bad("--out is required");
  if (f.records < 0) bad("--records must be >= 0");
  if (!f.from.empty()) {
    if (f.task != "sine" || f.records != 0) {
      bad("--from does not go with --task or --records");
    }
    if (!f.heldout_out.empty() &&
        !(f.heldout_fraction > 0 && f.heldout_fraction < 1)) {
      bad("--heldout-fraction must be in (0, 1)");
    }
    return f;
  }
  const bool split = f.task == "text" || f.task == "digits";
  if (split) {
    if (f.heldout_out.empty()) bad("--task " + f.task + " needs --heldout-out");
    if (!(f.heldout_fraction > 0 && f.heldout_fraction < 1)) {
      bad("--heldout-fraction must be in (0, 1)");
    }
  }
  if (f.task == "text") {
    if (f.text.empty()) bad("--task text needs --text");
    if (f.length < 1) bad("--length must be >= 1");
    if (f.stride < 1) bad("--stride must be >= 1");
    return f;
  }
  if (f.task == "digits") {
    if (f.csv.empty()) bad("--task digits needs --csv");
    return f;
  }
  if (f.records == 0) f.records = 4000;
  if (f.task == "wide") {
    if (f.features < 1) bad("--features must be >= 1");
    return f;
  }
  if (f.task != "sine" && f.task != "regression" && f.task != "order") {
    bad("--task: '" + f.task +
        "' is not sine, regression, order, wide, text or digits");
  }
  return f;
}

int WriteSineOrRegression(const Flags& flags) {
  const int length = flags.sine_length;
  const bool sine = flags.task == "sine";
  std::vector<kiln::io::DatasetField> fields = {
      {"x", kiln::DType::kF32,
       sine ? std::vector<int64_t>{length, 1}
            : std::vector<int64_t>{kiln::samples::kRegressionFeatures}},
      {"y", kiln::DType::kF32,
       sine ? std::vector<int64_t>{length, 1} : std::vector<int64_t>{1}}};
  auto writer = kiln::io::DatasetWriter::Create(flags.out, fields);
  if (!writer.ok()) return Fail(writer.status());
  std::mt19937_64 rng(flags.seed);
  std::vector<float> record;
  for (long n = 0; n < flags.records; ++n) {
    record.clear();
    if (sine) {
      kiln::samples::SineBatch b = kiln::samples::MakeSineBatch(rng, 1, length);
      record.insert(record.end(), b.noisy.begin(), b.noisy.end());
      record.insert(record.end(), b.clean.begin(), b.clean.end());
    } else {
      kiln::samples::RegressionBatch b =
          kiln::samples::MakeRegressionBatch(rng, 1);
      record.insert(record.end(), b.x.begin(), b.x.end());
      record.insert(record.end(), b.y.begin(), b.y.end());
    }
    absl::Status appended =
        (*writer)->Append(record.data(), record.size() * sizeof(float));
    if (!appended.ok()) return Fail(appended);
  }
  absl::Status finished = (*writer)->Finish();
  if (!finished.ok()) return Fail(finished);
  std::printf("wrote %ld %s records to %s\n", flags.records, flags.task.c_str(),
              flags.out.c_str());
  return 0;
}

int WriteWide(const Flags& flags) {
  const int features = flags.features;
  auto writer = kiln::io::DatasetWriter::Create(
      flags.out,
      {{"x", kiln::DType::kF32, {features}}, {"y", kiln::DType::kF32, {1}}});
  if (!writer.ok()) return Fail(writer.status());
  // splitmix64: the generator of the features, cheap enough that the
  // checksum and the disk set the pace of a file larger than memory.
  uint64_t state = flags.seed;
  auto next = [&state] {
    uint64_t z = (state += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31);
  };
  // 24 bits of a draw as a float in [-1, 1).
  auto unit = [](uint64_t bits) {
    return static_cast<float>(bits & 0xffffff) * (2.0f / 16777216.0f) - 1.0f;
  };
  std::vector<float> w(features);
  for (float& v : w) v = unit(next());
  const float norm = 1.0f / std::sqrt(static_cast<float>(features));
  std::vector<float> record(features + 1);
  for (long n = 0; n < flags.records; ++n) {
    for (int j = 0; j < features; j += 2) {
      const uint64_t bits = next();
      record[j] = unit(bits);
      if (j + 1 < features) record[j + 1] = unit(bits >> 32);
    }
    float dot = 0;
    for (int j = 0; j < features; ++j) dot += w[j] * record[j];
    record[features] = dot * norm + 0.01f * unit(next());
    absl::Status appended =
        (*writer)->Append(record.data(), record.size() * sizeof(float));
    if (!appended.ok()) return Fail(appended);
  }
  absl::Status finished = (*writer)->Finish();
  if (!finished.ok()) return Fail(finished);
  std::printf("wrote %ld wide records (%d features, %zu bytes each) to %s\n",
              flags.records, features, record.size() * sizeof(float),
              flags.out.c_str());
  return 0;
}

int WriteOrder(const Flags& flags) {
  constexpr int kLength = 64;
  // The orders of appearance, label by label.
  static constexpr char kOrders[6][3] = {{'A', 'B', 'C'}, {'A', 'C', 'B'},
                                         {'B', 'A', 'C'}, {'B', 'C', 'A'},
                                         {'C', 'A', 'B'}, {'C', 'B', 'A'}};
  auto writer = kiln::io::DatasetWriter::Create(
      flags.out, {{"tokens", kiln::DType::kI32, {kLength}},
                  {"labels", kiln::DType::kI32, {}},
                  {"dropout_offset", kiln::DType::kI32, {}}});
  if (!writer.ok()) return Fail(writer.status());
  std::mt19937_64 rng(flags.seed);
  std::vector<int32_t> record(kLength + 2);
  std::vector<int> positions(kLength);
  std::vector<long> per_class(6);
  for (long n = 0; n < flags.records; ++n) {
    for (int t = 0; t < kLength; ++t) record[t] = 'a' + Below(rng, 26);
    // Three distinct positions (a partial Fisher-Yates shuffle), in order.
    for (int t = 0; t < kLength; ++t) positions[t] = t;
    for (int j = 0; j < 3; ++j)
      std::swap(positions[j], positions[j + Below(rng, kLength - j)]);
    std::sort(positions.begin(), positions.begin() + 3);
    const int label = static_cast<int>(Below(rng, 6));
    for (int j = 0; j < 3; ++j) record[positions[j]] = kOrders[label][j];
    record[kLength] = label;
    record[kLength + 1] = static_cast<int32_t>(n);
    ++per_class[label];
    absl::Status appended =
        (*writer)->Append(record.data(), record.size() * sizeof(int32_t));
    if (!appended.ok()) return Fail(appended);
  }
  absl::Status finished = (*writer)->Finish();
  if (!finished.ok()) return Fail(finished);
  std::printf("wrote %ld order records (64 bytes, 6 classes:", flags.records);
  for (long count : per_class) std::printf(" %ld", count);
  std::printf(") to %s\n", flags.out.c_str());
  return 0;
}

// Writes the windows starting at `starts` of `text` (each length + 1 bytes).
int WriteWindows(const std::string& path, const std::string& text,
                 const std::vector<size_t>& starts, int length) {
  auto writer = kiln::io::DatasetWriter::Create(
      path, {{"tokens", kiln::DType::kI32, {length}},
             {"targets", kiln::DType::kI32, {length}},
             {"dropout_offset", kiln::DType::kI32, {}}});
  if (!writer.ok()) return Fail(writer.status());
  std::vector<int32_t> record(2 * length + 1);
  for (size_t n = 0; n < starts.size(); ++n) {
    for (int t = 0; t < length; ++t) {
      record[t] = static_cast<unsigned char>(text[starts[n] + t]);
      record[length + t] = static_cast<unsigned char>(text[starts[n] + t + 1]);
    }
    record[2 * length] = static_cast<int32_t>(n);
    absl::Status appended =
        (*writer)->Append(record.data(), record.size() * sizeof(int32_t));
    if (!appended.ok()) return Fail(appended);
  }
  absl::Status finished = (*writer)->Finish();
  return finished.ok() ? 0 : Fail(finished);
}

int WriteText(const Flags& flags) {
  std::ifstream in(flags.text, std::ios::binary);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", flags.text.c_str());
    return 1;
  }
  const std::string text((std::istreambuf_iterator<char>(in)),
                         std::istreambuf_iterator<char>());
  const size_t split =
      static_cast<size_t>(text.size() * (1 - flags.heldout_fraction));
  const size_t window = static_cast<size_t>(flags.length) + 1;
  std::vector<size_t> train, heldout;
  for (size_t p = 0; p + window <= split; p += flags.stride) train.push_back(p);
  for (size_t p = split; p + window <= text.size(); p += flags.length)
    heldout.push_back(p);
  if (train.empty() || heldout.empty()) {
    std::fprintf(stderr,
                 "error: %s (%zu bytes) is too short for windows of %d\n",
                 flags.text.c_str(), text.size(), flags.length);
    return 1;
  }
  std::mt19937_64 rng(flags.seed);
  for (size_t i = train.size() - 1; i > 0; --i)
    std::swap(train[i], train[Below(rng, i + 1)]);
  if (flags.records > 0 && train.size() > static_cast<size_t>(flags.records))
    train.resize(flags.records);
  if (int status = WriteWindows(flags.out, text, train, flags.length))
    return status;
  if (int status = WriteWindows(flags.heldout_out, text, heldout, flags.length))
    return status;
  std::printf(
      "%s: %zu bytes, held out from byte %zu; wrote %zu training windows of "
      "%d (stride %d) to %s and %zu held-out windows (%zu predicted bytes) "
      "to %s\n",
      flags.text.c_str(), text.size(), split, train.size(), flags.length,
      flags.stride, flags.out.c_str(), heldout.size(),
      heldout.size() * flags.length, flags.heldout_out.c_str());
  return 0;
}

// One digit: 64 pixels and the label.
struct Digit {
  float pixels[64];
  int32_t label;
};

// Writes `digits` in order as records of images [1, 8, 8] and labels [].
int WriteDigits(const std::string& path, const std::vector<Digit>& digits) {
  auto writer = kiln::io::DatasetWriter::Create(
      path, {{"images", kiln::DType::kF32, {1, 8, 8}},
             {"labels", kiln::DType::kI32, {}}});
  if (!writer.ok()) return Fail(writer.status());
  std::vector<unsigned char> record(64 * sizeof(float) + sizeof(int32_t));
  for (const Digit& digit : digits) {
    std::memcpy(record.data(), digit.pixels, 64 * sizeof(float));
    std::memcpy(record.data() + 64 * sizeof(float), &digit.label,
                sizeof(int32_t));
    absl::Status appended = (*writer)->Append(record.data(), record.size());
    if (!appended.ok()) return Fail(appended);
  }
  absl::Status finished = (*writer)->Finish();
  return finished.ok() ? 0 : Fail(finished);
}

int WriteDigitsTask(const Flags& flags) {
  std::ifstream in(flags.csv);
  if (!in) {
    std::fprintf(stderr, "error: cannot read %s\n", flags.csv.c_str());
    return 1;
  }
  std::vector<Digit> digits;
  std::string line;
  for (long number = 1; std::getline(in, line); ++number) {
    if (line.empty() || line == "\r") continue;
    Digit digit;
    const char* p = line.c_str();
    int column = 0;
    for (; column < 65; ++column) {
      char* end = nullptr;
      const long value = std::strtol(p, &end, 10);
      const bool last = column == 64;
      if (end == p || value < 0 || value > (last ? 9 : 16) ||
          (*end != (last ? '\0' : ',') && !(last && *end == '\r'))) {
        std::fprintf(stderr,
                     "error: %s:%ld: column %d is not %s (want 64 pixels "
                     "0-16 and a label 0-9, comma-separated)\n",
                     flags.csv.c_str(), number, column + 1,
                     last ? "a label 0-9" : "a pixel 0-16 followed by ','");
        return 1;
      }
      if (last)
        digit.label = static_cast<int32_t>(value);
      else
        digit.pixels[column] = static_cast<float>(value) / 16.0f;
      p = end + 1;
    }
    digits.push_back(digit);
  }
  const size_t heldout = static_cast<size_t>(
      static_cast<double>(digits.size()) * flags.heldout_fraction);
  if (heldout == 0 || heldout == digits.size()) {
    std::fprintf(stderr,
                 "error: %s has %zu images, too few to hold out %.3g of\n",
                 flags.csv.c_str(), digits.size(), flags.heldout_fraction);
    return 1;
  }
  std::mt19937_64 rng(flags.seed);
  for (size_t i = digits.size() - 1; i > 0; --i)
    std::swap(digits[i], digits[Below(rng, i + 1)]);
  const std::vector<Digit> train(digits.begin(), digits.end() - heldout);
  const std::vector<Digit> held(digits.end() - heldout, digits.end());
  if (int status = WriteDigits(flags.out, train)) return status;
  if (int status = WriteDigits(flags.heldout_out, held)) return status;
  std::printf("%s: %zu images; wrote %zu to %s and %zu held out to %s\n",
              flags.csv.c_str(), digits.size(), train.size(),
              flags.out.c_str(), held.size(), flags.heldout_out.c_str());
  return 0;
}

// Writes "FIELD<TAB>ID<TAB>NAME" lines of the class fields to `path`.
int WriteClasses(const std::string& path,
                 const kiln::data_import::ImportedData& data) {
  std::ofstream out(path);
  for (const auto& field : data.fields)
    for (size_t id = 0; id < field.classes.size(); ++id)
      out << field.field.name << '\t' << id << '\t' << field.classes[id]
          << '\n';
  if (!out.flush()) {
    std::fprintf(stderr, "error: cannot write %s\n", path.c_str());
    return 1;
  }
  return 0;
}

int WriteFromFile(const Flags& flags) {
  std::vector<kiln::data_import::FieldSpec> specs;
  for (const std::string& text : flags.fields) {
    auto spec = kiln::data_import::ParseFieldSpec(text);
    if (!spec.ok()) {
      std::fprintf(stderr, "make_dataset: %s\n",
                   std::string(spec.status().message()).c_str());
      return 2;
    }
    specs.push_back(*std::move(spec));
  }
  auto data = kiln::data_import::ImportFile(flags.from, specs);
  if (!data.ok()) return Fail(data.status());
  kiln::data_import::WriteOptions options;
  options.out = flags.out;
  options.heldout_out = flags.heldout_out;
  options.heldout_fraction = flags.heldout_fraction;
  options.shuffle = flags.shuffle;
  options.seed = flags.seed;
  auto summary = kiln::data_import::WriteDatasets(*data, options);
  if (!summary.ok()) return Fail(summary.status());
  for (const auto& field : data->fields) {
    std::printf("field %s: %s%s from %s\n", field.field.name.c_str(),
                std::string(kiln::DTypeName(field.field.dtype)).c_str(),
                kiln::io::ShapeString(field.field.shape).c_str(),
                field.source.c_str());
    for (size_t id = 0; id < field.classes.size(); ++id)
      std::printf("  class %zu: %s\n", id, field.classes[id].c_str());
  }
  if (!flags.classes_out.empty()) {
    if (int status = WriteClasses(flags.classes_out, *data)) return status;
  }
  std::printf("%s: %llu records; wrote %llu to %s", flags.from.c_str(),
              static_cast<unsigned long long>(data->records),
              static_cast<unsigned long long>(summary->written),
              flags.out.c_str());
  if (summary->held_out > 0) {
    std::printf(" and %llu held out to %s",
                static_cast<unsigned long long>(summary->held_out),
                flags.heldout_out.c_str());
  }
  std::printf("%s\n", flags.shuffle ? " (shuffled)" : "");
  return 0;
}

}  // namespace

int main(int argc, char** argv) {
  const Flags flags = ParseFlags(argc, argv);
  if (!flags.from.empty()) return WriteFromFile(flags);
  if (flags.task == "order") return WriteOrder(flags);
  if (flags.task == "wide") return WriteWide(flags);
  if (flags.task == "text") return WriteText(flags);
  if (flags.task == "digits") return WriteDigitsTask(flags);
  return WriteSineOrRegression(flags);
}
