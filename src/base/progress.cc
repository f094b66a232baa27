#include "base/progress.h"

#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <thread>

#include <fmt/format.h>

#include "tessera/base/timer.h"

namespace tessera {
namespace {

constexpr auto kRedraw = std::chrono::milliseconds(200);
constexpr int kBarWidth = 24;

// 950, 12.3k, 4.56M: counts as a person reads them (three digits or so).
std::string human(double x) {
  const char* suffix = "";
  if (x >= 1e9) x /= 1e9, suffix = "G";
  else if (x >= 1e6) x /= 1e6, suffix = "M";
  else if (x >= 1e4) x /= 1e3, suffix = "k";
  else return fmt::format("{:.0f}", x);
  return x >= 100 ? fmt::format("{:.0f}{}", x, suffix) : x >= 10 ? fmt::format("{:.1f}{}", x, suffix)
                                                               : fmt::format("{:.2f}{}", x, suffix);
}

// The terminal's width, so that a bar never wraps (a wrapped line cannot be
// redrawn in place); 80 when it cannot be read.
size_t terminal_width(std::FILE* stream) {
  winsize size{};
  if (::ioctl(::fileno(stream), TIOCGWINSZ, &size) == 0 && size.ws_col > 1) return size.ws_col - 1;
  return 79;
}

std::string clock_time(double seconds) {
  const auto s = static_cast<int64_t>(seconds + 0.5);
  return s >= 3600 ? fmt::format("{}:{:02d}:{:02d}", s / 3600, s / 60 % 60, s % 60) : fmt::format("{}:{:02d}", s / 60, s % 60);
}

}  // namespace

struct Progress::Impl {
  std::string label;
  int64_t total, start;
  std::FILE* stream;
  Timer timer;
  std::atomic<int64_t> done{0};
  std::mutex mutex;  // the terminal line, and `stop`
  std::condition_variable wake;
  bool stop = false;
  std::thread ticker;

  size_t width = 79;

  // std::fputs, not fmt::print: a terminal that went away must not throw on
  // the ticker thread; the bar is a courtesy and its failures are ignored.
  void draw_locked() {
    std::string text = render(label, done.load(), total, timer.seconds(), start);
    if (text.size() > width) text.resize(width);
    std::fputs(("\r\033[K" + text).c_str(), stream);
    std::fflush(stream);
  }
  void erase_locked() {
    std::fputs("\r\033[K", stream);
    std::fflush(stream);
  }
  void tick() {
    std::unique_lock<std::mutex> lock(mutex);
    while (!wake.wait_for(lock, kRedraw, [this] { return stop; })) draw_locked();
    erase_locked();
  }
};

bool Progress::enabled(std::FILE* stream) {
  const char* setting = std::getenv("TESSERA_PROGRESS");
  if (setting != nullptr && std::strcmp(setting, "0") == 0) return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return ::isatty(::fileno(stream)) != 0;
}

std::string Progress::render(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                             int64_t start) {
  if (total <= 0)
    return done > 0 ? fmt::format("{} {} in {:.1f}s", label, human(static_cast<double>(done)), elapsed_s)
                    : fmt::format("{} {:.1f}s", label, elapsed_s);
  done = std::clamp<int64_t>(done, 0, total);
  const double fraction = static_cast<double>(done) / static_cast<double>(total);
  const int filled = static_cast<int>(kBarWidth * fraction);
  std::string bar = std::string(filled, '=') + (filled < kBarWidth ? ">" : "");
  bar.resize(kBarWidth, ' ');
  const double rate = elapsed_s > 0 ? std::max<int64_t>(0, done - start) / elapsed_s : 0;
  const std::string eta = done >= total ? "done" : rate > 0 ? "ETA " + clock_time((total - done) / rate) : "ETA ?";
  return fmt::format("{} [{}] {}/{} {:.0f}% {}/s {}", label, bar, human(static_cast<double>(done)),
                     human(static_cast<double>(total)), 100 * fraction, human(rate), eta);
}

Progress::Progress(std::string label, int64_t total, std::FILE* stream, bool show, int64_t start)
    : stream_(stream) {
  if (!show || !enabled(stream)) return;
  impl_ = std::make_unique<Impl>();
  impl_->label = std::move(label);
  impl_->total = total;
  impl_->start = start;
  impl_->done = start;
  impl_->stream = stream;
  impl_->width = terminal_width(stream);
  impl_->draw_locked();  // at once, however short the phase; the ticker redraws from here
  impl_->ticker = std::thread([impl = impl_.get()] { impl->tick(); });
}

Progress::~Progress() {
  if (!impl_) return;
  {
    std::lock_guard<std::mutex> lock(impl_->mutex);
    impl_->stop = true;
  }
  impl_->wake.notify_one();
  impl_->ticker.join();
}

void Progress::add(int64_t n) {
  if (impl_) impl_->done.fetch_add(n, std::memory_order_relaxed);
}

void Progress::set(int64_t done) {
  if (impl_) impl_->done.store(done, std::memory_order_relaxed);
}

void Progress::print_above(const std::string& text) {
  if (!impl_) {
    std::fputs(text.c_str(), stream_);
    std::fflush(stream_);
    return;
  }
  std::lock_guard<std::mutex> lock(impl_->mutex);
  impl_->erase_locked();
  std::fputs(text.c_str(), impl_->stream);
  impl_->draw_locked();
}

}  // namespace tessera
