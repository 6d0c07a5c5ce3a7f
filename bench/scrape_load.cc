// Load generator for `gpudoctor monitor --prometheus`: N client threads scrape /metrics back to
// back for T seconds over keep-alive connections; prints scrapes per second and latency
// percentiles. Usage: scrape_load PORT THREADS SECONDS
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <thread>
#include <vector>

#include <httplib.h>

int main(int argc, char** argv) {
  if (argc != 4) {
    std::fprintf(stderr, "usage: scrape_load PORT THREADS SECONDS\n");
    return 2;
  }
  int port = std::atoi(argv[1]), threads = std::atoi(argv[2]);
  double seconds = std::atof(argv[3]);
  std::atomic<long> ok{0}, bad{0};
  std::mutex mu;
  std::vector<double> lat_us;
  auto end = std::chrono::steady_clock::now() + std::chrono::duration<double>(seconds);
  std::vector<std::thread> ts;
  for (int t = 0; t < threads; ++t)
    ts.emplace_back([&] {
      httplib::Client c("127.0.0.1", port);
      c.set_keep_alive(true);
      c.set_tcp_nodelay(true);  // as Prometheus' Go client does
      std::vector<double> mine;
      while (std::chrono::steady_clock::now() < end) {
        auto t0 = std::chrono::steady_clock::now();
        auto r = c.Get("/metrics");
        auto t1 = std::chrono::steady_clock::now();
        if (r && r->status == 200) {
          ++ok;
          mine.push_back(std::chrono::duration<double, std::micro>(t1 - t0).count());
        } else {
          ++bad;
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      lat_us.insert(lat_us.end(), mine.begin(), mine.end());
    });
  for (auto& t : ts) t.join();
  std::sort(lat_us.begin(), lat_us.end());
  auto pct = [&](double p) { return lat_us.empty() ? 0.0 : lat_us[static_cast<size_t>(p * (lat_us.size() - 1))]; };
  std::printf("scrapes %ld failed %ld in %.1f s = %.0f scrapes/s; latency p50 %.0f us p99 %.0f us max %.0f us\n",
              ok.load(), bad.load(), seconds, ok / seconds, pct(0.5), pct(0.99), pct(1.0));
  return bad ? 1 : 0;
}
