// Writes a sample task's data as a memory-mapped KILNDATA file for
// `kiln-run --dataset`: one record per sequence (sine: x, y of shape [32, 1])
// or per sample (regression: x [8], y [1]), each drawn fresh, so one epoch of
// N records gives N / batch steps that never see the same noise twice.
//
//   make_dataset --task sine|regression --records N --seed S --out FILE

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <random>
#include <string>
#include <vector>

#include "runtime/io/dataset.h"
#include "samples/data/sine_task.h"

namespace {

int Fail(const absl::Status& status) {
  std::fprintf(stderr, "error: %s\n", std::string(status.message()).c_str());
  return 1;
}

}  // namespace

int main(int argc, char** argv) {
  std::string task = "sine", out;
  long records = 4000;
  uint64_t seed = 1;
  for (int i = 1; i + 1 < argc; i += 2) {
    std::string flag = argv[i];
    if (flag == "--task")
      task = argv[i + 1];
    else if (flag == "--records")
      records = std::atol(argv[i + 1]);
    else if (flag == "--seed")
      seed = std::strtoull(argv[i + 1], nullptr, 10);
    else if (flag == "--out")
      out = argv[i + 1];
    else {
      std::fprintf(stderr, "error: unknown flag %s\n", flag.c_str());
      return 2;
    }
  }
  if (out.empty() || records <= 0 || (task != "sine" && task != "regression")) {
    std::fprintf(stderr,
                 "usage: make_dataset --task sine|regression --records N "
                 "--seed S --out FILE\n");
    return 2;
  }
  constexpr int kLength = 32;
  const bool sine = task == "sine";
  std::vector<kiln::io::DatasetField> fields = {
      {"x", kiln::DType::kF32,
       sine ? std::vector<int64_t>{kLength, 1}
            : std::vector<int64_t>{kiln::samples::kRegressionFeatures}},
      {"y", kiln::DType::kF32,
       sine ? std::vector<int64_t>{kLength, 1} : std::vector<int64_t>{1}}};
  auto writer = kiln::io::DatasetWriter::Create(out, fields);
  if (!writer.ok()) return Fail(writer.status());
  std::mt19937_64 rng(seed);
  std::vector<float> record;
  for (long n = 0; n < records; ++n) {
    record.clear();
    if (sine) {
      kiln::samples::SineBatch b =
          kiln::samples::MakeSineBatch(rng, 1, kLength);
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
  std::printf("wrote %ld %s records to %s\n", records, task.c_str(),
              out.c_str());
  return 0;
}
