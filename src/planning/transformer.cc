#include "planning/transformer.h"

#include <map>

namespace gpudoctor {

namespace {
ModelSpec gpt(std::string n, int64_t L, int64_t h, int64_t a, int64_t s) {
  ModelSpec m;
  m.name = std::move(n);
  m.layers = L;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = a;
  m.ffn = 4 * h;
  m.vocab = 50257;
  m.seq = s;
  m.max_positions = s;
  return m;
}
ModelSpec llama(std::string n, int64_t L, int64_t h, int64_t a, int64_t kv, int64_t f, int64_t V, int64_t s) {
  ModelSpec m;
  m.name = std::move(n);
  m.layers = L;
  m.hidden = h;
  m.heads = a;
  m.kv_heads = kv;
  m.ffn = f;
  m.vocab = V;
  m.seq = s;
  m.gated_mlp = true;
  m.tied_embeddings = false;
  m.learned_positions = false;
  m.biases = false;
  return m;
}

const std::map<std::string, ModelSpec>& presets() {
  // Shapes from the GPT-2 release, the GPT-3 paper (Table 2.1) and the Llama 2 / Llama 3 model cards.
  static const std::map<std::string, ModelSpec> p = [] {
    std::map<std::string, ModelSpec> m;
    for (const auto& x :
         {gpt("gpt2", 12, 768, 12, 1024), gpt("gpt2-medium", 24, 1024, 16, 1024), gpt("gpt2-large", 36, 1280, 20, 1024),
          gpt("gpt2-xl", 48, 1600, 25, 1024), gpt("gpt3-125m", 12, 768, 12, 2048), gpt("gpt3-350m", 24, 1024, 16, 2048),
          gpt("gpt3-760m", 24, 1536, 16, 2048), gpt("gpt3-1.3b", 24, 2048, 32, 2048),
          gpt("gpt3-2.7b", 32, 2560, 32, 2048), gpt("gpt3-6.7b", 32, 4096, 32, 2048),
          gpt("gpt3-13b", 40, 5120, 40, 2048), gpt("gpt3-175b", 96, 12288, 96, 2048),
          llama("llama2-7b", 32, 4096, 32, 32, 11008, 32000, 4096),
          llama("llama2-13b", 40, 5120, 40, 40, 13824, 32000, 4096),
          llama("llama2-70b", 80, 8192, 64, 8, 28672, 32000, 4096),
          llama("llama3-8b", 32, 4096, 32, 8, 14336, 128256, 8192),
          llama("llama3-70b", 80, 8192, 64, 8, 28672, 128256, 8192)})
      m.emplace(x.name, x);
    return m;
  }();
  return p;
}
}  // namespace

std::vector<std::string> modelPresetNames() {
  std::vector<std::string> v;
  for (const auto& [k, _] : presets()) v.push_back(k);
  return v;
}

Result<ModelSpec> modelPreset(const std::string& name) {
  auto it = presets().find(name);
  if (it != presets().end()) return it->second;
  std::string known;
  for (const auto& n : modelPresetNames()) known += (known.empty() ? "" : ", ") + n;
  return Error{"unknown model preset \"" + name + "\" (known: " + known + ")"};
}

Status validateModel(const ModelSpec& m) {
  for (auto [v, n] : {std::pair{m.layers, "layers"},
                      {m.hidden, "hidden"},
                      {m.heads, "heads"},
                      {m.kv_heads, "kv_heads"},
                      {m.ffn, "ffn"},
                      {m.vocab, "vocab"},
                      {m.seq, "seq"}})
    if (v <= 0) return Error{std::string("model: ") + n + " must be positive"};
  if (m.hidden % m.heads)
    return Error{"model: heads (" + std::to_string(m.heads) + ") must divide hidden (" + std::to_string(m.hidden) +
                 ")"};
  if (m.heads % m.kv_heads) return Error{"model: kv_heads must divide heads"};
  return {};
}

int64_t layerParams(const ModelSpec& m) {
  int64_t h = m.hidden, kv = m.hidden / m.heads * m.kv_heads;
  int64_t attn = h * h + 2 * h * kv + h * h;  // q, k, v, out
  int64_t mlp = (m.gated_mlp ? 3 : 2) * h * m.ffn;
  int64_t norms = m.biases ? 4 * h : 2 * h;  // LayerNorm weight+bias x2, or RMSNorm weight x2
  int64_t bias = m.biases ? (h + 2 * kv + h) + (m.ffn + h) : 0;
  return attn + mlp + norms + bias;
}

int64_t embeddingParams(const ModelSpec& m) {
  int64_t e = m.vocab * m.hidden;
  if (!m.tied_embeddings) e += m.vocab * m.hidden;
  if (m.learned_positions) e += (m.max_positions ? m.max_positions : m.seq) * m.hidden;
  return e + (m.biases ? 2 * m.hidden : m.hidden);  // final norm
}

int64_t totalParams(const ModelSpec& m) { return m.layers * layerParams(m) + embeddingParams(m); }

double trainFlopsPerToken(const ModelSpec& m) {
  // PaLM appendix B: 6N + 12·L·H·Q·T with H heads of size Q (= hidden) and T the sequence length.
  // N here excludes the position table (not a matmul); the output projection counts even if tied.
  double n = static_cast<double>(m.layers * layerParams(m) + m.vocab * m.hidden);
  return 6 * n + 12.0 * static_cast<double>(m.layers * m.hidden * m.seq);
}

double attentionForwardFlopsPerToken(const ModelSpec& m) {
  return 4.0 * static_cast<double>(m.layers * m.hidden * m.seq);
}

}  // namespace gpudoctor
