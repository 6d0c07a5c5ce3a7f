// "Did you mean": the known name nearest to a misspelt one, for error messages (an unknown option,
// threshold or key).
#pragma once
#include <string>
#include <vector>

namespace gpudoctor {

// Levenshtein distance (insertions, deletions, substitutions) between a and b.
size_t editDistance(const std::string& a, const std::string& b);

// The candidate nearest to `word` when it is close enough to be a typo (at most max(2, |word| / 4)
// edits away); "" when none is.
std::string nearestName(const std::string& word, const std::vector<std::string>& candidates);

}  // namespace gpudoctor
