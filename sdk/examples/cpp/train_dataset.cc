// Brings its own data: writes the batch of train.cc, record by record, to a
// KILNDATA file (kiln/dataset.h), maps it, and trains a kiln artifact whose
// train_step takes f32 inputs from batches that kiln::DeviceBatchLoader
// uploads one ahead of the compute. The records are read in file order, so
// every step sees train.cc's batch and prints train.cc's loss.
//   train_dataset ARTIFACT DATA_FILE STEPS LR
#include <kiln/batch_loader.h>
#include <kiln/dataset.h>
#include <kiln/runtime.h>
#include <kiln/status.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

// train.cc's pattern: element e of input x, or of any other input.
float PatternValue(const std::string& name, size_t e) {
  const bool is_x = name == "x";
  const int mul = is_x ? 37 : 11, mod = is_x ? 17 : 7;
  const float shift = is_x ? 0.5f : 0.0f;
  return static_cast<float>((e * mul) % mod) / mod - shift;
}

// One record per row of the batch: each input's row, in the order of
// `specs`, as the dataset's fields.
absl::Status WriteBatch(const std::vector<kiln::TensorSpec>& specs,
                        const std::string& path) {
  std::vector<kiln::io::DatasetField> fields;
  for (const kiln::TensorSpec& spec : specs) {
    if (spec.dtype != kiln::DType::kF32 || spec.shape.empty() ||
        spec.shape[0] != specs[0].shape[0]) {
      return absl::InvalidArgumentError(
          "input " + spec.name + " is not f32 with the batch's leading dim");
    }
    fields.push_back({spec.name, kiln::DType::kF32,
                      {spec.shape.begin() + 1, spec.shape.end()}});
  }
  KILN_ASSIGN_OR_RETURN(auto writer,
                        kiln::io::DatasetWriter::Create(path, fields));
  const int64_t rows = specs[0].shape[0];
  for (int64_t row = 0; row < rows; ++row) {
    std::vector<float> record;
    for (const kiln::TensorSpec& spec : specs) {
      const size_t row_size = kiln::NumElements(spec.shape) / rows;
      for (size_t i = 0; i < row_size; ++i) {
        record.push_back(PatternValue(spec.name, row * row_size + i));
      }
    }
    KILN_RETURN_IF_ERROR(
        writer->Append(record.data(), record.size() * sizeof(float)));
  }
  return writer->Finish();
}

absl::Status Train(const std::string& path, const std::string& data_path,
                   int steps, float lr) {
  KILN_ASSIGN_OR_RETURN(auto runtime, kiln::Runtime::Open(0));
  KILN_ASSIGN_OR_RETURN(auto module, runtime->Load(path));
  kiln::TrainerOptions options;
  options.seed = 0;
  KILN_ASSIGN_OR_RETURN(auto trainer, module->NewTrainer(options));
  KILN_ASSIGN_OR_RETURN(auto specs, trainer->InputsOf("train_step"));
  KILN_RETURN_IF_ERROR(WriteBatch(specs, data_path));

  KILN_ASSIGN_OR_RETURN(auto data, kiln::io::MappedDataset::Open(data_path));
  kiln::DeviceBatchLoaderOptions loader_options;
  loader_options.batch.batch_size = specs[0].shape[0];
  loader_options.batch.shuffle = false;
  KILN_ASSIGN_OR_RETURN(
      auto loader, kiln::DeviceBatchLoader::Create(
                       *runtime, data.get(), loader_options, trainer->stream()));
  for (int step = 1; step <= steps; ++step) {
    KILN_ASSIGN_OR_RETURN(kiln::DeviceBatch batch, loader->Next());
    KILN_ASSIGN_OR_RETURN(float loss, trainer->Step(batch.inputs(), lr));
    std::printf("step %d loss %.6f\n", step, loss);
  }
  return absl::OkStatus();
}

}  // namespace

int main(int argc, char** argv) {
  if (argc != 5) {
    std::fprintf(stderr, "usage: %s ARTIFACT DATA_FILE STEPS LR\n", argv[0]);
    return 2;
  }
  const absl::Status status = Train(argv[1], argv[2], std::atoi(argv[3]),
                                    std::strtof(argv[4], nullptr));
  if (!status.ok()) {
    std::fprintf(stderr, "%s\n", status.ToString().c_str());
    return 1;
  }
  return 0;
}
