/* Trains a kiln artifact whose train_step takes f32 inputs x and y, on a
 * fixed batch, and prints the loss of every step.
 *   train ARTIFACT STEPS LR */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <kiln/kiln.h>

#define CHECK(call)                                               \
  do {                                                            \
    if ((call) != KILN_OK) {                                      \
      fprintf(stderr, "%s: %s\n", #call, kiln_last_error());      \
      return 1;                                                   \
    }                                                             \
  } while (0)

/* The batch input `name` of train_step, filled with a fixed pattern. */
static int make_input(kiln_module* m, const char* name, int mul, int mod,
                      float shift, kiln_input* in) {
  size_t count = 0;
  kiln_tensor_info info;
  CHECK(kiln_module_input_count(m, "train_step", &count));
  for (size_t i = 0; i < count; ++i) {
    CHECK(kiln_module_input(m, "train_step", i, &info));
    if (strcmp(info.name, name) != 0) continue;
    float* data = malloc(info.size_bytes);
    int64_t* shape = malloc(sizeof info.shape);
    for (size_t e = 0; e < info.size_bytes / 4; ++e) {
      data[e] = (float)((e * mul) % mod) / mod - shift;
    }
    memcpy(shape, info.shape, sizeof info.shape);
    *in = (kiln_input){name, KILN_F32, info.rank, shape, data,
                       info.size_bytes};
    return 0;
  }
  fprintf(stderr, "train_step has no input %s\n", name);
  return 1;
}

int main(int argc, char** argv) {
  if (argc != 4) {
    fprintf(stderr, "usage: %s ARTIFACT STEPS LR\n", argv[0]);
    return 2;
  }
  kiln_runtime* rt;
  kiln_module* m;
  kiln_trainer* t;
  kiln_input in[2];
  printf("kiln %s (artifact format %u)\n", kiln_version(),
         kiln_artifact_format_version());
  CHECK(kiln_runtime_open(0, &rt));
  CHECK(kiln_module_load(rt, argv[1], &m));
  if (make_input(m, "x", 37, 17, 0.5f, &in[0]) ||
      make_input(m, "y", 11, 7, 0.0f, &in[1])) {
    return 1;
  }
  CHECK(kiln_trainer_new(m, 0, &t));
  for (int step = 1; step <= atoi(argv[2]); ++step) {
    float loss;
    CHECK(kiln_trainer_step(t, in, 2, (float)atof(argv[3]), &loss));
    printf("step %d loss %.6f\n", step, loss);
  }
  kiln_trainer_close(t);
  kiln_module_close(m);
  kiln_runtime_close(rt);
  return 0;
}
