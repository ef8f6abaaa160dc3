// llm.c's sampling cost per token, the reference for cppgrad's KV cache (bench/gpt/compare.sh builds and runs this).
// It holds none of llm.c's code: it includes llm.c's train_gpt2.c (the anchors' llmc/src, unmodified) with its main
// renamed, as the anchors' llmc/step_bench.c does, and calls its gpt2_build_from_checkpoint, gpt2_forward and
// sample_mult.
//   gcc -Ofast -march=native -fopenmp -DOMP -I"$CPPGRAD_ANCHORS/llmc/src" bench/gpt/llmc_sample.c -lm -o llmc_sample
//   OMP_NUM_THREADS=1 ./llmc_sample V LAYERS HEADS CHANNELS CONTEXT SAMPLES CHECKPOINT_PATH
//
// One sample is CONTEXT - 1 new tokens after a 1-token prompt, each drawn from the forward pass's last row, timed
// two ways, each the median over SAMPLES samples of (the sample's time / its tokens):
//  - llm.c's loop (train_gpt2.c's main): gpt2_forward on all CONTEXT positions of one sequence (B = 1; main runs
//    its training B) for every token, the positions not yet generated holding the prompt token, as its EOT fill;
//  - a growing prefix (nanoGPT's generate, cppgrad's generate_recompute): gpt2_forward on the t tokens so far.
//    gpt2_forward allocates its activations for the first (B, T) it sees and refuses another; the buffers for
//    (1, CONTEXT) hold every (1, t <= CONTEXT) layout, so seq_len is set to t before each call.
#define main llmc_reference_main
#include "train_gpt2.c"
#undef main

static int compare_doubles(const void* a, const void* b) {
  const double x = *(const double*)a, y = *(const double*)b;
  return (x > y) - (x < y);
}

static double now_ms(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return t.tv_sec * 1e3 + t.tv_nsec / 1e6;
}

// A checkpoint in llm.c's format (header version 3, float32 parameters in its order) for the shape: every value
// uniform with std 0.02, LayerNorm weights 1; the vocabulary padded to a multiple of 64 as step_bench.c pads it.
static void write_checkpoint(const char* path, int V, int L, int NH, int C, int T) {
  const int Vp = (V + 63) / 64 * 64;
  int header[256] = {0};
  header[0] = 20240326; header[1] = 3; header[2] = T; header[3] = V;
  header[4] = L; header[5] = NH; header[6] = C; header[7] = Vp;
  GPT2Config config = {.max_seq_len = T, .vocab_size = V, .padded_vocab_size = Vp,
                       .num_layers = L, .num_heads = NH, .channels = C};
  size_t sizes[NUM_PARAMETER_TENSORS];
  fill_in_parameter_sizes(sizes, config);
  FILE* f = fopenCheck(path, "wb");
  fwriteCheck(header, sizeof(int), 256, f);
  uint64_t rng = 42;
  for (int i = 0; i < NUM_PARAMETER_TENSORS; i++) {
    const int layer_norm_weight = (i == 2 || i == 8 || i == 14);  // ln1w, ln2w, lnfw
    for (size_t j = 0; j < sizes[i]; j++) {
      const float v = layer_norm_weight ? 1.0f : 0.02f * 1.7320508f * (2.0f * random_f32(&rng) - 1.0f);
      fwriteCheck(&v, sizeof(float), 1, f);
    }
  }
  fcloseCheck(f);
}

// One sample of T - 1 tokens after tokens[0] -> ms per token. grow: forward on the t tokens so far; otherwise on
// all T positions, as llm.c's main does.
static double sample_ms_per_token(GPT2* model, int* tokens, int T, int grow, uint64_t* rng) {
  for (int i = 1; i < T; i++) tokens[i] = tokens[0];
  const double start = now_ms();
  for (int t = 1; t < T; t++) {
    const int len = grow ? t : T;
    model->seq_len = len;
    gpt2_forward(model, tokens, NULL, 1, len);
    const float* probs = model->acts.probs + (size_t)(t - 1) * model->config.padded_vocab_size;  // row t - 1
    tokens[t] = sample_mult((float*)probs, model->config.vocab_size, random_f32(rng));
  }
  return (now_ms() - start) / (T - 1);
}

int main(int argc, char** argv) {
  if (argc != 8) {
    fprintf(stderr, "usage: %s V LAYERS HEADS CHANNELS CONTEXT SAMPLES CHECKPOINT_PATH\n", argv[0]);
    return 2;
  }
  const int V = atoi(argv[1]), L = atoi(argv[2]), NH = atoi(argv[3]), C = atoi(argv[4]), T = atoi(argv[5]);
  const int samples = atoi(argv[6]);
  if (V < 1 || L < 1 || NH < 1 || C < 1 || C % NH != 0 || T < 2 || samples < 1) {
    fprintf(stderr, "llmc_sample: need V, LAYERS, HEADS, CHANNELS >= 1 (CHANNELS a multiple of HEADS), "
                    "CONTEXT >= 2, SAMPLES >= 1\n");
    return 2;
  }
  write_checkpoint(argv[7], V, L, NH, C, T);
  GPT2 model;
  gpt2_build_from_checkpoint(&model, argv[7]);
  int* tokens = (int*)mallocCheck(sizeof(int) * T);
  tokens[0] = 0;
  uint64_t rng = 1337;
  double* full = (double*)mallocCheck(sizeof(double) * samples);
  double* grow = (double*)mallocCheck(sizeof(double) * samples);
  sample_ms_per_token(&model, tokens, T, 0, &rng);  // warm-up: allocates the activations for (1, T)
  for (int s = 0; s < samples; s++) {
    full[s] = sample_ms_per_token(&model, tokens, T, 0, &rng);
    grow[s] = sample_ms_per_token(&model, tokens, T, 1, &rng);
  }
  qsort(full, samples, sizeof(double), compare_doubles);
  qsort(grow, samples, sizeof(double), compare_doubles);
  printf("llmc_sample V=%d L=%d NH=%d C=%d T=%d tokens=%d samples=%d: full %.4f ms/token, grow %.4f ms/token\n",
         V, L, NH, C, T, T - 1, samples, full[samples / 2], grow[samples / 2]);
  gpt2_free(&model);
  free(tokens);
  free(full);
  free(grow);
  return 0;
}
