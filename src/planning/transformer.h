// Transformer models as the planner sees them: shapes, parameter count and FLOPs per token, with
// presets for common families. Pure arithmetic, no I/O.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "common/result.h"

namespace gpudoctor {

struct ModelSpec {
  std::string name;
  int64_t layers = 0, hidden = 0, heads = 0, kv_heads = 0, ffn = 0, vocab = 0, seq = 0;
  bool gated_mlp = false;         // SwiGLU (Llama): three FFN matrices instead of two
  bool tied_embeddings = true;    // GPT-2/3 share input and output embeddings
  bool learned_positions = true;  // GPT-2/3 position embedding table (seq x hidden)
  bool biases = true;             // GPT-2/3 linear and norm biases; Llama has none
  int64_t max_positions = 0;      // size of the position table (default seq)
};

// Known presets: gpt2, gpt2-medium, gpt2-large, gpt2-xl, gpt3-125m ... gpt3-175b, llama2-7b,
// llama2-13b, llama2-70b, llama3-8b, llama3-70b. Error lists them for an unknown name.
Result<ModelSpec> modelPreset(const std::string& name);
std::vector<std::string> modelPresetNames();

// Checks shapes (positive, heads divide hidden, kv_heads divide heads); Error names the field.
Status validateModel(const ModelSpec& m);

// Parameters of one transformer layer, of the embeddings (input, output if untied, positions), total.
int64_t layerParams(const ModelSpec& m);
int64_t embeddingParams(const ModelSpec& m);
int64_t totalParams(const ModelSpec& m);

// Training FLOPs per token (forward + backward) without recomputation: 6N + 12·L·h·s, where N
// counts the non-embedding... as in the PaLM appendix: N = all parameters (dense matmuls).
double trainFlopsPerToken(const ModelSpec& m);
// Forward FLOPs per token of the attention score/value products: 4·L·h·s (one forward).
double attentionForwardFlopsPerToken(const ModelSpec& m);

}  // namespace gpudoctor
