// POSIX shared-memory segments for the mutable tensors a machine's servers and trainers share. Names carry the
// job, the machine and the creating process: `/tessera.<job>.m<machine>.<pid>.<tensor>`, so that two jobs, or
// two "machines" of one job on one host, never collide, and a segment whose creator died can be recognised and
// removed.
//
// A SharedMemory owns one mapping (move-only): its destructor unmaps it but leaves the name, which stays until
// unlink() or a cleanup function removes it. The object has no locks; processes and threads that write the
// same bytes coordinate themselves (row locks). create() and attach() throw tessera::Error naming the segment
// (it exists, it is missing, /dev/shm too small, mmap failed); the cleanup and counting functions throw nothing
// for segments they cannot remove and return how many they handled.
#pragma once

#include <cstddef>
#include <string>

namespace tessera::store {

class SharedMemory {
 public:
  SharedMemory() = default;
  // Creates a zero-filled segment; fails if the name exists.
  static SharedMemory create(const std::string& name, size_t bytes);
  // Maps an existing segment read-write.
  static SharedMemory attach(const std::string& name);
  ~SharedMemory();
  SharedMemory(SharedMemory&& other) noexcept;
  SharedMemory& operator=(SharedMemory&& other) noexcept;
  SharedMemory(const SharedMemory&) = delete;
  SharedMemory& operator=(const SharedMemory&) = delete;

  void* data() const { return data_; }
  size_t size() const { return size_; }
  const std::string& name() const { return name_; }
  // Removes the name (mappings stay valid until unmapped).
  void unlink();

 private:
  std::string name_;
  void* data_ = nullptr;
  size_t size_ = 0;
};

// "/tessera.<job>.m<machine>.<pid>." : the prefix of a process's segments.
std::string segment_prefix(const std::string& job_id, int machine_id, int pid);
// Segment name for a tensor (characters outside [A-Za-z0-9_-] become '_').
std::string segment_name(const std::string& prefix, const std::string& tensor);

// Removes every segment of a job (the launcher's teardown); returns how many.
int remove_job_segments(const std::string& job_id);
// Removes segments whose creating process is gone (a crashed job's leftovers).
int remove_stale_segments();
// Segments of a job still present, for tests and the launcher.
int count_job_segments(const std::string& job_id);

}  // namespace tessera::store
