#include "model/intern.h"

#include <mutex>
#include <string>
#include <unordered_set>

namespace gpudoctor {

std::string_view internText(std::string_view s) {
  static std::mutex mu;
  static auto* pool = new std::unordered_set<std::string>();  // never destroyed: views outlive statics
  std::lock_guard<std::mutex> lock(mu);
  return *pool->emplace(s).first;  // node-based: an element's address never changes
}

}  // namespace gpudoctor
