#include "launch/rendezvous.h"

#include <arpa/inet.h>
#include <netdb.h>
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <cstdlib>
#include <cstring>
#include <thread>

#include <fmt/format.h>

namespace gpudoctor {

namespace {

// Rank 0: one connection per other rank, each sent the id and closed.
Status serveId(const LaunchEnv& l, std::span<const char> id, std::chrono::milliseconds timeout) {
  const std::string port = std::to_string(l.id_port);
  const double limit_s = static_cast<double>(timeout.count()) / 1000;
  int s = socket(AF_INET, SOCK_STREAM, 0);
  int one = 1;
  setsockopt(s, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
  sockaddr_in a{};
  a.sin_family = AF_INET;
  a.sin_port = htons(static_cast<uint16_t>(std::atoi(port.c_str())));
  a.sin_addr.s_addr = INADDR_ANY;
  if (bind(s, reinterpret_cast<sockaddr*>(&a), sizeof a) != 0 || listen(s, 1024) != 0) {
    Error e{fmt::format("rank 0 cannot listen on port {}: {}", port, std::strerror(errno))};
    close(s);
    return e;
  }
  // Never wait forever for a rank that did not start: `timeout` for all of them, as the others wait.
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (int served = 1; served < l.world_size; ++served) {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now());
    pollfd pfd{s, POLLIN, 0};
    if (left.count() <= 0 || poll(&pfd, 1, static_cast<int>(left.count())) <= 0) {
      close(s);
      return Error{fmt::format("rank 0: only {} of {} ranks asked for the NCCL id within {:g} s", served, l.world_size,
                               limit_s)};
    }
    int c = accept(s, nullptr, nullptr);
    if (c < 0) {
      Error e{std::string("accept failed: ") + std::strerror(errno)};
      close(s);
      return e;
    }
    ssize_t w = write(c, id.data(), id.size());
    close(c);
    if (w != static_cast<ssize_t>(id.size())) {
      close(s);
      return Error{"sending the NCCL id failed"};
    }
  }
  close(s);
  return {};
}

// Any other rank: connect until rank 0 answers or the time is up, then read the whole id.
Status fetchId(const LaunchEnv& l, std::span<char> id, std::chrono::milliseconds timeout) {
  const std::string port = std::to_string(l.id_port);
  const char* addr = l.master_addr.c_str();
  addrinfo hints{}, *res = nullptr;
  hints.ai_family = AF_INET;
  hints.ai_socktype = SOCK_STREAM;
  if (getaddrinfo(addr, port.c_str(), &hints, &res) != 0 || !res)
    return Error{std::string("cannot resolve MASTER_ADDR ") + addr};
  auto deadline = std::chrono::steady_clock::now() + timeout;
  for (;;) {
    int s = socket(AF_INET, SOCK_STREAM, 0);
    if (connect(s, res->ai_addr, res->ai_addrlen) == 0) {
      size_t got = 0;
      while (got < id.size()) {
        ssize_t r = read(s, id.data() + got, id.size() - got);
        if (r <= 0) break;
        got += static_cast<size_t>(r);
      }
      close(s);
      freeaddrinfo(res);
      if (got != id.size()) return Error{"short read of the NCCL id from rank 0"};
      return {};
    }
    close(s);
    if (std::chrono::steady_clock::now() > deadline) {
      freeaddrinfo(res);
      return Error{fmt::format("rank {}: rank 0 at {}:{} did not answer within {:g} s", l.rank, addr, port,
                               static_cast<double>(timeout.count()) / 1000)};
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
  }
}

}  // namespace

Status exchangeId(const LaunchEnv& l, std::span<char> id, std::chrono::milliseconds timeout) {
  return l.rank == 0 ? serveId(l, id, timeout) : fetchId(l, id, timeout);
}

std::string hexBytes(std::span<const char> bytes) {
  std::string s;
  for (unsigned char c : bytes) s += fmt::format("{:02x}", c);
  return s;
}

bool unhexBytes(const std::string& s, std::span<char> bytes) {
  if (s.size() != 2 * bytes.size()) return false;
  for (size_t i = 0; i < bytes.size(); ++i) {
    unsigned v = 0;
    const char* p = s.data() + 2 * i;
    auto [end, ec] = std::from_chars(p, p + 2, v, 16);
    if (ec != std::errc() || end != p + 2) return false;
    bytes[i] = static_cast<char>(v);
  }
  return true;
}

}  // namespace gpudoctor
