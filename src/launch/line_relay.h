// Copies one child's output stream to the launcher's, a whole line at a time,
// each line prefixed with the process's label, so that lines of concurrent
// processes never interleave mid-line.
#pragma once

#include <string>

namespace tessera::launch {

class LineRelay {
 public:
  // Takes ownership of `source` (a non-blocking read end); writes to `sink`.
  LineRelay(int source, int sink, std::string prefix);
  ~LineRelay();
  LineRelay(LineRelay&& other) noexcept;
  LineRelay& operator=(LineRelay&&) = delete;
  LineRelay(const LineRelay&) = delete;
  LineRelay& operator=(const LineRelay&) = delete;

  int fd() const { return source_; }  // -1 once the stream has ended
  bool open() const { return source_ >= 0; }
  // Reads what is available and writes the complete lines; at end of stream
  // (or a read error) writes the partial last line too and closes.
  void pump();
  // Writes a partial last line and closes, without waiting for the writer.
  void finish();

 private:
  void emit_lines(bool all);

  int source_;
  int sink_;
  std::string prefix_;
  std::string pending_;  // bytes after the last newline
};

// write(2) until done; gives up silently on errors (the reader went away).
void write_all(int fd, const std::string& text);

}  // namespace tessera::launch
