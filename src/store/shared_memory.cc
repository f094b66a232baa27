#include "tessera/store/shared_memory.h"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cctype>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <utility>

#include "tessera/base/error.h"
#include "tessera/base/process.h"

namespace tessera::store {
namespace {

constexpr const char* kShmDir = "/dev/shm";
constexpr const char* kPrefix = "tessera.";

void* map_fd(int fd, size_t bytes, const std::string& name) {
  if (bytes == 0) return nullptr;
  void* data = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
  if (data == MAP_FAILED) fail("shared memory {}: mmap of {} bytes failed: {}", name, bytes, std::strerror(errno));
  return data;
}

// Pid in "tessera.<job>.m<machine>.<pid>.<tensor>", or -1.
int owner_pid(const std::string& file_name) {
  size_t dots[4];
  size_t pos = 0;
  for (size_t& d : dots) {
    d = file_name.find('.', pos);
    if (d == std::string::npos) return -1;
    pos = d + 1;
  }
  const std::string pid = file_name.substr(dots[2] + 1, dots[3] - dots[2] - 1);
  if (pid.empty() || pid.find_first_not_of("0123456789") != std::string::npos) return -1;
  return std::atoi(pid.c_str());
}

template <typename Pred>
int for_each_segment(Pred&& remove_if) {
  int count = 0;
  std::error_code ec;
  for (const auto& entry : std::filesystem::directory_iterator(kShmDir, ec)) {
    const std::string name = entry.path().filename().string();
    if (name.rfind(kPrefix, 0) != 0 || !remove_if(name)) continue;
    ++count;
  }
  return count;
}

}  // namespace

SharedMemory SharedMemory::create(const std::string& name, size_t bytes) {
  const int fd = ::shm_open(name.c_str(), O_CREAT | O_EXCL | O_RDWR, 0600);
  if (fd < 0) fail("cannot create shared memory {}: {}", name, std::strerror(errno));
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0) {
    const int err = errno;
    ::close(fd);
    ::shm_unlink(name.c_str());
    fail("cannot size shared memory {} to {} bytes: {} (is /dev/shm large enough?)", name, bytes,
         std::strerror(err));
  }
  SharedMemory shm;
  shm.name_ = name;
  shm.size_ = bytes;
  try {
    shm.data_ = map_fd(fd, bytes, name);
  } catch (...) {
    ::close(fd);
    ::shm_unlink(name.c_str());
    throw;
  }
  ::close(fd);
  return shm;
}

SharedMemory SharedMemory::attach(const std::string& name) {
  const int fd = ::shm_open(name.c_str(), O_RDWR, 0600);
  if (fd < 0) fail("cannot open shared memory {}: {}", name, std::strerror(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    ::close(fd);
    fail("cannot stat shared memory {}: {}", name, std::strerror(errno));
  }
  SharedMemory shm;
  shm.name_ = name;
  shm.size_ = static_cast<size_t>(st.st_size);
  try {
    shm.data_ = map_fd(fd, shm.size_, name);
  } catch (...) {
    ::close(fd);
    throw;
  }
  ::close(fd);
  return shm;
}

SharedMemory::~SharedMemory() {
  if (data_ != nullptr) ::munmap(data_, size_);
}

SharedMemory::SharedMemory(SharedMemory&& other) noexcept
    : name_(std::move(other.name_)), data_(std::exchange(other.data_, nullptr)), size_(std::exchange(other.size_, 0)) {}

SharedMemory& SharedMemory::operator=(SharedMemory&& other) noexcept {
  if (this != &other) {
    if (data_ != nullptr) ::munmap(data_, size_);
    name_ = std::move(other.name_);
    data_ = std::exchange(other.data_, nullptr);
    size_ = std::exchange(other.size_, 0);
  }
  return *this;
}

void SharedMemory::unlink() {
  if (!name_.empty()) ::shm_unlink(name_.c_str());
}

std::string segment_prefix(const std::string& job_id, int machine_id, int pid) {
  return "/" + std::string(kPrefix) + job_id + ".m" + std::to_string(machine_id) + "." + std::to_string(pid) + ".";
}

std::string segment_name(const std::string& prefix, const std::string& tensor) {
  std::string name = prefix;
  for (char c : tensor) name += std::isalnum(static_cast<unsigned char>(c)) || c == '_' || c == '-' ? c : '_';
  if (name.size() > 250) fail("shared-memory name for tensor '{}' is too long", tensor);
  return name;
}

int remove_job_segments(const std::string& job_id) {
  const std::string prefix = std::string(kPrefix) + job_id + ".";
  return for_each_segment([&](const std::string& name) {
    return name.rfind(prefix, 0) == 0 && ::shm_unlink(("/" + name).c_str()) == 0;
  });
}

int remove_stale_segments() {
  return for_each_segment([](const std::string& name) {
    const int pid = owner_pid(name);
    return pid > 0 && !process_alive(pid) && ::shm_unlink(("/" + name).c_str()) == 0;
  });
}

int count_job_segments(const std::string& job_id) {
  const std::string prefix = std::string(kPrefix) + job_id + ".";
  return for_each_segment([&](const std::string& name) { return name.rfind(prefix, 0) == 0; });
}

}  // namespace tessera::store
