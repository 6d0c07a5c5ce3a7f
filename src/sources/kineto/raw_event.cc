#include "sources/kineto/raw_event.h"

#include <cmath>
#include <string>

#include "common/exact_time.h"

namespace gpudoctor {

namespace od = simdjson::ondemand;

EventKind kindFromCat(std::string_view cat) {
  switch (cat.size()) {
    case 6:
      if (cat == "cpu_op") return EventKind::kHostOp;
      if (cat == "kernel") return EventKind::kKernel;
      break;
    case 8:
      if (cat == "overhead") return EventKind::kProfilerOverhead;
      break;
    case 9:
      if (cat == "cuda_sync") return EventKind::kSyncEvent;
      break;
    case 10:
      if (cat == "gpu_memcpy") return EventKind::kMemcpy;
      if (cat == "gpu_memset") return EventKind::kMemset;
      break;
    case 11:
      if (cat == "cuda_driver") return EventKind::kDriverCall;
      break;
    case 12:
      if (cat == "cuda_runtime") return EventKind::kRuntimeCall;
      break;
    case 15:
      if (cat == "user_annotation") return EventKind::kRange;
      if (cat == "python_function") return EventKind::kHostFunction;
      break;
    case 19:
      if (cat == "gpu_user_annotation") return EventKind::kGpuRange;
      break;
    default:
      break;
  }
  // Older PyTorch wrote "Kernel", "Memcpy", "Runtime", "Operator".
  if (cat == "Kernel") return EventKind::kKernel;
  if (cat == "Memcpy") return EventKind::kMemcpy;
  if (cat == "Memset") return EventKind::kMemset;
  if (cat == "Runtime") return EventKind::kRuntimeCall;
  if (cat == "Operator" || cat == "operator") return EventKind::kHostOp;
  return EventKind::kOther;
}

namespace {

simdjson::error_code tokenOf(od::value v, std::string_view& out, bool& is_str) {
  od::json_type t;
  if (auto err = v.type().get(t)) return err;
  if (t == od::json_type::string) {
    is_str = true;
    return v.get_string().get(out);
  }
  is_str = false;
  out = v.raw_json_token();
  return simdjson::SUCCESS;
}

// The key as written, without unescaping (trace keys have no escapes; a key that has one simply
// matches nothing). Saves copying every key into simdjson's string buffer.
simdjson::error_code rawKey(simdjson::simdjson_result<od::field>& field, std::string_view& out) {
  if (auto err = field.error()) return err;
  const char* r = field.value_unsafe().key().raw();
  size_t n = 0;
  while (r[n] != '"') ++n;  // the structural pass guarantees the closing quote
  out = std::string_view(r, n);
  return simdjson::SUCCESS;
}

// A string field, left empty when the value has another type.
void optString(od::value v, std::string_view& out) {
  if (v.get_string().get(out)) out = {};
}

// Args are counts, ids and byte sizes: anything outside ±2^50 is nonsense and would overflow sums.
constexpr int64_t kMaxArg = int64_t{1} << 50;

simdjson::error_code intOfRaw(od::value v, int64_t& out) {
  std::string_view tok = v.raw_json_token();
  if (auto x = parseInt64(tok))
    out = *x;
  else {
    // A string holding a number, or a float: take what is there.
    std::string_view s;
    if (!v.get_string().get(s)) {
      if (auto y = parseInt64(s)) out = *y;
    } else {
      double d;
      if (!v.get_double().get(d) && std::fabs(d) < 9e18) out = static_cast<int64_t>(d);
    }
  }
  return simdjson::SUCCESS;
}

simdjson::error_code intOf(od::value v, int64_t& out) {
  auto err = intOfRaw(v, out);
  if (out > kMaxArg || out < -kMaxArg) out = -1;
  return err;
}

simdjson::error_code readArgs(od::object args, RawEvent& ev) {
  for (auto field : args) {
    std::string_view key;
    if (auto err = rawKey(field, key)) return err;
    od::value v;
    if (auto err = field.value().get(v)) return err;
    switch (key.size()) {
      case 4:
        if (key == "name") optString(v, ev.meta_name);
        break;
      case 5:
        if (key == "bytes")
          intOf(v, ev.bytes);
        else if (key == "dtype")
          optString(v, ev.dtype);
        break;
      case 10:
        if (key == "Input type") {
          od::array a;
          if (!v.get_array().get(a))
            for (auto x : a) {
              std::string_view s;
              if (!x.get_string().get(s) && !s.empty()) {
                ev.input_type = s;
                break;
              }
            }
        } else if (key == "Group size") {
          intOf(v, ev.group_size);
        } else if (key == "Input Dims") {
          // [[64, 512], [512, 2048], []] -> "64x512,512x2048,-": the shapes that tell one GEMM
          // from another when compare pairs kernels by the operator that launched them.
          od::array a;
          if (!v.get_array().get(a)) {
            std::string s;
            for (auto x : a) {
              if (!s.empty()) s += ',';
              od::array dims;
              size_t before = s.size();
              if (!x.get_array().get(dims))
                for (auto d : dims) {
                  int64_t n = 0;
                  if (s.size() > before) s += 'x';
                  if (!d.get_int64().get(n)) s += std::to_string(n);
                }
              if (s.size() == before) s += '-';
              if (s.size() > 256) break;  // enough to tell shapes apart
            }
            ev.input_dims = std::move(s);
          }
        }
        break;
      case 9:
        if (key == "Device Id") intOf(v, ev.device_id);
        break;
      case 11:
        if (key == "correlation")
          intOf(v, ev.correlation);
        else if (key == "External id")
          intOf(v, ev.external_id);
        else if (key == "Device Type")
          intOf(v, ev.device_type);
        break;
      case 13:
        if (key == "In msg nelems") intOf(v, ev.in_nelems);
        break;
      case 14:
        if (key == "Out msg nelems") intOf(v, ev.out_nelems);
        break;
      case 15:
        if (key == "Collective name") {
          optString(v, ev.coll_name);
          ev.has_coll = true;
        } else if (key == "Total Allocated") {
          intOf(v, ev.total_allocated);
        }
        break;
      case 18:
        if (key == "Process Group Name") optString(v, ev.pg_name);
        break;
      case 19:
        if (key == "Process Group Ranks") optString(v, ev.pg_ranks);
        break;
      default:
        break;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace

simdjson::error_code readRawEvent(od::object obj, RawEvent& ev) {
  for (auto field : obj) {
    std::string_view key;
    if (auto err = rawKey(field, key)) return err;
    od::value v;
    if (auto err = field.value().get(v)) return err;
    switch (key.size()) {
      case 2:
        if (key == "ph") {
          std::string_view ph;
          if (auto err = v.get_string().get(ph)) return err;
          ev.ph = ph.empty() ? 0 : ph[0];
          if (ev.ph == 's' || ev.ph == 'f' || ev.ph == 't') return simdjson::SUCCESS;
        } else if (key == "ts") {
          bool s;
          if (auto err = tokenOf(v, ev.ts_tok, s)) return err;
        }
        break;
      case 3:
        if (key == "cat") {
          if (auto err = v.get_string().get(ev.cat)) return err;
          ev.has_cat = true;
        } else if (key == "pid") {
          if (auto err = tokenOf(v, ev.pid_tok, ev.pid_str)) return err;
        } else if (key == "tid") {
          if (auto err = tokenOf(v, ev.tid_tok, ev.tid_str)) return err;
        } else if (key == "dur") {
          bool s;
          if (auto err = tokenOf(v, ev.dur_tok, s)) return err;
        }
        break;
      case 4:
        if (key == "name") {
          if (auto err = v.get_string().get(ev.name)) return err;
        } else if (key == "args") {
          od::object a;
          if (!v.get_object().get(a))
            if (auto err = readArgs(a, ev)) return err;
        }
        break;
      default:
        break;
    }
  }
  return simdjson::SUCCESS;
}

}  // namespace gpudoctor
