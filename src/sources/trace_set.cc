#include "sources/trace_set.h"

#include <fcntl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <mutex>
#include <optional>
#include <set>
#include <thread>

#include "sources/byte_stream.h"

namespace gpudoctor {

namespace fs = std::filesystem;

namespace {
bool looksLikeTrace(const std::string& name) {
  auto ends = [&](std::string_view s) {
    return name.size() >= s.size() && name.compare(name.size() - s.size(), s.size(), s) == 0;
  };
  return ends(".json") || ends(".json.gz") || ends(".gdrec") || ends(".gdrec.gz") || ends(".gdsum") ||
         ends(".gdsum.gz");
}

// Temporary copies of streams, removed when the process exits.
struct Spools {
  std::vector<fs::path> dirs;
  ~Spools() {
    std::error_code ec;
    for (const auto& d : dirs) fs::remove_all(d, ec);
  }
};

// Copies the stream at `path` ("-": stdin) into a temporary file; its path, or an Error naming the stream.
Result<std::string> spoolStream(const std::string& path) {
  static Spools spools;
  std::string tmpl = (fs::temp_directory_path() / "gpudoctor-stdin-XXXXXX").string();
  if (!::mkdtemp(tmpl.data()))
    return Error{path + ": cannot make a temporary folder to read the stream into: " + std::strerror(errno)};
  spools.dirs.emplace_back(tmpl);
  std::string name = path == "-" || path == "/dev/stdin" ? "stdin" : "stream-" + fs::path(path).filename().string();
  std::string out = (fs::path(tmpl) / name).string();
  int in = path == "-" ? STDIN_FILENO : ::open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (in < 0) return Error{path + ": cannot open: " + std::strerror(errno)};
  int fd = ::open(out.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0600);
  std::vector<char> buf(1 << 20);
  std::string err;
  for (ssize_t n; fd >= 0 && err.empty() && (n = ::read(in, buf.data(), buf.size())) != 0;) {
    if (n < 0 && errno == EINTR) continue;
    if (n < 0) err = path + ": cannot read: " + std::strerror(errno);
    for (ssize_t done = 0; n > 0 && err.empty() && done < n;) {
      ssize_t w = ::write(fd, buf.data() + done, static_cast<size_t>(n - done));
      if (w < 0 && errno != EINTR) err = out + ": cannot write the copy of " + path + ": " + std::strerror(errno);
      done += std::max<ssize_t>(w, 0);
    }
  }
  if (fd < 0) err = out + ": cannot write the copy of " + path + ": " + std::strerror(errno);
  if (path != "-") ::close(in);
  if (fd >= 0) ::close(fd);
  if (!err.empty()) return Error{err};
  return out;
}

}  // namespace

Result<std::vector<std::string>> expandTracePaths(const std::vector<std::string>& paths,
                                                  std::vector<std::string>* skipped) {
  std::vector<std::string> out;
  for (const auto& p : paths) {
    std::error_code ec;
    auto st = fs::status(p, ec);
    if (p == "-" || (!ec && fs::exists(st) && !fs::is_directory(st) && !fs::is_regular_file(st))) {
      auto copy = spoolStream(p);
      if (!copy.ok()) return copy.error();
      out.push_back(copy.value());
      continue;
    }
    if (ec || !fs::exists(st)) return Error{p + ": no such file or directory"};
    if (fs::is_directory(st)) {
      std::vector<std::string> found;
      for (auto it = fs::directory_iterator(p, ec); !ec && it != fs::directory_iterator(); it.increment(ec)) {
        std::error_code ec2;
        if (it->is_regular_file(ec2) && looksLikeTrace(it->path().filename().string()))
          found.push_back(it->path().string());
      }
      if (ec) return Error{p + ": cannot list directory: " + ec.message()};
      std::sort(found.begin(), found.end());
      if (skipped) {  // a directory may hold other JSON (configs, results): those are skipped, and named
        std::vector<std::string> traces;
        for (auto& f : found) {
          if (f.ends_with(".gdsum") || f.ends_with(".gdsum.gz")) {  // per-rank summaries: their own reader
            traces.push_back(std::move(f));
            continue;
          }
          auto head = readTraceHead(f);
          auto reader = head.ok() ? pickTraceReader(f, head.value()) : Result<const TraceReader*>(head.error());
          if (reader.ok())
            traces.push_back(std::move(f));
          else
            skipped->push_back(f + ": skipped, not a trace");
        }
        found = std::move(traces);
      }
      if (found.empty()) return Error{p + ": directory holds no trace files (*.json, *.json.gz, *.gdrec, *.gdrec.gz)"};
      out.insert(out.end(), found.begin(), found.end());
    } else {
      out.push_back(p);
    }
  }
  if (out.empty()) return Error{"no trace files given"};
  return out;
}

Result<std::string> readTraceHead(const std::string& path, size_t n) {
  auto in = ByteStream::open(path);
  if (!in.ok()) return in.error();
  std::string head(n, '\0');
  size_t got = 0;
  while (got < n) {
    auto r = in.value()->read(head.data() + got, n - got);
    if (!r.ok()) {
      if (got == 0) return r.error();
      break;  // damage further in: the reader that claims the file reports it in context
    }
    if (r.value() == 0) break;
    got += r.value();
  }
  head.resize(got);
  return head;
}

Result<const TraceReader*> pickTraceReader(const std::string& path, std::string_view head,
                                           std::span<const TraceReader* const> readers) {
  for (const TraceReader* r : readers)
    if (r->probe(head, path)) return r;
  std::string known;
  for (const TraceReader* r : readers)
    known += (known.empty() ? "" : "; ") + std::string(r->name()) + ": " + std::string(r->description());
  bool blank = head.find_first_not_of(" \t\r\n") == std::string_view::npos;
  return Error{path + (blank ? ": empty file" : ": not a trace format gpudoctor reads") +
               " (formats known: " + (known.empty() ? "none" : known) + ")"};
}

Result<RankTrace> readTrace(const std::string& path) {
  auto head = readTraceHead(path);
  if (!head.ok()) return head.error();
  auto reader = pickTraceReader(path, head.value());
  if (!reader.ok()) return reader.error();
  return reader.value()->read(path);
}

Result<std::vector<RankTrace>> readTraceSet(const std::vector<std::string>& files, const ReadSetOptions& opt) {
  size_t n = files.size();
  std::vector<std::optional<Result<RankTrace>>> results(n);
  unsigned hw = std::max(1u, std::thread::hardware_concurrency());
  unsigned threads = opt.threads ? opt.threads : hw;
  threads = static_cast<unsigned>(std::min<size_t>(threads, n));
  std::atomic<size_t> next{0}, done{0};
  std::mutex mu;
  auto worker = [&] {
    for (size_t i; (i = next.fetch_add(1)) < n;) {
      try {
        results[i].emplace(readTrace(files[i]));
      } catch (const std::bad_alloc&) {
        results[i].emplace(Error{files[i] + ": out of memory while reading"});
      } catch (const std::exception& e) {
        results[i].emplace(Error{files[i] + ": " + e.what()});
      }
      size_t d = done.fetch_add(1) + 1;
      if (opt.progress) {
        std::lock_guard<std::mutex> lock(mu);
        opt.progress(d, n, files[i]);
      }
    }
  };
  if (threads <= 1) {
    worker();
  } else {
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t) pool.emplace_back(worker);
    for (auto& t : pool) t.join();
  }
  std::vector<RankTrace> out;
  out.reserve(n);
  for (size_t i = 0; i < n; ++i) {
    if (!results[i]->ok()) return results[i]->error();
    out.push_back(std::move(results[i]->value()));
  }
  // Ranks: distributedInfo where every file has one, else file order.
  bool all = std::all_of(out.begin(), out.end(), [](const RankTrace& t) { return t.rank >= 0; });
  if (all) {
    std::set<int> seen;
    for (const auto& t : out)
      if (!seen.insert(t.rank).second)
        return Error{t.path + ": rank " + std::to_string(t.rank) +
                     " appears in more than one trace; pass one trace per rank"};
    std::stable_sort(out.begin(), out.end(), [](const RankTrace& a, const RankTrace& b) { return a.rank < b.rank; });
  } else {
    for (size_t i = 0; i < out.size(); ++i) out[i].rank = static_cast<int>(i);
  }
  return out;
}

}  // namespace gpudoctor
