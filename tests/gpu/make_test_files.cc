// Writes the files the kiln-run tests use into the folder given as argv[1]:
//   linreg.kiln                  linear regression with Adam (train_step etc.)
//   predict.kiln                 its inference model (entry predict: x -> pred)
//   linreg.kilndata              320 records with fields x [5], y [3]
//   batch.safetensors            one batch: x [16, 5], y [16, 3]
//   predict_in.safetensors       x [16, 5]
//   predict_nan.safetensors      the same with a NaN at [3, 2]
//   predict_expected.safetensors pred of predict.kiln with seed-0 parameters
//   predict_wrong.safetensors    the same, one element off by 1
//   linreg_sgd16.kiln            linear regression with SGD, batch 16
//   linreg_dp8.kiln, linreg_dp4.kiln
//                                the same with the gradient all-reduces of
//                                kilnc --data-parallel, batches 8 and 4 (2
//                                and 4 ranks of global batches of 16)
#include <cmath>
#include <cstdio>
#include <string>
#include <vector>

#include "runtime/artifact/artifact_writer.h"
#include "runtime/io/dataset.h"
#include "runtime/io/safetensors.h"
#include "runtime/random/initializers.h"
#include "tests/gpu/linreg_artifact.h"

namespace kiln {
namespace {

int Fail(const absl::Status& s) {
  std::fprintf(stderr, "make_test_files: %s\n", s.ToString().c_str());
  return 1;
}

int Main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: make_test_files <folder>\n");
    return 2;
  }
  const std::string dir = argv[1];
  testing::LinRegOptions o;
  // The kernels wait for their predecessor: kiln-run may launch them early.
  o.waits_for_predecessor = true;
  absl::Status s = artifact::WriteArtifactFile(testing::LinRegArtifact(o),
                                               dir + "/linreg.kiln");
  if (!s.ok()) return Fail(s);
  testing::LinRegOptions p = o;
  p.inference_only = true;
  s = artifact::WriteArtifactFile(testing::LinRegArtifact(p),
                                  dir + "/predict.kiln");
  if (!s.ok()) return Fail(s);

  // Data parallel: 1, 2 and 4 ranks of global batches of 16.
  for (int ranks : {1, 2, 4}) {
    testing::LinRegOptions d = o;
    d.optimizer = testing::LinRegOptimizer::kSgd;
    d.batch = o.batch / ranks;
    d.data_parallel = ranks > 1;
    const std::string name =
        ranks == 1 ? "linreg_sgd16" : "linreg_dp" + std::to_string(d.batch);
    s = artifact::WriteArtifactFile(testing::LinRegArtifact(d),
                                    dir + "/" + name + ".kiln");
    if (!s.ok()) return Fail(s);
  }

  const int64_t rows = o.batch * 20;
  const testing::LinRegData data =
      testing::MakeLinRegData(rows, o.in, o.out, 1);
  auto writer = io::DatasetWriter::Create(
      dir + "/linreg.kilndata",
      {{"x", DType::kF32, {o.in}}, {"y", DType::kF32, {o.out}}});
  if (!writer.ok()) return Fail(writer.status());
  for (int64_t r = 0; r < rows; ++r) {
    std::vector<float> record(data.x.begin() + r * o.in,
                              data.x.begin() + (r + 1) * o.in);
    record.insert(record.end(), data.y.begin() + r * o.out,
                  data.y.begin() + (r + 1) * o.out);
    s = (*writer)->Append(record.data(), record.size() * 4);
    if (!s.ok()) return Fail(s);
  }
  s = (*writer)->Finish();
  if (!s.ok()) return Fail(s);

  const std::vector<float> x(data.x.begin(), data.x.begin() + o.batch * o.in);
  const std::vector<float> y(data.y.begin(), data.y.begin() + o.batch * o.out);
  io::Safetensors batch;
  batch.tensors["x"] = io::HostTensor::F32({o.batch, o.in}, x);
  batch.tensors["y"] = io::HostTensor::F32({o.batch, o.out}, y);
  s = io::WriteSafetensorsFile(dir + "/batch.safetensors", batch);
  if (!s.ok()) return Fail(s);
  io::Safetensors in;
  in.tensors["x"] = batch.tensors["x"];
  s = io::WriteSafetensorsFile(dir + "/predict_in.safetensors", in);
  if (!s.ok()) return Fail(s);
  // The same with a NaN at [3, 2].
  std::vector<float> x_nan = x;
  x_nan[3 * o.in + 2] = std::nanf("");
  io::Safetensors in_nan;
  in_nan.tensors["x"] = io::HostTensor::F32({o.batch, o.in}, x_nan);
  s = io::WriteSafetensorsFile(dir + "/predict_nan.safetensors", in_nan);
  if (!s.ok()) return Fail(s);

  // The parameters a session with seed 0 starts from, as f32.
  const std::vector<double> w =
      InitialValues(InitKind::kXavier, 1.0, 0.0, {o.in, o.out}, 0, 0);
  const std::vector<double> b =
      InitialValues(InitKind::kUniform, -0.1f, 0.1f, {o.out}, 0, 1);
  std::vector<float> pred(o.batch * o.out);
  for (int i = 0; i < o.batch; ++i) {
    for (int k = 0; k < o.out; ++k) {
      double acc = static_cast<float>(b[k]);
      for (int j = 0; j < o.in; ++j) {
        acc += double(x[i * o.in + j]) * static_cast<float>(w[j * o.out + k]);
      }
      pred[i * o.out + k] = static_cast<float>(acc);
    }
  }
  io::Safetensors expected;
  expected.tensors["pred"] = io::HostTensor::F32({o.batch, o.out}, pred);
  s = io::WriteSafetensorsFile(dir + "/predict_expected.safetensors", expected);
  if (!s.ok()) return Fail(s);
  pred[5] += 1.0f;
  expected.tensors["pred"] = io::HostTensor::F32({o.batch, o.out}, pred);
  s = io::WriteSafetensorsFile(dir + "/predict_wrong.safetensors", expected);
  if (!s.ok()) return Fail(s);
  return 0;
}

}  // namespace
}  // namespace kiln

int main(int argc, char** argv) { return kiln::Main(argc, argv); }
