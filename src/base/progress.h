// A progress bar for long commands: "partition: write [=========>      ] 5/8 62% 1.2/s ETA 0:03" redrawn in
// place on a terminal, and nothing at all otherwise, so that logs, pipes and the launcher's relayed output see
// only the lines they always saw.
//
// A bar with a total shows the fraction, the rate and the time left; one without (a phase whose length nobody
// knows, such as a METIS call) shows the time it has taken so far. A ticker thread redraws it a few times a
// second, so a phase blocked in a library call still moves; add() and set() only store a count and may be
// called from any thread (OpenMP loops included). The destructor erases the bar. Output printed while a bar is
// shown must go through print_above(), which takes the line the bar is on.
#pragma once

#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>

namespace tessera {

class Progress {
 public:
  // `total` 0: no total known. `start`: the count already done, which the
  // rate leaves out. `show` false (or `stream` not a terminal, or
  // TESSERA_PROGRESS=0): every call does nothing.
  Progress(std::string label, int64_t total, std::FILE* stream = stderr, bool show = true, int64_t start = 0);
  ~Progress();
  Progress(const Progress&) = delete;
  Progress& operator=(const Progress&) = delete;

  void add(int64_t n);
  void set(int64_t done);
  // Prints `text` (ending in a newline) on `stream` with the bar out of its way, then draws the bar again;
  // without a bar, just prints it.
  void print_above(const std::string& text);
  bool shown() const { return impl_ != nullptr; }

  // Whether bars are drawn on `stream`: a terminal that is not "dumb", unless TESSERA_PROGRESS=0.
  static bool enabled(std::FILE* stream);
  // The bar's text for these figures (no control characters): what a terminal shows; the rate counts what was
  // done after `start`.
  static std::string render(const std::string& label, int64_t done, int64_t total, double elapsed_s,
                            int64_t start = 0);

 private:
  struct Impl;
  std::FILE* stream_;
  std::unique_ptr<Impl> impl_;
};

}  // namespace tessera
