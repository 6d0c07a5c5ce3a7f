#include "common/atomic_file.h"

#include <gtest/gtest.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>

namespace gpudoctor {
namespace {
namespace fs = std::filesystem;

fs::path scratch() {
  fs::path d = fs::temp_directory_path() / ("gpudoctor_atomic_" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

TEST(AtomicFile, ARegularFileIsReplacedWhole) {
  const fs::path d = scratch();
  ASSERT_TRUE(writeFileAtomic((d / "a.json").string(), "old").ok());
  ASSERT_TRUE(writeFileAtomic((d / "a.json").string(), "new").ok());
  EXPECT_EQ(readWholeFile((d / "a.json").string()).value(), "new");
  EXPECT_EQ(std::distance(fs::directory_iterator(d), fs::directory_iterator()), 1);  // no temporary left
  fs::remove_all(d);
}

// A device or a pipe is written in place: renaming over /dev/null made it a regular file for every
// process on the machine.
TEST(AtomicFile, ADeviceOrAPipeIsWrittenInPlaceNotReplaced) {
  ASSERT_TRUE(writeFileAtomic("/dev/null", "{}").ok());
  struct stat st {};
  ASSERT_EQ(::stat("/dev/null", &st), 0);
  EXPECT_TRUE(S_ISCHR(st.st_mode));
  const fs::path d = scratch();
  const fs::path fifo = d / "fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  const pid_t reader = ::fork();
  ASSERT_GE(reader, 0);
  if (reader == 0) {
    const auto got = readWholeFile(fifo.string());
    ::_exit(got.ok() && got.value() == "through the pipe" ? 0 : 1);
  }
  ASSERT_TRUE(writeFileAtomic(fifo.string(), "through the pipe").ok());
  int status = -1;
  ASSERT_EQ(::waitpid(reader, &status, 0), reader);
  EXPECT_TRUE(WIFEXITED(status) && WEXITSTATUS(status) == 0);
  EXPECT_TRUE(fs::is_fifo(fifo));
  EXPECT_FALSE(writeFileAtomic(d.string(), "x").ok());  // a directory: an error, nothing replaced
  EXPECT_TRUE(fs::is_directory(d));
  fs::remove_all(d);
}

TEST(AtomicFile, ASymlinksTargetIsReplacedAndTheLinkKept) {
  const fs::path d = scratch();
  ASSERT_TRUE(writeFileAtomic((d / "real.json").string(), "old").ok());
  fs::create_symlink(d / "real.json", d / "link.json");
  ASSERT_TRUE(writeFileAtomic((d / "link.json").string(), "new").ok());
  EXPECT_TRUE(fs::is_symlink(d / "link.json"));
  EXPECT_EQ(readWholeFile((d / "real.json").string()).value(), "new");
  fs::remove_all(d);
}

}  // namespace
}  // namespace gpudoctor
