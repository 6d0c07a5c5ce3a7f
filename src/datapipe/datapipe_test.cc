// Pack then read must give back every byte: odd names, empty and large files, nested folders; GNU tar
// must read the shards; an interrupted pack resumes to the same result; bad input is one clear error and
// never a finished-looking half-written shard.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <map>
#include <random>
#include <thread>

#include "datapipe/packer.h"
#include "datapipe/shard_reader.h"
#include "datapipe/tar_writer.h"

namespace gpudoctor {
namespace datapipe_test {
namespace fs = std::filesystem;

std::string slurp(const fs::path& p) {
  std::ifstream f(p, std::ios::binary);
  return std::string((std::istreambuf_iterator<char>(f)), {});
}

void put(const fs::path& p, const std::string& data) {
  fs::create_directories(p.parent_path());
  std::ofstream(p, std::ios::binary) << data;
}

std::string randomBytes(size_t n, uint64_t seed) {
  std::mt19937_64 g(seed);
  std::string s(n, '\0');
  for (auto& c : s) c = static_cast<char>(g());
  return s;
}

// A fresh temporary folder per test, removed afterwards.
struct TempDir {
  fs::path path;
  TempDir() {
    path = fs::temp_directory_path() / ("gpudoctor_dp_" + std::to_string(::getpid()) + "_" +
                                        ::testing::UnitTest::GetInstance()->current_test_info()->name());
    fs::remove_all(path);
    fs::create_directories(path);
  }
  ~TempDir() {
    std::error_code ec;
    fs::remove_all(path, ec);
  }
};

// The awkward tree: spaces, unicode, a path over 100 bytes, empty files, several MB, nested folders,
// multi-file samples.
std::map<std::string, std::string> makeTree(const fs::path& root) {
  std::map<std::string, std::string> files;
  std::string long_dir = std::string(60, 'd') + "/" + std::string(50, 'e');
  files["with space.txt"] = "hello world";
  files["ünïcødé/файл.bin"] = randomBytes(1000, 1);
  files[long_dir + "/very_long_file_name_" + std::string(40, 'x') + ".json"] = "{\"a\": 1}";
  files["empty.txt"] = "";
  files["zz/empty2.cls"] = "";
  files["big.bin"] = randomBytes(5 << 20, 2);
  files["a/b/c/d.json"] = "{}";
  for (int i = 0; i < 30; ++i) {
    std::string k = "samples/s" + std::to_string(1000 + i);
    files[k + ".jpg"] = randomBytes(3000 + i * 97, 10 + i);
    files[k + ".cls"] = std::to_string(i % 7);
  }
  files["samples/odd.name.with.dots.txt"] = "dots";
  for (const auto& [rel, data] : files) put(root / rel, data);
  return files;
}

bool haveTar() { return std::system("tar --version >/dev/null 2>&1") == 0; }

std::vector<std::string> listWithSuffix(const fs::path& dir, const std::string& suffix) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) {
    std::string n = e.path().filename().string();
    if (n.size() >= suffix.size() && n.compare(n.size() - suffix.size(), suffix.size(), suffix) == 0) out.push_back(n);
  }
  std::sort(out.begin(), out.end());
  return out;
}

TEST(Datapipe, SampleKeysFollowWebDataset) {
  EXPECT_EQ(sampleKey("a/b/c.tar.gz"), "a/b/c");
  EXPECT_EQ(sampleKey("s1.jpg"), "s1");
  EXPECT_EQ(sampleKey("dir.x/file"), "dir.x/file");
  EXPECT_EQ(sampleKey(".hidden"), ".hidden");
  EXPECT_EQ(sampleKey("d/.hidden.txt"), "d/.hidden");
}

TEST(Datapipe, TarHeaderUsesPaxOnlyForLongNames) {
  EXPECT_EQ(tarHeader("short.txt", 5, 0).size(), 512u);
  std::string h = tarHeader(std::string(150, 'n'), 5, 0);
  EXPECT_EQ(h.size(), 1536u);
  EXPECT_NE(h.find(" path=" + std::string(150, 'n') + "\n"), std::string::npos);
  // Past ustar's 11 octal digits (8 GiB) the size goes into a pax record.
  std::string huge = tarHeader("huge.bin", 10ull << 30, 0);
  EXPECT_EQ(huge.size(), 1536u);
  EXPECT_NE(huge.find(" size=10737418240\n"), std::string::npos);
  EXPECT_EQ(tarMemberBytes("huge.bin", 10ull << 30), 1536u + (10ull << 30));
  EXPECT_EQ(tarMemberBytes("x", 0), 512u);
  EXPECT_EQ(tarMemberBytes("x", 513), 512u + 1024u);
}

TEST(Datapipe, PackThenReadIsByteExact) {
  TempDir t;
  auto files = makeTree(t.path / "src");
  PackOptions opt;
  opt.shard_bytes = 64 << 10;
  opt.threads = 2;
  auto r = packDirectory((t.path / "src").string(), (t.path / "out").string(), opt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(r.value().files, files.size());
  EXPECT_GT(r.value().shards, 3u);
  auto set = ShardSet::open((t.path / "out").string());
  ASSERT_TRUE(set.ok()) << set.error().message;
  const auto& idx = set.value()->index();
  std::map<std::string, std::string> got;
  for (size_t s = 0; s < idx.shards.size(); ++s)
    for (size_t k = 0; k < idx.shards[s].members.size(); ++k)
      got[idx.shards[s].members[k].tar.name] = std::string(set.value()->member(s, k));
  EXPECT_EQ(got.size(), files.size());
  for (const auto& [rel, data] : files) {
    ASSERT_TRUE(got.count(rel)) << rel;
    EXPECT_TRUE(got[rel] == data) << rel;
  }
  EXPECT_TRUE(set.value()->verify().ok());
  // One sample, two files, reachable by key.
  auto s = set.value()->sample("samples/s1003");
  ASSERT_EQ(s.size(), 2u);
  EXPECT_EQ(set.value()->member(s[1].first, s[1].second), files["samples/s1003.jpg"]);
  EXPECT_TRUE(set.value()->sample("nope").empty());
  // The streaming loader delivers every byte, with several threads and small staging buffers.
  LoaderOptions lo;
  lo.threads = 3;
  lo.staging_bytes = 8192;
  lo.chunk_bytes = 16384;
  lo.verify_crc = true;
  uint64_t total = 0, expect = 0;
  for (const auto& [rel, data] : files) expect += data.size();
  auto st = streamShards(*set.value(), lo, [&](const char*, size_t n) { total += n; });
  ASSERT_TRUE(st.ok()) << st.error().message;
  EXPECT_EQ(total, expect);
  EXPECT_EQ(st.value().bytes, expect);
  EXPECT_EQ(st.value().members, files.size());
  // No temporaries left behind.
  EXPECT_TRUE(listWithSuffix(t.path / "out", ".tmp").empty());
}

TEST(Datapipe, GnuTarReadsTheShards) {
  if (!haveTar()) GTEST_SKIP() << "GNU tar is not installed";
  TempDir t;
  auto files = makeTree(t.path / "src");
  PackOptions opt;
  opt.shard_bytes = 128 << 10;
  ASSERT_TRUE(packDirectory((t.path / "src").string(), (t.path / "out").string(), opt).ok());
  fs::create_directories(t.path / "x");
  for (const auto& shard : listWithSuffix(t.path / "out", ".tar")) {
    std::string p = (t.path / "out" / shard).string();
    ASSERT_EQ(std::system(("tar -tf '" + p + "' >/dev/null").c_str()), 0) << shard;
    ASSERT_EQ(std::system(("tar -xf '" + p + "' -C '" + (t.path / "x").string() + "'").c_str()), 0) << shard;
  }
  size_t n = 0;
  for (const auto& e : fs::recursive_directory_iterator(t.path / "x")) {
    if (!e.is_regular_file()) continue;
    std::string rel = e.path().lexically_relative(t.path / "x").generic_string();
    ASSERT_TRUE(files.count(rel)) << rel;
    EXPECT_TRUE(slurp(e.path()) == files[rel]) << rel;
    ++n;
  }
  EXPECT_EQ(n, files.size());
}

TEST(Datapipe, DeterministicOrderAndSeededShuffle) {
  TempDir t;
  makeTree(t.path / "src");
  auto pack = [&](const std::string& out, int64_t seed, int threads) {
    PackOptions opt;
    opt.shard_bytes = 32 << 10;
    opt.shuffle_seed = seed;
    opt.threads = threads;
    EXPECT_TRUE(packDirectory((t.path / "src").string(), (t.path / out).string(), opt).ok());
    return slurp(t.path / out / "index.json");
  };
  std::string a = pack("a", -1, 1), b = pack("b", -1, 2), c = pack("c", 7, 2), d = pack("d", 7, 1), e = pack("e", 8, 1);
  EXPECT_EQ(a, b);
  EXPECT_EQ(c, d);
  EXPECT_NE(a, c);
  EXPECT_NE(c, e);
  for (const auto& s : listWithSuffix(t.path / "a", ".tar"))
    EXPECT_EQ(slurp(t.path / "a" / s), slurp(t.path / "b" / s));
  // Shuffled or not, the members of a sample stay together.
  auto idx = readShardIndex((t.path / "c").string());
  ASSERT_TRUE(idx.ok());
  std::map<std::string, size_t> shard_of;
  for (size_t s = 0; s < idx.value().shards.size(); ++s)
    for (const auto& m : idx.value().shards[s].members) {
      auto [it, fresh] = shard_of.emplace(m.key, s);
      EXPECT_EQ(it->second, s) << m.key;
    }
}

TEST(Datapipe, ResumeKeepsGoodShardsAndRewritesDamagedOnes) {
  TempDir t;
  makeTree(t.path / "src");
  PackOptions opt;
  opt.shard_bytes = 32 << 10;
  std::string src = (t.path / "src").string(), out = (t.path / "out").string();
  auto first = packDirectory(src, out, opt);
  ASSERT_TRUE(first.ok());
  std::string index = slurp(t.path / "out" / "index.json");
  auto shards = listWithSuffix(t.path / "out", ".tar");
  ASSERT_GT(shards.size(), 3u);
  std::string s0 = slurp(t.path / "out" / shards[0]), s1 = slurp(t.path / "out" / shards[1]);
  fs::remove(t.path / "out" / shards[0]);
  {  // flip one byte inside the second shard
    std::fstream f(t.path / "out" / shards[1], std::ios::in | std::ios::out | std::ios::binary);
    f.seekp(600);
    f.put('!');
  }
  auto second = packDirectory(src, out, opt);
  ASSERT_TRUE(second.ok()) << second.error().message;
  EXPECT_EQ(second.value().shards_written, 2u);
  EXPECT_EQ(second.value().shards_kept, shards.size() - 2);
  EXPECT_EQ(slurp(t.path / "out" / "index.json"), index);
  EXPECT_TRUE(slurp(t.path / "out" / shards[0]) == s0);
  EXPECT_TRUE(slurp(t.path / "out" / shards[1]) == s1);
}

TEST(Datapipe, RepackWithOtherSettingsLeavesNoStaleShards) {
  TempDir t;
  makeTree(t.path / "src");
  std::string src = (t.path / "src").string(), out = (t.path / "out").string();
  PackOptions opt;
  opt.shard_bytes = 16 << 10;
  ASSERT_TRUE(packDirectory(src, out, opt).ok());
  size_t many = listWithSuffix(out, ".tar").size();
  opt.shard_bytes = 1 << 20;
  auto refused = packDirectory(src, out, opt);  // another shard size: replacing the pack is asked for
  ASSERT_FALSE(refused.ok());
  EXPECT_NE(refused.error().message.find("--replace"), std::string::npos) << refused.error().message;
  EXPECT_EQ(listWithSuffix(out, ".tar").size(), many);  // nothing touched
  opt.replace = true;
  auto r = packDirectory(src, out, opt);
  ASSERT_TRUE(r.ok()) << r.error().message;
  EXPECT_EQ(listWithSuffix(out, ".tar").size(), r.value().shards);
  EXPECT_EQ(listWithSuffix(out, ".idx.json").size(), r.value().shards);
  EXPECT_EQ(r.value().stale_removed, 2 * (many - r.value().shards));
  EXPECT_TRUE(ShardSet::open(out).ok());
}

#ifdef GPUDOCTOR_BIN
// A pack killed with SIGKILL mid-way, then run again, gives exactly what an uninterrupted pack gives.
TEST(Datapipe, PackKilledMidwayResumesToTheSameResult) {
  TempDir t;
  makeTree(t.path / "src");
  std::string src = (t.path / "src").string(), out = (t.path / "out").string(), ref = (t.path / "ref").string();
  ASSERT_EQ(std::system((std::string(GPUDOCTOR_BIN) + " pack -q --shard-size 16K '" + src + "' '" + ref + "'").c_str()),
            0);
  pid_t pid = ::fork();
  if (pid == 0) {
    ::execl(GPUDOCTOR_BIN, GPUDOCTOR_BIN, "pack", "-q", "--shard-size", "16K", "--threads", "1", "--test-delay-ms",
            "100", src.c_str(), out.c_str(), static_cast<char*>(nullptr));
    _exit(127);
  }
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(30);
  while (std::chrono::steady_clock::now() < deadline) {
    if (fs::exists(out) && listWithSuffix(out, ".tar").size() >= 3) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  ::kill(pid, SIGKILL);
  int st = 0;
  ::waitpid(pid, &st, 0);
  ASSERT_TRUE(WIFSIGNALED(st)) << "the pack finished before it could be interrupted";
  EXPECT_FALSE(fs::exists(t.path / "out" / "index.json"));
  auto partial = listWithSuffix(out, ".tar");
  auto all = listWithSuffix(ref, ".tar");
  ASSERT_LT(partial.size(), all.size());
  // Whatever carries a finished name is complete: identical to the reference shard.
  for (const auto& s : partial) EXPECT_TRUE(slurp(t.path / "out" / s) == slurp(t.path / "ref" / s)) << s;
  ASSERT_EQ(std::system((std::string(GPUDOCTOR_BIN) + " pack -q --shard-size 16K '" + src + "' '" + out + "'").c_str()),
            0);
  EXPECT_EQ(listWithSuffix(out, ".tar"), all);
  EXPECT_TRUE(listWithSuffix(out, ".tmp").empty());
  for (const auto& s : all) EXPECT_TRUE(slurp(t.path / "out" / s) == slurp(t.path / "ref" / s)) << s;
  EXPECT_EQ(slurp(t.path / "out" / "index.json"), slurp(t.path / "ref" / "index.json"));
}
#endif

TEST(Datapipe, UnreadableFileIsNamed) {
  TempDir t;
  makeTree(t.path / "src");
  fs::path bad = t.path / "src" / "locked.bin";
  put(bad, "secret");
  ::chmod(bad.c_str(), 0);
  int fd = ::open(bad.c_str(), O_RDONLY);
  if (fd >= 0) {
    ::close(fd);
    GTEST_SKIP() << "running as root: chmod 000 does not block reads here";
  }
  auto r = packDirectory((t.path / "src").string(), (t.path / "out").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find(bad.string()), std::string::npos) << r.error().message;
  EXPECT_TRUE(listWithSuffix(t.path / "out", ".tar").empty());
}

TEST(Datapipe, DanglingLinkAndSpecialFilesAreNamed) {
  TempDir t;
  makeTree(t.path / "src");
  fs::create_symlink(t.path / "nowhere", t.path / "src" / "dangling.jpg");
  auto r = packDirectory((t.path / "src").string(), (t.path / "out").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("dangling.jpg: a dangling link"), std::string::npos) << r.error().message;
  PackOptions skip;
  skip.skip_bad = true;
  auto s = packDirectory((t.path / "src").string(), (t.path / "out_skip").string(), skip);
  ASSERT_TRUE(s.ok()) << s.error().message;
  ASSERT_EQ(s.value().skipped.size(), 1u);
  EXPECT_NE(s.value().skipped[0].find("dangling.jpg: a dangling link"), std::string::npos) << s.value().skipped[0];
  fs::remove(t.path / "src" / "dangling.jpg");
  ASSERT_EQ(::mkfifo((t.path / "src" / "pipe").c_str(), 0644), 0);
  r = packDirectory((t.path / "src").string(), (t.path / "out").string(), {});
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("pipe: not a regular file"), std::string::npos) << r.error().message;
}

TEST(Datapipe, FileChangingWhilePackedIsAnError) {
  TempDir t;
  makeTree(t.path / "src");
  fs::path victim = t.path / "src" / "samples" / "s1020.jpg";
  for (int mode = 0; mode < 2; ++mode) {
    PackOptions opt;
    opt.shard_bytes = 16 << 10;
    opt.after_plan = [&] {
      if (mode == 0)
        std::ofstream(victim, std::ios::app) << "more bytes";  // grows
      else
        fs::last_write_time(victim, fs::last_write_time(victim) + std::chrono::seconds(5));  // rewritten in place
    };
    auto r = packDirectory((t.path / "src").string(), (t.path / "out").string(), opt);
    ASSERT_FALSE(r.ok());
    EXPECT_NE(r.error().message.find(victim.string() + ": changed while being packed"), std::string::npos)
        << r.error().message;
    EXPECT_TRUE(listWithSuffix(t.path / "out", ".tmp").empty());
    EXPECT_FALSE(fs::exists(t.path / "out" / "index.json"));
    // Shards finished before the error are complete and verify; none holds the changed file.
    for (const auto& s : listWithSuffix(t.path / "out", ".tar")) {
      auto e = parseShardEntry(slurp(t.path / "out" / (s + ".idx.json")), s);
      ASSERT_TRUE(e.ok()) << s;
      EXPECT_EQ(e.value().bytes, fs::file_size(t.path / "out" / s));
    }
  }
}

TEST(Datapipe, NoSpaceLeftIsReported) {
  int fd = ::open("/dev/full", O_WRONLY);
  if (fd < 0) GTEST_SKIP() << "/dev/full is not available";
  TarWriter w(fd, "/dev/full");
  Status s = w.addBytes("a.txt", std::string(100000, 'a'), 0, nullptr);
  ::close(fd);
  ASSERT_FALSE(s.ok());
  EXPECT_NE(s.message().find("/dev/full: write failed: No space left on device"), std::string::npos) << s.message();
}

TEST(Datapipe, NoSpaceLeftOnASmallFilesystemLeavesNoShardLookingFinished) {
  TempDir t;
  makeTree(t.path / "src");
  fs::path mnt = t.path / "mnt";
  fs::create_directories(mnt);
  if (std::system(("mount -t tmpfs -o size=1m tmpfs '" + mnt.string() + "' 2>/dev/null").c_str()) != 0)
    GTEST_SKIP() << "cannot mount a small tmpfs here (needs root outside a restricted container)";
  PackOptions opt;
  opt.shard_bytes = 256 << 10;
  auto r = packDirectory((t.path / "src").string(), (mnt / "out").string(), opt);
  std::vector<std::string> tmp = listWithSuffix(mnt / "out", ".tmp");
  bool index = fs::exists(mnt / "out" / "index.json");
  std::vector<std::pair<std::string, bool>> shards;
  for (const auto& s : listWithSuffix(mnt / "out", ".tar")) {
    auto e = parseShardEntry(slurp(mnt / "out" / (s + ".idx.json")), s);
    shards.push_back({s, e.ok() && e.value().bytes == fs::file_size(mnt / "out" / s)});
  }
  std::system(("umount '" + mnt.string() + "'").c_str());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("No space left on device"), std::string::npos) << r.error().message;
  EXPECT_TRUE(tmp.empty());
  EXPECT_FALSE(index);
  for (const auto& [s, good] : shards) EXPECT_TRUE(good) << s;
}

TEST(Datapipe, DamagedShardsAndIndexesAreClearErrors) {
  TempDir t;
  makeTree(t.path / "src");
  PackOptions opt;
  opt.shard_bytes = 64 << 10;
  ASSERT_TRUE(packDirectory((t.path / "src").string(), (t.path / "out").string(), opt).ok());
  auto shards = listWithSuffix(t.path / "out", ".tar");
  fs::path s0 = t.path / "out" / shards[0];
  std::string good = slurp(s0);
  // Corrupt data: opens, but verification names the member.
  std::string bad = good;
  auto before = readShardIndex((t.path / "out").string());
  ASSERT_TRUE(before.ok());
  for (const auto& m : before.value().shards[0].members)
    if (m.tar.size_bytes > 0) {
      bad[m.tar.data_offset] ^= 0x55;
      break;
    }
  put(s0, bad);
  auto set = ShardSet::open((t.path / "out").string());
  ASSERT_TRUE(set.ok());
  Status v = set.value()->verify();
  ASSERT_FALSE(v.ok());
  EXPECT_NE(v.message().find(shards[0] + ": member"), std::string::npos) << v.message();
  EXPECT_NE(v.message().find("is corrupt"), std::string::npos);
  // Truncated shard.
  put(s0, good.substr(0, good.size() / 2));
  auto tr = ShardSet::open((t.path / "out").string());
  ASSERT_FALSE(tr.ok());
  EXPECT_NE(tr.error().message.find(shards[0] + ": truncated or replaced"), std::string::npos) << tr.error().message;
  put(s0, good);
  // Index: garbage, truncated JSON, a member outside its shard, another format.
  fs::path ip = t.path / "out" / "index.json";
  std::string idx = slurp(ip);
  put(ip, idx.substr(0, idx.size() / 2));
  auto r = ShardSet::open(ip.string());
  ASSERT_FALSE(r.ok());
  EXPECT_EQ(r.error().message, ip.string() + ": index is damaged: not valid JSON");
  std::string moved = idx;
  size_t at = moved.find("\"offset\": ");
  moved.replace(at, 10, "\"offset\": 99999999");
  put(ip, moved);
  r = ShardSet::open(ip.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("lies outside"), std::string::npos) << r.error().message;
  put(ip, "{\"format\": \"other\"}");
  r = ShardSet::open(ip.string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("not a gpudoctor shard index"), std::string::npos) << r.error().message;
  r = ShardSet::open((t.path / "missing").string());
  ASSERT_FALSE(r.ok());
  EXPECT_NE(r.error().message.find("cannot open"), std::string::npos);
}

}  // namespace datapipe_test
}  // namespace gpudoctor
