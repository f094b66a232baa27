// The job key file (net/security.h): what `tessera keygen` and the launcher
// write is what every process reads back, and any file that is not one, or
// that others may read, is refused naming the file and line.
#include <sys/stat.h>

#include <fstream>

#include <gtest/gtest.h>

#include "net/security.h"
#include "tessera/base/error.h"
#include "test_util.h"

namespace tessera::net {
namespace {

std::string error_of(const std::string& path) {
  try {
    read_key_file(path);
  } catch (const Error& e) {
    return e.what();
  }
  return "";
}

TEST(KeyFile, WrittenKeysReadBackWithMode0600) {
  testing::TempDir dir;
  const JobKeys keys = generate_job_keys();
  write_key_file(dir / "job.key", keys);
  struct stat st {};
  ASSERT_EQ(::stat((dir / "job.key").c_str(), &st), 0);
  EXPECT_EQ(st.st_mode & 0777, 0600u);
  const JobKeys back = read_key_file(dir / "job.key");
  EXPECT_EQ(back.public_key, keys.public_key);
  EXPECT_EQ(back.secret_key, keys.secret_key);
  EXPECT_EQ(back.token, keys.token);
  EXPECT_NE(generate_job_keys().secret_key, keys.secret_key);  // fresh per job
}

TEST(KeyFile, BadFilesAreRefusedWithTheirLine) {
  testing::TempDir dir;
  const JobKeys keys = generate_job_keys();
  const JobKeys other = generate_job_keys();
  auto write = [&](const std::string& name, const std::string& text, mode_t mode = 0600) {
    const std::string path = dir / name;
    std::ofstream(path) << text;
    ::chmod(path.c_str(), mode);
    return path;
  };
  const std::string open = write("open.key", key_file_text(keys), 0640);
  EXPECT_NE(error_of(open).find(open + " may be read by other users (mode 640)"), std::string::npos) << error_of(open);
  const std::string short_key = write("short.key", "public abc\n");
  EXPECT_NE(error_of(short_key).find(short_key + ":1: expected '<public|secret|token> <40 Z85 characters>'"),
            std::string::npos) << error_of(short_key);
  const std::string unknown = write("unknown.key", key_file_text(keys) + "extra " + keys.token + "\n");
  EXPECT_NE(error_of(unknown).find(unknown + ":4: unknown entry 'extra'"), std::string::npos) << error_of(unknown);
  const std::string missing = write("missing.key", "public " + keys.public_key + "\nsecret " + keys.secret_key + "\n");
  EXPECT_NE(error_of(missing).find("lacks the job's token"), std::string::npos) << error_of(missing);
  const std::string mixed = write("mixed.key", "public " + other.public_key + "\nsecret " + keys.secret_key +
                                                   "\ntoken " + keys.token + "\n");
  EXPECT_NE(error_of(mixed).find("the public key does not belong to the secret key"), std::string::npos)
      << error_of(mixed);
  EXPECT_NE(error_of(dir / "absent.key").find("cannot read the job's key file"), std::string::npos);
}

}  // namespace
}  // namespace tessera::net
