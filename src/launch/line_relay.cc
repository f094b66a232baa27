#include "line_relay.h"

#include <unistd.h>

#include <cerrno>
#include <utility>

namespace tessera::launch {
namespace {

// A "line" longer than this is cut, so a child that never writes a newline
// cannot make the launcher hold unbounded output.
constexpr size_t kMaxLine = 1 << 16;

}  // namespace

void write_all(int fd, const std::string& text) {
  size_t done = 0;
  while (done < text.size()) {
    const ssize_t n = ::write(fd, text.data() + done, text.size() - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return;
    done += static_cast<size_t>(n);
  }
}

LineRelay::LineRelay(int source, int sink, std::string prefix)
    : source_(source), sink_(sink), prefix_(std::move(prefix)) {}

LineRelay::~LineRelay() {
  if (source_ >= 0) ::close(source_);
}

LineRelay::LineRelay(LineRelay&& other) noexcept
    : source_(std::exchange(other.source_, -1)),
      sink_(other.sink_),
      prefix_(std::move(other.prefix_)),
      pending_(std::move(other.pending_)) {}

void LineRelay::pump() {
  if (source_ < 0) return;
  char buf[1 << 16];
  for (;;) {
    const ssize_t n = ::read(source_, buf, sizeof(buf));
    if (n > 0) {
      pending_.append(buf, static_cast<size_t>(n));
      emit_lines(false);
      continue;
    }
    if (n < 0 && errno == EINTR) continue;
    if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK)) return;
    finish();  // end of stream or an error
    return;
  }
}

void LineRelay::finish() {
  if (source_ < 0) return;
  emit_lines(true);
  ::close(source_);
  source_ = -1;
}

void LineRelay::emit_lines(bool all) {
  // One write for everything complete: other relays write whole lines too.
  std::string out;
  size_t start = 0;
  for (;;) {
    const size_t newline = pending_.find('\n', start);
    size_t end, next;
    if (newline != std::string::npos && newline - start < kMaxLine) {
      end = newline;
      next = newline + 1;
    } else if (pending_.size() - start >= kMaxLine) {
      end = next = start + kMaxLine;
    } else {
      break;
    }
    out += prefix_;
    out.append(pending_, start, end - start);
    out += '\n';
    start = next;
  }
  pending_.erase(0, start);
  if (all && !pending_.empty()) {
    out += prefix_ + pending_ + '\n';
    pending_.clear();
  }
  if (!out.empty()) write_all(sink_, out);
}

}  // namespace tessera::launch
