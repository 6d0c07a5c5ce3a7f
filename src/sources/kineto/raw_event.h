// One traceEvents element of a Kineto trace, decoded field by field with simdjson's on-demand API:
// the fields the reader keeps (RawEvent, views into the parsed batch), and the event kind a
// category names. The reader (kineto_reader.cc) turns RawEvents into the model's events.
#pragma once
#include <simdjson.h>

#include <cstdint>
#include <string>
#include <string_view>

#include "model/trace.h"

namespace gpudoctor {

// The event kind a Kineto category ("cat") names; kOther when none.
EventKind kindFromCat(std::string_view cat);

// The fields of one traceEvents element that we keep.
struct RawEvent {
  char ph = 0;
  std::string_view cat, name, pid_tok, tid_tok, ts_tok, dur_tok;
  bool has_cat = false, pid_str = false, tid_str = false;
  int64_t correlation = -1, external_id = -1, bytes = -1, in_nelems = -1, out_nelems = -1;
  int64_t group_size = -1, total_allocated = -1, device_type = -1, device_id = -1;
  std::string_view coll_name, dtype, pg_ranks, pg_name, input_type, meta_name;
  std::string input_dims;  // "Input Dims", compact ("64x512,512x2048,-"); empty when absent
  bool has_coll = false;
};

// Reads one traceEvents element's fields into ev (flow events stop at "ph").
simdjson::error_code readRawEvent(simdjson::ondemand::object obj, RawEvent& ev);

}  // namespace gpudoctor
