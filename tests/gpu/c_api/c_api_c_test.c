/* The C API from a program compiled as C: trains linear regression (whose
 * kernels the CPU stand-in driver runs) until the loss falls, runs its
 * inference model, trains it from device tensors exactly as from host
 * memory, lists and checkpoints the MLP sample, and checks that misuse
 * returns status codes.
 *   c_api_c_test LINREG_KILN PREDICT_KILN MLP_KILN CHECKPOINT_PATH */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "kiln/kiln.h"

static int failures = 0;

/* Checks that `got` is `want`; prints the call and the last error. */
static void expect(kiln_status got, kiln_status want, const char* what) {
  if (got == want) {
    printf("ok   %s\n", what);
  } else {
    printf("FAIL %s: status %d (expected %d): %s\n", what, (int)got,
           (int)want, kiln_last_error());
    ++failures;
  }
}

static void check(int condition, const char* what) {
  printf("%s %s\n", condition ? "ok  " : "FAIL", what);
  if (!condition) ++failures;
}

static float x[16 * 5], y[16 * 3];
static const int64_t x_shape[2] = {16, 5}, y_shape[2] = {16, 3};

/* y = x W* + b* for a fixed W*, b*. */
static void make_batch(void) {
  for (int i = 0; i < 16 * 5; ++i) x[i] = (float)((i * 37) % 17) / 17 - 0.5f;
  for (int r = 0; r < 16; ++r) {
    for (int j = 0; j < 3; ++j) {
      float sum = 0.1f * (float)j;
      for (int k = 0; k < 5; ++k) sum += x[r * 5 + k] * (float)(k - j) * 0.3f;
      y[r * 3 + j] = sum;
    }
  }
}

static void train(kiln_runtime* rt, const char* path) {
  kiln_module* m = NULL;
  kiln_trainer* t = NULL;
  kiln_input in[2] = {{"x", KILN_F32, 2, x_shape, x, sizeof x},
                      {"y", KILN_F32, 2, y_shape, y, sizeof y}};
  float first = 0, loss = 0;
  int64_t step = 0;
  expect(kiln_module_load(rt, path, &m), KILN_OK, "load linreg");
  expect(kiln_trainer_new(m, 1, &t), KILN_OK, "new trainer");
  expect(kiln_trainer_step(t, in, 2, 0.05f, &first), KILN_OK, "first step");
  for (int i = 0; i < 100; ++i) kiln_trainer_step(t, in, 2, 0.05f, &loss);
  printf("     loss %g -> %g\n", first, loss);
  check(loss < first / 10, "the loss falls tenfold in 100 steps");
  expect(kiln_trainer_step_count(t, &step), KILN_OK, "step count");
  check(step == 101, "101 updates");

  in[0].size_bytes = 4;
  expect(kiln_trainer_step(t, in, 2, 0.05f, &loss), KILN_INVALID_ARGUMENT,
         "a wrong size is rejected");
  check(strstr(kiln_last_error(), "size_bytes") != NULL, "... and named");
  kiln_module_close(m);
  in[0].size_bytes = sizeof x;
  expect(kiln_trainer_step(t, in, 2, 0.05f, &loss), KILN_OK,
         "the trainer outlives its closed module");
  kiln_trainer_close(t);
  expect(kiln_trainer_step(t, in, 2, 0.05f, &loss), KILN_INVALID_ARGUMENT,
         "a closed trainer is an error");
}

/* A device tensor holding `size` bytes of `data`. */
static kiln_tensor* upload(kiln_runtime* rt, int32_t rank,
                           const int64_t* shape, const void* data,
                           size_t size) {
  kiln_tensor* tensor = NULL;
  expect(kiln_tensor_new(rt, KILN_F32, rank, shape, &tensor), KILN_OK,
         "new device tensor");
  expect(kiln_tensor_write(tensor, data, size), KILN_OK, "write it");
  return tensor;
}

/* Two trainers of one seed on a freshly drawn batch, one fed host memory,
 * one device tensors: their losses and parameters agree to the bit. */
static void device(kiln_runtime* rt, const char* path) {
  kiln_module* m = NULL;
  kiln_trainer *host = NULL, *dev = NULL;
  kiln_tensor *xd, *yd, *bad = NULL;
  float host_loss = 0, dev_loss = 1, w_host[15], w_dev[15], back[16 * 5];
  int same = 1;
  unsigned seed = (unsigned)time(NULL);
  kiln_input in[2] = {{"x", KILN_F32, 2, x_shape, x, sizeof x},
                      {"y", KILN_F32, 2, y_shape, y, sizeof y}};
  printf("     seed %u\n", seed);
  srand(seed);
  for (int i = 0; i < 16 * 5; ++i) x[i] = (float)rand() / RAND_MAX - 0.5f;
  xd = upload(rt, 2, x_shape, x, sizeof x);
  yd = upload(rt, 2, y_shape, y, sizeof y);
  expect(kiln_tensor_read(xd, back, sizeof back), KILN_OK, "read x back");
  check(memcmp(back, x, sizeof x) == 0, "x comes back unchanged");
  {
    kiln_device_input dev_in[2] = {{"x", xd}, {"y", yd}};
    expect(kiln_module_load(rt, path, &m), KILN_OK, "load linreg");
    expect(kiln_trainer_new(m, 9, &host), KILN_OK, "host-fed trainer");
    expect(kiln_trainer_new(m, 9, &dev), KILN_OK, "device-fed trainer");
    for (int i = 0; i < 4; ++i) {
      kiln_trainer_step(host, in, 2, 0.05f, &host_loss);
      kiln_trainer_step_device(dev, NULL, 0, dev_in, 2, 0.05f, &dev_loss);
      same = same && memcmp(&host_loss, &dev_loss, sizeof host_loss) == 0;
    }
    check(same, "device inputs give the losses of host inputs, bit for bit");
    expect(kiln_trainer_read(host, "w", w_host, sizeof w_host), KILN_OK,
           "read w");
    expect(kiln_trainer_read(dev, "w", w_dev, sizeof w_dev), KILN_OK,
           "read w");
    check(memcmp(w_host, w_dev, sizeof w_host) == 0, "... and the same w");

    expect(kiln_tensor_new(rt, KILN_F32, 2, y_shape, &bad), KILN_OK,
           "new y-shaped tensor");
    dev_in[0].tensor = bad;
    expect(kiln_trainer_step_device(dev, NULL, 0, dev_in, 2, 0.05f, NULL),
           KILN_INVALID_ARGUMENT, "a tensor of the wrong shape is rejected");
    check(strstr(kiln_last_error(), "'x'") != NULL, "... and named");
    kiln_tensor_close(bad);
    expect(kiln_trainer_step_device(dev, NULL, 0, dev_in, 2, 0.05f, NULL),
           KILN_INVALID_ARGUMENT, "a closed tensor is rejected");
    dev_in[0].tensor = NULL;
    expect(kiln_trainer_step_device(dev, NULL, 0, dev_in, 2, 0.05f, NULL),
           KILN_INVALID_ARGUMENT, "a null tensor is rejected");
    expect(kiln_tensor_write(xd, x, 4), KILN_INVALID_ARGUMENT,
           "a short write is rejected");
  }
  kiln_trainer_close(host);
  kiln_trainer_close(dev);
  kiln_module_close(m);
  kiln_tensor_close(xd);
  kiln_tensor_close(yd);
  make_batch();
}

static void predict(kiln_runtime* rt, const char* path) {
  kiln_module* m = NULL;
  kiln_session* s = NULL;
  kiln_outputs* out = NULL;
  kiln_input in = {"x", KILN_F32, 2, x_shape, x, sizeof x};
  float pred[16 * 3], w[15], b[3], want;
  expect(kiln_module_load(rt, path, &m), KILN_OK, "load predict");
  expect(kiln_session_new(m, 0, &s), KILN_OK, "new session");
  expect(kiln_session_run(s, "predict", &in, 1, &out), KILN_OK, "predict");
  expect(kiln_outputs_read(out, "pred", pred, sizeof pred), KILN_OK,
         "read pred");
  expect(kiln_session_read(s, "w", w, sizeof w), KILN_OK, "read w");
  expect(kiln_session_read(s, "b", b, sizeof b), KILN_OK, "read b");
  want = b[1];
  for (int k = 0; k < 5; ++k) want += x[5 + k] * w[k * 3 + 1];
  check(fabsf(pred[3 + 1] - want) < 1e-5f, "pred[1][1] = x[1] . w[:, 1] + b[1]");
  expect(kiln_session_run(s, "nope", &in, 1, &out), KILN_NOT_FOUND,
         "an unknown entry is NOT_FOUND");
  kiln_outputs_free(out);
  kiln_session_close(s);
  kiln_module_close(m);
}

static void mlp(kiln_runtime* rt, const char* path, const char* checkpoint) {
  kiln_module* m = NULL;
  kiln_trainer* t = NULL;
  kiln_tensor_info info;
  size_t count = 0;
  static float w1[8 * 64], zeros[8 * 64], back[8 * 64];
  expect(kiln_module_load(rt, path, &m), KILN_OK, "load mlp");
  expect(kiln_module_input_count(m, "train_step", &count), KILN_OK,
         "train_step's inputs");
  check(count > 2, "train_step has inputs");
  expect(kiln_module_buffer(m, 0, &info), KILN_OK, "first buffer");
  printf("     buffer 0: %s, role %d, rank %d\n", info.name, (int)info.role,
         (int)info.rank);
  expect(kiln_trainer_new(m, 42, &t), KILN_OK, "mlp trainer");
  expect(kiln_trainer_read(t, "w1", w1, sizeof w1), KILN_OK, "read w1");
  expect(kiln_trainer_save(t, checkpoint), KILN_OK, "save");
  expect(kiln_trainer_write(t, "w1", zeros, sizeof zeros), KILN_OK,
         "zero w1");
  expect(kiln_trainer_restore(t, checkpoint), KILN_OK, "restore");
  expect(kiln_trainer_read(t, "w1", back, sizeof back), KILN_OK, "read w1");
  check(memcmp(w1, back, sizeof w1) == 0, "restore brings w1 back");
  expect(kiln_trainer_read(t, "w9", back, sizeof back), KILN_NOT_FOUND,
         "an unknown buffer is NOT_FOUND");
  kiln_trainer_close(t);
  kiln_module_close(m);
}

int main(int argc, char** argv) {
  kiln_runtime* rt = NULL;
  size_t count = 0;
  if (argc != 5) {
    fprintf(stderr, "usage: %s LINREG PREDICT MLP CHECKPOINT\n", argv[0]);
    return 2;
  }
  printf("kiln %s, artifact format %u\n", kiln_version(),
         kiln_artifact_format_version());
  expect(kiln_runtime_open(0, &rt), KILN_OK, "open");
  make_batch();
  train(rt, argv[1]);
  device(rt, argv[1]);
  predict(rt, argv[2]);
  mlp(rt, argv[3], argv[4]);
  expect(kiln_module_entry_count(NULL, &count), KILN_INVALID_ARGUMENT,
         "a null module is an error");
  kiln_runtime_close(rt);
  printf("%d failures\n", failures);
  return failures == 0 ? 0 : 1;
}
