// Terminal rendering of an analysis: plain tables, prose wrapped at the report width
// (report/text.h: textWidth). Computes nothing.
#pragma once
#include <string>

#include "analysis/run_analysis.h"

namespace gpudoctor {

struct TerminalOptions {
  int detail_rank = -1;       // rank whose steps are listed; -1: the first
  size_t max_rank_rows = 16;  // more ranks than this: summary plus the slowest ranks
  double read_seconds = 0;    // for the footer
  uint64_t read_bytes = 0;
  bool color = false;  // the title and the section headings in ANSI bold (report/style.h)
};

// The report as text (header + body).
std::string renderTerminal(const RunAnalysis& run, const TerminalOptions& opt);

// The report in its two parts, so a caller can put the findings between them.
struct TerminalParts {
  std::string header;  // "gpudoctor analyze: ..." and one line per rank
  std::string body;    // the tables, from "Per rank, mean per step" to the read-rate footer
};
// The same text as renderTerminal, cut after the header.
TerminalParts renderTerminalParts(const RunAnalysis& run, const TerminalOptions& opt);

}  // namespace gpudoctor
